// One admitted run (agui-iaccode.md §4.1, §5.10): the run skeleton, a new
// run's single SendStreamingMessage (or the resume), turning whatever ends the
// run early into one RUN_ERROR (and what that does to the execution), and a
// client disconnect, which cancels the task unless the run is paused on an
// interrupt or waiting for its answers to be accepted.
import { randomUUID } from "node:crypto";
import { failSpan, startSpan, withSpan } from "../../server/tracing/index.js";
import { t } from "../../i18n/index.js";
import { A2aCallError } from "../../a2a/client/errors.js";
import { A2aUnavailableError } from "../upstream/a2a-client.js";
import { addModelTokens, type ModelTokens } from "../../server/model-tokens.js";
import { defaultChannel } from "../../server/metrics.js";
import type { AdapterCore } from "../adapter-core.js";
import type { Admission } from "./admission.js";
import {
  AguiError,
  backupNotReady,
  MSG,
  type MessageKey,
  type MessageParams,
  RunFailure,
} from "../errors.js";
import { hasPending, isTerminal, markTerminal } from "../threads/execution.js";
import { lastUserMessage, userParts } from "./inputs.js";
import { Resume } from "./resume.js";
import { runGuidance } from "./guidance.js";
import { newRunSnapshots } from "./conversation.js";
import { RunStream } from "./stream.js";
import { RUN_OVER, RunState, type EventSink } from "./run-state.js";

/** Codes after which the execution cannot continue (unless an interrupt still waits). */
const ENDS_EXECUTION = ["CANCELLED", "A2A_EXECUTION_FAILED", "A2A_PROTOCOL_ERROR", "INVALID_INPUT"];

/** Runs an admitted request to its end, sending AG-UI events to the sink. */
export function runAdmitted(core: AdapterCore, admission: Admission, sink: EventSink): Promise<void> {
  if (admission.isGuidance) return runGuidance(core, admission, sink);
  return new Run(core, admission, sink).execute();
}

export class Run extends RunState {
  private readonly stream = new RunStream(this);
  /** The run's telemetry channel: forwardedProps.iacCode.channel, else IAC_CODE_CHANNEL, else "unknown". */
  private readonly channel =
    (this.admission.request.iacCode.channel ?? "").trim().slice(0, 128) || defaultChannel();

  constructor(core: AdapterCore, admission: Admission, sink: EventSink) {
    super(core, admission, sink);
    sink.onDisconnect(() => {
      // A wait for an unreachable A2A server (a2a-wait.ts) ends: nothing more is sent for this client.
      this.active.waitStop.abort();
      void this.onDisconnect();
    });
  }

  async execute(): Promise<void> {
    const { request } = this.admission;
    // The run's span, child of the HTTP request's: its A2A calls carry it upstream (traceparent).
    const span = startSpan("iac-code.agui", this.admission.isResume ? "agui resume" : "agui run", {
      attributes: {
        "iac_code.agui.thread_id": request.threadId,
        "iac_code.agui.run_id": request.runId,
        "iac_code.context_id": this.admission.doc.contextId,
        "iac_code.channel": this.channel,
      },
    });
    try {
      await withSpan(span, () => this.runWatched());
    } finally {
      if (span) {
        span.setAttribute("iac_code.agui.outcome", this.sink.outcome);
        if (this.sink.ended !== "finished") failSpan(span, new Error(), this.sink.outcome);
        span.end();
      }
    }
  }

  private async runWatched(): Promise<void> {
    const { core, admission, active, tr } = this;
    const { request } = admission;
    core.metrics?.openStreams.inc({ binding: "agui" });
    core.metrics?.runsStarted.inc({ kind: admission.isResume ? "resume" : "run" });
    const [started, ...reopened] = tr.start(request.parentRunId);
    this.sink.send(started);
    try {
      // A reconnecting client gets the thread back: its conversation and pipeline state.
      if (!admission.isResume) for (const ev of await newRunSnapshots(this)) this.sink.send(ev);
      for (const ev of reopened) this.sink.send(ev);
      if (admission.isResume) await new Resume(this, this.stream).resume();
      else await this.newRun();
    } catch (err) {
      await this.fail(err);
    } finally {
      active.done = true;
      active.upstream.abort(RUN_OVER);
      if (core.active.get(request.threadId) === active) core.active.delete(request.threadId);
      core.lastActivity = core.now();
      core.metrics?.openStreams.dec({ binding: "agui" });
      this.summarize();
    }
  }

