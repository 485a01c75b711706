// The interactive answer to a permission or question request on a terminal:
// the request's prompt and details, its numbered options, and a line read from
// the keyboard (a number, an option id or label, or free text when the
// question allows it). End of input gives no answer.
import { createInterface } from "node:readline/promises";
import type { Writer } from "./output.js";
import { questionChoice, type InputChoice, type InputRequest } from "./inputs.js";

export interface PromptIo {
  stdin: NodeJS.ReadableStream;
  /** Where the prompt is drawn (the terminal). */
  stderr: Writer;
}

export function describeRequest(request: InputRequest): string {
  const lines = [`? ${request.prompt}`];
  if (request.kind === "permission") {
    const facts = [request.toolName, request.effect, request.target].filter(Boolean).join(" · ");
    if (facts) lines.push(`  ${facts}`);
    if (request.safeSummary) lines.push(`  ${request.safeSummary}`);
  }
  request.options.forEach((option, i) => {
    lines.push(
      `  ${i + 1}) ${option.label || option.id}${option.description ? ` - ${option.description}` : ""}`,
    );
  });
  if (request.kind === "ask_user_question" && request.allowFreeText) {
    lines.push(`  or type ${request.freeTextPrompt ? `${request.freeTextPrompt} ` : "your answer"}`);
  }
  return `${lines.join("\n")}\n`;
}

export async function promptForInput(request: InputRequest, io: PromptIo): Promise<InputChoice | undefined> {
  io.stderr.write(describeRequest(request));
  // No output stream: the terminal echoes what is typed, and the prompt goes through io.stderr
  // (which masks secrets) like everything else.
  const rl = createInterface({ input: io.stdin, terminal: false });
  const closed = new AbortController();
  rl.once("close", () => closed.abort());
  const range = request.options.length > 0 ? ` [1-${request.options.length}]` : "";
  const retry =
    request.kind === "ask_user_question" && request.allowFreeText
      ? "Please choose one of the options or type an answer.\n"
      : "Please choose one of the options.\n";
  try {
    for (;;) {
      io.stderr.write(`Answer${range}: `);
      let line: string;
      try {
        line = await rl.question("", { signal: closed.signal });
      } catch {
        return undefined;
      }
      const choice = questionChoice(request, line);
      if (choice) return choice;
      io.stderr.write(retry);
    }
  } finally {
    rl.close();
  }
}
