// A message's path through the server runs one way: the binding decodes it,
// admission (here) checks it and decides what it is, turns.ts starts the new
// turn or hands over the answer, execution.ts runs the turn, and the store
// keeps what the client is told. Admission validates the message, finds the
// task and context it names, resolves the workspace and splits the per-turn
// settings: what the task may keep (the message without secrets, the
// language, the names of the credentials) from what lives only for the turn
// (the runtime overrides, secrets included). Errors thrown here come before
// any event; a "refused" admission becomes a task that fails at once.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { pb } from "../../../contract/index.js";
import { resolveLanguage, t, type Language } from "../../../i18n/index.js";
import type { TurnImage, TurnOverrides } from "../../../runtime/seam.js";
import type { ContextRecord } from "../../stores/state.js";
import type { CallContext } from "../request/call-context.js";
import { A2AError, invalidParams, taskAlreadyWorking, taskNotFound } from "../request/errors.js";
import { isValidA2aId, newId } from "../request/ids.js";
import { looksLikeAnswer, parseAnswer, type ParsedAnswer } from "./input-answer.js";
import { ingestParts, type MediaTypes } from "./parts.js";
import { credentialNamesOf, storableMessage } from "../request/request-secrets.js";
import { checkRequiredExtensions } from "../request/service-params.js";
import { iacCode, isTerminal, TaskRecord } from "../task-record.js";
import { preferredLanguageOf, turnOverridesFrom } from "./turn-overrides.js";
import { CWD_FIELD, resolveWorkspace } from "./workspace.js";

export interface AdmissionDeps {
  closing(): boolean;
  requiredExtensions: readonly string[];
  /** The caller's task: live while its turn runs, else stored. */
  findTask(taskId: string, owner: string): Promise<TaskRecord | undefined>;
  isRunning(taskId: string): boolean;
  /** The runtime's refusal of a turn's settings (e.g. an unknown pipeline), before any task exists. */
  checkTurn?(overrides: TurnOverrides): string | undefined;
  /** The context in memory or stored; undefined when unknown. */
  findContext(contextId: string): Promise<{ record: ContextRecord } | undefined>;
  defaultCwd: string;
  allowedRoots: readonly string[];
  mediaTypes: MediaTypes;
}

/** What every admitted message carries. */
interface Admitted {
  record: TaskRecord;
  /** The message as the task keeps it: stamped with its ids, secrets removed. */
  message: pb.Message;
  language: Language;
}

/** Settings of one turn: overrides (secrets included) for the runtime only, credential names for the store. */
export interface TurnSettings {
  overrides: TurnOverrides;
  credentialNames: string[];
}

export type Admission =
  | (Admitted & {
      kind: "turn";
      cwd: string;
      input: { text: string; images: TurnImage[] };
      settings: TurnSettings;
    })
  | (Admitted & { kind: "answer"; answer: ParsedAnswer; settings: TurnSettings })
  /** A message to a task whose turn runs: a pipeline run may take it (a choice, an interruption). */
  | (Admitted & { kind: "interject"; input: { text: string; images: TurnImage[] }; settings: TurnSettings })
  /** A task that fails at once (busy context, bad workspace, empty input): the i18n key says why. */
  | (Admitted & { kind: "refused"; key: string; params?: Record<string, string> });

function checkMessage(message: pb.Message | undefined): asserts message is pb.Message {
  if (!message) throw invalidParams("message is required", { field: "message" });
  if (!message.messageId)
    throw invalidParams("message.messageId is required", { field: "message.messageId" });
  if (message.role === pb.Role.UNSPECIFIED)
    throw invalidParams("message.role is required", { field: "message.role" });
  if (message.parts.length === 0)
    throw invalidParams("message.parts must not be empty", { field: "message.parts" });
  for (const id of [message.contextId, message.taskId]) {
    if (id && !isValidA2aId(id)) throw invalidParams("Invalid A2A id");
  }
}

