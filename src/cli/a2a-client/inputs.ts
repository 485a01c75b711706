// Human input over A2A as iac-code defines it: a TASK_STATE_INPUT_REQUIRED
// status (or task) carrying metadata.iac_code.input (a2a/input-request), and
// the answer: a message on the same task with one application/json data part
// (a2a/input-answer). Other agents' INPUT_REQUIRED has no envelope and simply
// ends the turn.
import { randomUUID } from "node:crypto";
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import {
  decodeProtoJson,
  parseInputAnswer,
  parseInputRequest,
  pb,
  type InputAnswer,
  type InputRequest,
} from "../../contract/index.js";
import { ClientError, UsageError } from "../../a2a/client/errors.js";

export type { InputRequest };

/** What the user chose: a permission decision, a question option, or free text. */
export type InputChoice = { decision: string } | { selectedId: string } | { freeText: string };

/** The envelope of a waiting task or status update, when it carries a valid one. */
export function inputRequestOf(
  state: pb.TaskState | undefined,
  metadata: JsonObject | undefined,
): InputRequest | undefined {
  if (state !== pb.TaskState.INPUT_REQUIRED) return undefined;
  const iac = metadata?.iac_code;
  const input = iac && typeof iac === "object" && !Array.isArray(iac) ? iac.input : undefined;
  if (input === undefined) return undefined;
  const parsed = parseInputRequest(input);
  return parsed.ok ? parsed.value : undefined;
}

/** SendMessage params answering `request` (taskId = requestTaskId, same context, one data part). */
export function answerRequest(
  request: InputRequest,
  choice: InputChoice,
): MessageInitShape<typeof pb.SendMessageRequestSchema> {
  const data = {
    schemaVersion: 1,
    kind: request.kind,
    requestTaskId: request.requestTaskId,
    inputId: request.inputId,
    toolUseId: request.toolUseId,
    ...choice,
  };
  const checked = parseInputAnswer(data);
  if (!checked.ok) {
    throw new ClientError(
      `This answer does not fit the request: ${checked.errors.map((e) => e.message).join("; ")}`,
    );
  }
  const answer: InputAnswer = checked.value;
  return {
    message: decodeProtoJson(pb.MessageSchema, {
      messageId: randomUUID(),
      role: "ROLE_USER",
      taskId: request.requestTaskId,
      contextId: request.contextId,
      parts: [{ mediaType: "application/json", data: answer }],
    }),
  };
}

const optionIds = (request: InputRequest): string[] => request.options.map((option) => option.id);

/** The choice `answer --decision/--answer` names, checked against what the request offers. */
export function choiceFromFlags(
  request: InputRequest,
  flags: { decision?: string; answer?: string },
): InputChoice {
  if (request.kind === "permission") {
    if (flags.answer !== undefined && flags.decision === undefined) {
      throw new UsageError(`Input ${request.inputId} is a permission request: answer it with --decision.`);
    }
    if (!flags.decision) {
      throw new UsageError(
        `--decision is required for a permission request (${optionIds(request).join(", ")}).`,
      );
    }
    if (!optionIds(request).includes(flags.decision)) {
      throw new UsageError(
        `Decision '${flags.decision}' is not offered; choose one of ${optionIds(request).join(", ")}.`,
      );
    }
    return { decision: flags.decision };
  }
  if (flags.answer === undefined || flags.answer.trim() === "") {
    throw new UsageError(`--answer is required for a question (an option id, or free text when allowed).`);
  }
  return questionChoice(request, flags.answer) ?? refuse(request, flags.answer);
}

/** An option by id, label or 1-based number; else free text when the question allows it. */
export function questionChoice(request: InputRequest, text: string): InputChoice | undefined {
  const wanted = text.trim();
  const index = /^\d+$/.test(wanted) ? Number(wanted) - 1 : -1;
  const option =
    request.options[index] ??
    request.options.find((o) => o.id === wanted || o.label.toLowerCase() === wanted.toLowerCase());
  if (option) return request.kind === "permission" ? { decision: option.id } : { selectedId: option.id };
  if (request.kind === "ask_user_question" && request.allowFreeText && wanted !== "")
    return { freeText: wanted };
  return undefined;
}

function refuse(request: InputRequest, text: string): never {
  throw new UsageError(
    `'${text}' is not one of the options (${optionIds(request).join(", ")}) and this question takes no free text.`,
  );
}
