// One conversation turn of `call` or `answer`: send (SendMessage, or
// SendStreamingMessage with --stream), show what comes back, and when the turn
// stops on an iac-code permission or question request either ask on the
// terminal and send the answer (then keep going), or print the request and
// return the input-required exit code.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { pb } from "../../contract/index.js";
import type { A2aClient } from "../../a2a/client/client.js";
import { EXIT, type ExitCode } from "../../a2a/client/errors.js";
import { answerRequest, inputRequestOf, type InputChoice, type InputRequest } from "./inputs.js";
import { shellWord, type Writer } from "./output.js";
import type { TurnRenderer } from "./render.js";

export type SendParams = MessageInitShape<typeof pb.SendMessageRequestSchema>;

export interface TurnOptions {
  stream: boolean;
  renderer: TurnRenderer;
  /** Asks the user; absent when nobody can answer here (not a terminal, or --output json). */
  ask?: (request: InputRequest) => Promise<InputChoice | undefined>;
  stderr: Writer;
  /** The URL the user gave, for the `answer` hint. */
  url: string;
  /** Input ids already answered: a stream that continues a turn starts with the old request. */
  answered?: string[];
}

export async function runTurn(client: A2aClient, first: SendParams, options: TurnOptions): Promise<ExitCode> {
  const answered = new Set(options.answered);
  /** A request still to answer (not one this run already answered). */
  const open = (request: InputRequest | undefined) =>
    request && !answered.has(request.inputId) ? request : undefined;
  let params = first;
  for (;;) {
    const request = options.stream
      ? await streamed(client, params, options, open)
      : open(await unary(client, params, options));
    options.renderer.settle();
    if (!request) return EXIT.ok;
    const choice = options.ask ? await options.ask(request) : undefined;
    if (!choice) {
      options.renderer.inputRequired(request);
      options.stderr.write(answerHint(request, options.url));
      return EXIT.inputRequired;
    }
    answered.add(request.inputId);
    params = answerRequest(request, choice);
  }
}

async function unary(
  client: A2aClient,
  params: SendParams,
  options: TurnOptions,
): Promise<InputRequest | undefined> {
  options.renderer.waiting();
  const reply = await client.unary(pb.A2AService.method.sendMessage, params);
  options.renderer.reply(reply);
  const task = reply.payload.case === "task" ? reply.payload.value : undefined;
  return task ? inputRequestOf(task.status?.state, task.metadata) : undefined;
}

/** Reads the stream until it ends, or until an open input request (then stops reading it). */
async function streamed(
  client: A2aClient,
  params: SendParams,
  options: TurnOptions,
  open: (request: InputRequest | undefined) => InputRequest | undefined,
): Promise<InputRequest | undefined> {
  options.renderer.waiting();
  for await (const event of client.stream(pb.A2AService.method.sendStreamingMessage, params)) {
    options.renderer.event(event);
    const { payload } = event;
    const request = open(
      payload.case === "statusUpdate" || payload.case === "task"
        ? inputRequestOf(payload.value.status?.state, payload.value.metadata)
        : undefined,
    );
    if (request) return request;
  }
  return undefined;
}

function answerHint(request: InputRequest, url: string): string {
  const how =
    request.kind === "permission"
      ? `--decision <${request.options.map((option) => option.id).join("|")}>`
      : `--answer ${request.options.length > 0 ? "<option id>" : "<text>"}`;
  return (
    `Input required (${request.kind}): ${request.prompt}\n` +
    `Continue with: iac-code a2a-client answer --url ${shellWord(url)} --task-id ${shellWord(request.requestTaskId)} ` +
    `--input-id ${shellWord(request.inputId)} ${how}\n`
  );
}