  /** One info line per run (thread, run, outcome, duration, tokens) and the run metrics. */
  private summarize(): void {
    const watched = this.sink;
    const { request, isResume } = this.admission;
    const usage = this.tr.usageList() ?? [];
    const inputTokens = usage.reduce((n, u) => n + (u.inputTokens ?? 0), 0);
    const outputTokens = usage.reduce((n, u) => n + (u.outputTokens ?? 0), 0);
    const durationMs = Math.round(performance.now() - watched.startedAt);
    this.core.logger?.info(
      {
        threadId: request.threadId,
        runId: request.runId,
        contextId: this.admission.doc.contextId,
        resume: isResume,
        outcome: watched.outcome,
        durationMs,
        inputTokens,
        outputTokens,
      },
      "run ended",
    );
    const metrics = this.core.metrics;
    if (!metrics) return;
    metrics.requests.inc({ method: isResume ? "resume" : "run", binding: "agui", outcome: watched.outcome });
    metrics.observeTurn(watched.outcome, this.channel, durationMs / 1000);
    // A run that sent neither end event counts as errored (disconnected): started = finished + errored + running.
    if (watched.ended === "finished") metrics.runsFinished.inc({ outcome: watched.outcome });
    else metrics.runsErrored.inc({ code: watched.outcome });
    const byModel = new Map<string, ModelTokens>();
    for (const entry of usage) addModelTokens(byModel, entry);
    metrics.countTokens([...byModel.values()], this.channel);
  }

  private async newRun(): Promise<void> {
    const user = lastUserMessage(this.admission.request.messages);
    if (!user) throw new RunFailure("INVALID_INPUT", MSG.newRunNeedsMessage);
    const parts = userParts(user);
    const messageId = typeof user.id === "string" && user.id ? user.id : randomUUID();
    const params = this.stream.messageParams(parts, messageId, false);
    await this.stream.consume(this.core.client.sendStreamingBatches(params, this.signals()));
  }

  private async fail(err: unknown): Promise<void> {
    const { core } = this;
    const { doc } = this.admission;
    let code: string;
    let messageKey: MessageKey;
    let params: MessageParams = {};
    let localized: string | undefined;
    // A JSON-RPC error saying the session backup is still synchronizing has its own code (§10 item 55).
    if (!(err instanceof RunFailure) && !(err instanceof AguiError)) err = backupNotReady(err) ?? err;
    if (err instanceof RunFailure || err instanceof AguiError) {
      code = err.code;
      messageKey = err.messageKey;
      params = err.params;
      if (err instanceof RunFailure) localized = err.localized;
    } else if (this.active.cancelledByExtension) {
      code = "CANCELLED";
      messageKey = MSG.cancelled;
    } else {
      if (
        !(err instanceof A2aUnavailableError) &&
        !(err instanceof A2aCallError) &&
        !this.sink.disconnected
      ) {
        core.logger?.error({ err: (err as Error).stack ?? String(err) }, "AG-UI run failed unexpectedly");
      }
      code = "A2A_UNAVAILABLE";
      messageKey = MSG.a2aUnavailable;
      // An unexpected failure of a normal run cancels its task, unless an interrupt waits.
      if (!this.active.accepting && !hasPending(doc) && !this.sink.disconnected) {
        await core.cancelUpstream(doc.execution.taskId);
        markTerminal(doc);
        await core.saveBestEffort(doc);
      }
    }
    this.syncDurable();
    if (!hasPending(doc) && !isTerminal(doc) && ENDS_EXECUTION.includes(code)) {
      markTerminal(doc);
      await core.saveBestEffort(doc);
    }
    // Open spans are closed first: a client sees every message, tool and step end before the error.
    for (const ev of this.tr.closeAll()) this.sink.send(ev);
    this.sink.send(this.tr.error(code, localized ?? t(this.admission.language, messageKey, params)));
  }

  private async onDisconnect(): Promise<void> {
    const { core, active: run } = this;
    if (run.done || run.paused || run.accepting) return;
    const { doc } = this.admission;
    if (hasPending(doc)) return;
    run.upstream.abort();
    await core.lock.run(doc.threadId, async () => {
      if (doc.execution.executionId !== run.executionId || isTerminal(doc)) return;
      await core.cancelUpstream(doc.execution.taskId);
      markTerminal(doc);
      await core.saveBestEffort(doc);
    });
  }
}
