// Following one A2A stream through a run (agui-iaccode.md §3.3, §4, §5.2):
// learning and checking the task, context and session identities, announcing
// iac-code.session.v1, translating items into AG-UI events, collecting new
// interrupts and committing them before they are shown, and ending the run on
// the stream's last state. Shared by new runs and resumes.
import { isAguiErrorCode } from "../contract/index.js";
import { ERROR_CODE_MESSAGES } from "../runtime/errors.js";
import type { RuntimeErrorCode } from "../runtime/seam.js";
import {
  FAILED_STATES,
  isObject,
  readItem,
  sessionIdOf,
  statusText,
  STOP_STATES,
  TERMINAL_STATES,
  type A2aItem,
  type JsonObject,
} from "./a2a-items.js";
import { MSG, type MessageKey } from "./errors.js";
import { CUSTOM_SESSION, type InterruptObject } from "./events.js";
import { appliedDigest, markTerminal } from "./execution.js";
import { iacMetadata } from "./inputs.js";
import { requiredInputs, toInterrupt } from "./interrupts.js";
import { RunFailure, syncDurable, type RunContext } from "./run-context.js";

/** SendStreamingMessage params for a run; `withTask` continues the bound task. */
export function messageParams(
  ctx: RunContext,
  parts: JsonObject[],
  messageId: string,
  withTask: boolean,
): JsonObject {
  const { doc, cwd, request, language } = ctx.admission;
  const message: JsonObject = {
    messageId,
    role: "ROLE_USER",
    parts,
    contextId: doc.contextId,
    metadata: { iac_code: iacMetadata(request.iacCode, cwd, language) },
  };
  if (withTask && doc.execution.taskId) message.taskId = doc.execution.taskId;
  return { message, configuration: { acceptedOutputModes: ["text/plain"] } };
}

/** Learns and checks the task, context and session identities of an item; persists what is new. */
async function learn(ctx: RunContext, item: A2aItem): Promise<void> {
  const { doc } = ctx.admission;
  const ex = doc.execution;
  if (item.contextId && item.contextId !== doc.contextId)
    throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.contextChanged);
  let changed = false;
  let failMsg: MessageKey = MSG.mappingNotCommitted;
  if (item.taskId) {
    if (ex.taskId && ex.taskId !== item.taskId) throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.taskChanged);
    if (!ex.taskId) {
      ex.taskId = item.taskId;
      changed = true;
    }
  }
  const session = sessionIdOf(item);
  if (session) {
    if (doc.iacCodeSessionId && doc.iacCodeSessionId !== session) {
      throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.sessionChanged);
    }
    if (!doc.iacCodeSessionId) {
      doc.iacCodeSessionId = session;
      if (!changed) failMsg = MSG.sessionNotCommitted;
      changed = true;
    }
  }
  if (!changed) return;
  try {
    await ctx.core.store.save(doc);
  } catch {
    await ctx.core.cancelUpstream(ex.taskId ?? item.taskId);
    markTerminal(doc);
    throw new RunFailure("STATE_PERSISTENCE_FAILED", failMsg);
  }
}

/** Sends iac-code.session.v1 once: as soon as task and session are known, or when `force`d. */
export function announceSession(ctx: RunContext, force: boolean): void {
  if (ctx.sessionAnnounced) return;
  const { doc, request } = ctx.admission;
  if (!force && !(doc.execution.taskId && doc.iacCodeSessionId)) return;
  ctx.sessionAnnounced = true;
  const value: JsonObject = {
    schemaVersion: 1,
    threadId: request.threadId,
    aguiRunId: request.runId,
    executionId: doc.execution.executionId,
    contextId: doc.contextId,
    rosInvocationId: doc.execution.rosInvocationId,
  };
  if (doc.execution.taskId) value.taskId = doc.execution.taskId;
  if (doc.iacCodeSessionId) value.sessionId = doc.iacCodeSessionId;
  ctx.sink.send(ctx.tr.custom(CUSTOM_SESSION, value));
}

/** Adds the item's new pending inputs (answers already applied in this execution are dropped); true if any. */
export function newInputs(ctx: RunContext, item: A2aItem): boolean {
  const { doc } = ctx.admission;
  let added = false;
  for (const input of requiredInputs(item)) {
    const id = input.value.inputId;
    if (typeof id !== "string" || !id) throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.interruptWithoutId);
    if (appliedDigest(doc, id) !== undefined) continue;
    const req = input.value.requestTaskId;
    if (typeof req === "string" && doc.execution.taskId && req !== doc.execution.taskId) {
      throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.otherTask);
    }
    const cx = input.value.contextId;
    if (typeof cx === "string" && cx !== doc.contextId)
      throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.otherContext);
    const existing = doc.execution.pending[id];
    if (existing) {
      if (input.sideband) existing.sideband = true;
      continue;
    }
    doc.execution.pending[id] = {
      value: input.value,
      sideband: input.sideband,
      expiresAt: new Date(ctx.core.now() + ctx.core.ttlMs).toISOString(),
    };
    added = true;
  }
  return added;
}

