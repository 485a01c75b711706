// Running an admitted request to its end (agui-iaccode.md §4.1, §5.10): the run
// skeleton, a new run's single SendStreamingMessage (or the resume), turning
// whatever ends the run early into one RUN_ERROR (and what that does to the
// execution), and a client disconnect, which cancels the task unless the run
// is paused on an interrupt or waiting for its answers to be accepted.
import { randomUUID } from "node:crypto";
import { failSpan, startSpan, withSpan } from "../../server/tracing/index.js";
import { t } from "../../i18n/index.js";
import { A2aRpcError, A2aUnavailableError } from "../upstream/a2a-client.js";
import { addModelTokens, type ModelTokens } from "../../server/model-tokens.js";
import type { AdapterCore } from "../adapter-core.js";
import type { Admission } from "./admission.js";
import { AguiError, MSG, type MessageKey, type MessageParams, RunFailure } from "../errors.js";
import { hasPending, isTerminal, markTerminal } from "../threads/execution.js";
import { lastUserMessage, userParts } from "./inputs.js";
import { resume } from "./resume.js";
import { syncDurable, upstreamSignals, type EventSink, type RunContext } from "./context.js";
import { consume, messageParams } from "./stream.js";
import type { AguiEvent } from "../events.js";
import { RunTranslator } from "./translate.js";

/** Codes after which the execution cannot continue (unless an interrupt still waits). */
const ENDS_EXECUTION = ["CANCELLED", "A2A_EXECUTION_FAILED", "A2A_PROTOCOL_ERROR", "INVALID_INPUT"];

/** Runs an admitted request to its end, sending AG-UI events to the sink. */
export async function runAdmitted(core: AdapterCore, admission: Admission, sink: EventSink): Promise<void> {
  const { request, doc } = admission;
  const run = core.active.get(request.threadId)!;
  const tr = new RunTranslator({
    threadId: request.threadId,
    runId: request.runId,
    durable: {
      pipelineSequence: doc.execution.pipelineSequence,
      pipelineOpenSteps: doc.execution.pipelineOpenSteps,
      textSnapshotDigests: doc.execution.textSnapshotDigests,
    },
  });
  const watched = watch(core, sink);
  const ctx: RunContext = {
    core,
    admission,
    run,
    tr,
    sink: watched,
    sessionAnnounced: false,
    lastState: undefined,
  };
  sink.onDisconnect(() => {
    // A wait for an unreachable A2A server (a2a-wait.ts) ends: nothing more is sent for this client.
    run.waitStop.abort();
    void onDisconnect(ctx);
  });
  // The run's span, child of the HTTP request's: its A2A calls carry it upstream (traceparent).
  const span = startSpan("iac-code.agui", admission.isResume ? "agui resume" : "agui run", {
    attributes: {
      "iac_code.agui.thread_id": request.threadId,
      "iac_code.agui.run_id": request.runId,
      "iac_code.context_id": admission.doc.contextId,
    },
  });
  try {
    await withSpan(span, () => runWatched(core, ctx, watched));
  } finally {
    if (span) {
      span.setAttribute("iac_code.agui.outcome", watched.outcome);
      if (watched.ended !== "finished") failSpan(span, new Error(), watched.outcome);
      span.end();
    }
  }
}

async function runWatched(core: AdapterCore, ctx: RunContext, watched: EventSink & Watched): Promise<void> {
  const { admission, run, tr } = ctx;
  const { request } = admission;
  core.metrics?.openStreams.inc({ binding: "agui" });
  core.metrics?.runsStarted.inc({ kind: admission.isResume ? "resume" : "run" });
  for (const ev of tr.start(request.parentRunId)) watched.send(ev);
  try {
    if (admission.isResume) await resume(ctx);
    else await newRun(ctx);
  } catch (err) {
    await failRun(ctx, err);
  } finally {
    run.done = true;
    run.upstream.abort();
    if (core.active.get(request.threadId) === run) core.active.delete(request.threadId);
    core.lastActivity = core.now();
    core.metrics?.openStreams.dec({ binding: "agui" });
    summarize(ctx, watched);
  }
}

/** A sink that notes how the run ended and when its first event after RUN_STARTED went out. */
function watch(core: AdapterCore, sink: EventSink): EventSink & Watched {
  let events = 0;
  const watched = {
    outcome: "disconnected",
    ended: undefined as Watched["ended"],
    startedAt: performance.now(),
    get disconnected() {
      return sink.disconnected;
    },
    onDisconnect: (fn: () => void) => sink.onDisconnect(fn),
    send(ev: AguiEvent) {
      if (++events === 2)
        core.metrics?.firstEventSeconds.observe(
          { binding: "agui" },
          (performance.now() - watched.startedAt) / 1000,
        );
      if (ev.type === "RUN_FINISHED") {
        watched.outcome = ev.outcome?.type ?? "success";
        watched.ended = "finished";
      } else if (ev.type === "RUN_ERROR") {
        watched.outcome = ev.code ?? "RUN_ERROR";
        watched.ended = "errored";
      }
      sink.send(ev);
    },
  };
  return watched;
}

