// A guidance run (agui-iaccode.md §9.3): the latest user message goes to the
// thread's running pipeline task as one more SendStreamingMessage (its own
// rosInvocationId in the metadata); the A2A server hands it to the pipeline's
// interrupt judge. The run is RUN_STARTED, then RUN_FINISHED success or one
// RUN_ERROR: the A2A events are read, never mapped (the pipeline's own run
// shows them), until the judge's verdict (interrupt_classified) or the
// stream's end. The task is asked first (GetTask): one whose turn has ended
// gets no message (it would start a new turn on it), EXECUTION_LOST. It never
// takes the thread's active run, never reopens steps, never announces the
// session, never marks the execution terminal, and neither its end nor its
// client's disconnect cancels anything.
import { randomUUID } from "node:crypto";
import { t } from "../../i18n/index.js";
import { A2aCallError } from "../../a2a/client/errors.js";
import type { AdapterCore } from "../adapter-core.js";
import { AguiError, backupNotReady, MSG, type MessageKey, RunFailure } from "../errors.js";
import type { AguiEvent } from "../events.js";
import {
  FAILED_STATES,
  isObject,
  readItem,
  STOP_STATES,
  type A2aItem,
  type JsonObject,
} from "../upstream/a2a-items.js";
import type { Admission } from "./admission.js";
import { iacMetadata, lastUserMessage, userParts } from "./inputs.js";
import type { EventSink } from "./run-state.js";
import { RunTranslator } from "./translate.js";

/** Task states in which a turn runs (a message then goes to the running pipeline). */
const RUNNING = new Set(["working", "submitted"]);

/** The pipeline envelope that carries the judge's verdict on a message. */
const VERDICT = "interrupt_classified";

/** True when the item publishes the judge's verdict (a task snapshot repeats earlier ones: not counted). */
function hasVerdict(item: A2aItem): boolean {
  if (item.kind === "task") return false;
  const batch = isObject(item.iac.pipelineBatch) ? item.iac.pipelineBatch.events : undefined;
  const envelopes: unknown[] = Array.isArray(batch)
    ? [...(batch as unknown[]), item.iac.pipeline]
    : [item.iac.pipeline];
  return envelopes.some((e) => isObject(e) && e.eventType === VERDICT);
}

/** Runs an admitted guidance request to its end, sending AG-UI events to the sink. */
export async function runGuidance(core: AdapterCore, admission: Admission, sink: EventSink): Promise<void> {
  const { request, doc } = admission;
  const tr = new RunTranslator({
    threadId: request.threadId,
    runId: request.runId,
    durable: { pipelineSequence: 0, pipelineOpenSteps: [], textSnapshotDigests: [] },
  });
  const upstream = new AbortController();
  const waitStop = new AbortController();
  // The client leaving only stops this run's reading: the pipeline goes on.
  sink.onDisconnect(() => {
    waitStop.abort();
    upstream.abort();
  });
  const started = performance.now();
  let outcome = "success";
  const send = (ev: AguiEvent): void => {
    if (!sink.disconnected) sink.send(ev);
  };
  send(tr.start(request.parentRunId)[0]);
  try {
    const user = lastUserMessage(request.messages);
    if (!user) throw new RunFailure("INVALID_INPUT", MSG.newRunNeedsMessage);
    const parts = userParts(user);
    const taskId = doc.execution.taskId;
    if (!taskId) throw new RunFailure("EXECUTION_LOST", MSG.guidanceNoRun);
    const message: JsonObject = {
      messageId: typeof user.id === "string" && user.id ? user.id : randomUUID(),
      role: "ROLE_USER",
      parts,
      contextId: doc.contextId,
      taskId,
      metadata: { iac_code: iacMetadata(request.iacCode, admission.cwd, admission.language) },
    };
    const signals = { signal: upstream.signal, stop: waitStop.signal };
    // The task must still be running: a message to a task whose turn has ended would start a
    // new turn on it (an adapter that was down may not have seen the pipeline end).
    const now = readItem(await core.client.getTask(taskId, signals)).state ?? "";
    if (!RUNNING.has(now)) throw new RunFailure("EXECUTION_LOST", MSG.guidanceNoRun);
    const params = { message, configuration: { acceptedOutputModes: ["text/plain"] } };
    const stream = core.client.sendStreamingMessage(params, signals);
    for await (const raw of stream) {
      const item = readItem(raw);
      if (item.contextId && item.contextId !== doc.contextId)
        throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.contextChanged);
      if (item.taskId && item.taskId !== taskId) throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.taskChanged);
      const state = item.state ?? "";
      if (FAILED_STATES.has(state)) throw new RunFailure("A2A_EXECUTION_FAILED", MSG.executionFailed);
      if (state === "canceled") throw new RunFailure("CANCELLED", MSG.cancelled);
      if (hasVerdict(item) || (item.kind !== "task" && STOP_STATES.has(state))) break;
    }
    // Nothing was opened and no usage is counted: RUN_FINISHED success alone.
    for (const ev of tr.finishSuccess()) send(ev);
  } catch (caught) {
    // A session restored from its backup that is not ready yet says so, as on a run.
    const err =
      caught instanceof RunFailure || caught instanceof AguiError
        ? caught
        : (backupNotReady(caught) ?? caught);
    let code = "A2A_UNAVAILABLE";
    let key: MessageKey = MSG.a2aUnavailable;
    if (err instanceof RunFailure || err instanceof AguiError) {
      code = err.code;
      key = err.messageKey;
    } else if (!(err instanceof A2aCallError) && !sink.disconnected) {
      core.logger?.warn({ err: (err as Error).message }, "guidance run failed");
    }
    outcome = code;
    send(tr.error(code, t(admission.language, key)));
  } finally {
    upstream.abort();
    core.lastActivity = core.now();
    const durationMs = Math.round(performance.now() - started);
    if (sink.disconnected && outcome === "success") outcome = "disconnected";
    core.logger?.info(
      {
        threadId: request.threadId,
        runId: request.runId,
        contextId: doc.contextId,
        guidance: true,
        outcome,
        durationMs,
      },
      "run ended",
    );
    core.metrics?.requests.inc({ method: "guidance", binding: "agui", outcome });
  }
}