/** Persists the pending interrupts, then ends the run with them. */
export async function commitInterrupt(ctx: RunContext): Promise<void> {
  const { doc } = ctx.admission;
  ctx.tr.finalizeSnapshots();
  syncDurable(ctx);
  try {
    await ctx.core.store.save(doc);
  } catch {
    const taskId = doc.execution.taskId;
    await ctx.core.cancelUpstream(taskId);
    markTerminal(doc);
    throw new RunFailure("STATE_PERSISTENCE_FAILED", MSG.interruptNotCommitted);
  }
  ctx.run.paused = true;
  ctx.core.scheduleExpiry(doc);
  const interrupts: InterruptObject[] = Object.values(doc.execution.pending).map(toInterrupt);
  for (const ev of ctx.tr.finishInterrupt(interrupts)) ctx.sink.send(ev);
}

type ItemOutcome = "stop" | "continue" | "interrupted";

async function handleItem(ctx: RunContext, item: A2aItem): Promise<ItemOutcome> {
  await learn(ctx, item);
  announceSession(ctx, false);
  // A Task item is a snapshot (first event of a stream): its merged metadata
  // repeats what earlier runs showed, and input-required there is the wait
  // being answered, not the end of this run.
  const snapshot = item.kind === "task";
  if (!snapshot) for (const ev of ctx.tr.map(item)) ctx.sink.send(ev);
  if (newInputs(ctx, item)) {
    await commitInterrupt(ctx);
    return "interrupted";
  }
  const st = item.state;
  if (snapshot && !TERMINAL_STATES.has(st ?? "")) return "continue";
  if (st) ctx.lastState = st;
  if (st && FAILED_STATES.has(st)) {
    ctx.failure = {
      text: statusText(item).text,
      error: isObject(item.iac.error) ? item.iac.error : undefined,
    };
  }
  return st && STOP_STATES.has(st) ? "stop" : "continue";
}

/**
 * Processes an A2A stream until it reaches a stop: a new interrupt (ends the
 * run with it), completion or the end of the turn (success), or a failure.
 */
export async function consume(
  ctx: RunContext,
  stream: AsyncIterable<unknown>,
  first?: A2aItem,
): Promise<void> {
  let outcome: ItemOutcome = "continue";
  if (first) outcome = await handleItem(ctx, first);
  if (outcome === "continue") {
    for await (const raw of stream) {
      outcome = await handleItem(ctx, readItem(raw));
      if (outcome !== "continue") break;
    }
  }
  ctx.run.upstream.abort();
  if (outcome === "interrupted") return;
  await finish(ctx);
}

/** Ends a run whose stream stopped without an interrupt, by its last state. */
async function finish(ctx: RunContext): Promise<void> {
  const { doc } = ctx.admission;
  announceSession(ctx, true);
  const st = ctx.lastState;
  if (ctx.run.cancelledByExtension || st === "canceled") throw new RunFailure("CANCELLED", MSG.cancelled);
  if (st !== "completed" && st !== "input-required") throw taskFailure(ctx);
  const events = ctx.tr.finishSuccess();
  syncDurable(ctx);
  markTerminal(doc);
  await ctx.core.saveBestEffort(doc);
  for (const ev of events) ctx.sink.send(ev);
}

/**
 * The RUN_ERROR of a failed task: a model or runtime failure keeps its code and
 * the A2A text (localised, with the errorId of the server's log line); any
 * other failure is A2A_EXECUTION_FAILED with the task's own text when it has one.
 */
function taskFailure(ctx: RunContext): RunFailure {
  const code = ctx.failure?.error?.code;
  const text = ctx.failure?.text || undefined;
  const errorId = ctx.failure?.error?.errorId;
  const params: Record<string, string> = typeof errorId === "string" ? { errorId } : {};
  if (isAguiErrorCode(code) && code in ERROR_CODE_MESSAGES) {
    const key = ERROR_CODE_MESSAGES[code as RuntimeErrorCode] as MessageKey;
    return new RunFailure(code, key, params, text);
  }
  return new RunFailure("A2A_EXECUTION_FAILED", MSG.executionFailed, {}, text);
}