export async function admit(
  request: pb.SendMessageRequest,
  ctx: CallContext,
  deps: AdmissionDeps,
): Promise<Admission> {
  if (deps.closing()) throw new A2AError("UnsupportedOperationError", "The server is shutting down.");
  checkRequiredExtensions(deps.requiredExtensions, ctx.requestedExtensions);
  const message = request.message;
  checkMessage(message);
  const meta = iacCode(message.metadata);
  const language = resolveLanguage(preferredLanguageOf(meta), ctx.acceptLanguage);
  const overrides = turnOverridesFrom(meta, language);
  // A pipeline the server does not have is refused before any task exists.
  const refusal = deps.checkTurn?.(overrides);
  if (refusal) throw invalidParams(refusal, { field: "metadata.iac_code.pipelineName" });
  const settings = (): TurnSettings => ({ overrides, credentialNames: credentialNamesOf(message) });

  let existing: TaskRecord | undefined;
  if (message.taskId) {
    existing = await deps.findTask(message.taskId, ctx.owner);
    if (!existing) throw taskNotFound(message.taskId);
    if (message.contextId && message.contextId !== existing.task.contextId) {
      throw invalidParams("Task belongs to a different context", { taskId: message.taskId });
    }
    if (looksLikeAnswer(message)) {
      const answer = parseAnswer(message, message.taskId, message.contextId, {
        language,
        request: existing.pendingInput,
      });
      const stored = storableMessage({ ...message, contextId: existing.task.contextId });
      return { kind: "answer", record: existing, message: stored, language, answer, settings: settings() };
    }
    if (isTerminal(existing.state)) {
      throw new A2AError(
        "UnsupportedOperationError",
        `Task ${existing.task.id} is in a terminal state; send a new message with the contextId only.`,
        { taskId: existing.task.id },
      );
    }
    if (deps.isRunning(existing.task.id)) {
      const context = await deps.findContext(existing.task.contextId);
      if (message.role !== pb.Role.USER || !context) {
        throw taskAlreadyWorking(language, existing.task.id);
      }
      const input = ingestParts(message.parts, {
        cwd: context.record.cwd,
        roots: deps.allowedRoots,
        mediaTypes: deps.mediaTypes,
      });
      const stored = storableMessage({ ...message, contextId: existing.task.contextId });
      return { kind: "interject", record: existing, message: stored, language, input, settings: settings() };
    }
  } else if (looksLikeAnswer(message)) {
    throw invalidParams("Permission response correlation fields are required.");
  }
  if (message.role !== pb.Role.USER) throw invalidParams("message.role must be ROLE_USER");

  const contextId = existing?.task.contextId ?? (message.contextId || newId());
  const taskId = existing?.task.id ?? newId();
  const stored = storableMessage({ ...message, contextId, taskId });
  const record =
    existing ??
    new TaskRecord(
      create(pb.TaskSchema, {
        id: taskId,
        contextId,
        status: { state: pb.TaskState.SUBMITTED, timestamp: timestampFromDate(new Date()) },
        history: [],
      }),
      ctx.owner,
      language,
    );
  const refused = (key: string, params?: Record<string, string>): Admission => ({
    kind: "refused",
    record,
    message: stored,
    language,
    key,
    params,
  });

  // A context id made just now names no stored context.
  const known = existing !== undefined || message.contextId !== "";
  const context = known ? await deps.findContext(contextId) : undefined;
  if (context && context.record.owner !== ctx.owner) return refused("a2a.contextOtherOwner");
  const workspace = resolveWorkspace(meta.cwd ?? context?.record.cwd, deps.defaultCwd, deps.allowedRoots);
  if (!workspace.ok) {
    // The seed: a FAILED task in normal mode; the reference: invalid params in pipeline mode.
    const key = `workspace.${workspace.reason}`;
    if (overrides.runMode === "pipeline")
      throw invalidParams(t(language, key, { field: CWD_FIELD }), { field: CWD_FIELD });
    return refused(key, { field: CWD_FIELD });
  }
  const cwd = workspace.path;
  if (context && context.record.cwd !== cwd) return refused("a2a.contextOtherWorkspace");
  const input = ingestParts(message.parts, {
    cwd,
    roots: deps.allowedRoots,
    mediaTypes: deps.mediaTypes,
  });
  if (input.text.trim() === "" && input.images.length === 0) return refused("a2a.emptyMessage");
  return {
    kind: "turn",
    record,
    message: stored,
    language,
    cwd,
    input: { text: input.text, images: input.images },
    settings: settings(),
  };
}