interface Watched {
  /** success or interrupt (RUN_FINISHED), the RUN_ERROR code, or disconnected (neither was sent). */
  outcome: string;
  ended: "finished" | "errored" | undefined;
  startedAt: number;
}

/** One info line per run (thread, run, outcome, duration, tokens) and the run metrics. */
function summarize(ctx: RunContext, watched: Watched): void {
  const { request, isResume } = ctx.admission;
  const usage = ctx.tr.usageList() ?? [];
  const inputTokens = usage.reduce((n, u) => n + (u.inputTokens ?? 0), 0);
  const outputTokens = usage.reduce((n, u) => n + (u.outputTokens ?? 0), 0);
  const durationMs = Math.round(performance.now() - watched.startedAt);
  ctx.core.logger?.info(
    {
      threadId: request.threadId,
      runId: request.runId,
      contextId: ctx.admission.doc.contextId,
      resume: isResume,
      outcome: watched.outcome,
      durationMs,
      inputTokens,
      outputTokens,
    },
    "run ended",
  );
  const metrics = ctx.core.metrics;
  if (!metrics) return;
  metrics.requests.inc({ method: isResume ? "resume" : "run", binding: "agui", outcome: watched.outcome });
  metrics.turnSeconds.observe({ outcome: watched.outcome }, durationMs / 1000);
  // A run that sent neither end event counts as errored (disconnected): started = finished + errored + running.
  if (watched.ended === "finished") metrics.runsFinished.inc({ outcome: watched.outcome });
  else metrics.runsErrored.inc({ code: watched.outcome });
  const byModel = new Map<string, ModelTokens>();
  for (const entry of usage) addModelTokens(byModel, entry);
  metrics.countTokens([...byModel.values()]);
}

async function newRun(ctx: RunContext): Promise<void> {
  const user = lastUserMessage(ctx.admission.request.messages);
  if (!user) throw new RunFailure("INVALID_INPUT", MSG.newRunNeedsMessage);
  const parts = userParts(user);
  const messageId = typeof user.id === "string" && user.id ? user.id : randomUUID();
  const params = messageParams(ctx, parts, messageId, false);
  const stream = ctx.core.client.sendStreamingMessage(params, upstreamSignals(ctx));
  await consume(ctx, stream);
}

async function failRun(ctx: RunContext, err: unknown): Promise<void> {
  const { core } = ctx;
  const { doc } = ctx.admission;
  let code: string;
  let messageKey: MessageKey;
  let params: MessageParams = {};
  let localized: string | undefined;
  if (err instanceof RunFailure || err instanceof AguiError) {
    code = err.code;
    messageKey = err.messageKey;
    params = err.params;
    if (err instanceof RunFailure) localized = err.localized;
  } else if (ctx.run.cancelledByExtension) {
    code = "CANCELLED";
    messageKey = MSG.cancelled;
  } else {
    if (!(err instanceof A2aUnavailableError) && !(err instanceof A2aRpcError) && !ctx.sink.disconnected) {
      core.logger?.error({ err: (err as Error).stack ?? String(err) }, "AG-UI run failed unexpectedly");
    }
    code = "A2A_UNAVAILABLE";
    messageKey = MSG.a2aUnavailable;
    // An unexpected failure of a normal run cancels its task, unless an interrupt waits.
    if (!ctx.run.accepting && !hasPending(doc) && !ctx.sink.disconnected) {
      await core.cancelUpstream(doc.execution.taskId);
      markTerminal(doc);
      await core.saveBestEffort(doc);
    }
  }
  syncDurable(ctx);
  if (!hasPending(doc) && !isTerminal(doc) && ENDS_EXECUTION.includes(code)) {
    markTerminal(doc);
    await core.saveBestEffort(doc);
  }
  // Open spans are closed first: a client sees every message, tool and step end before the error.
  for (const ev of ctx.tr.closeAll()) ctx.sink.send(ev);
  ctx.sink.send(ctx.tr.error(code, localized ?? t(ctx.admission.language, messageKey, params)));
}

async function onDisconnect(ctx: RunContext): Promise<void> {
  const { core, run } = ctx;
  if (run.done || run.paused || run.accepting) return;
  const { doc } = ctx.admission;
  if (hasPending(doc)) return;
  run.upstream.abort();
  await core.lock.run(doc.threadId, async () => {
    if (doc.execution.executionId !== run.executionId || isTerminal(doc)) return;
    await core.cancelUpstream(doc.execution.taskId);
    markTerminal(doc);
    await core.saveBestEffort(doc);
  });
}
