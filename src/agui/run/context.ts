// One admitted run as its steps (new run, resume, stream) see it: the shared
// core, the admission, the live run flags, the translator and the event sink;
// and RunFailure, the way a step ends the run with RUN_ERROR.
import type { RequestSignals } from "../upstream/a2a-client.js";
import type { AdapterCore, ActiveRun } from "../adapter-core.js";
import type { Admission } from "./admission.js";
import type { AguiEvent } from "../events.js";
import type { RunTranslator } from "./translate.js";

/** Where a run's events go (the SSE writer, or an array in tests and benchmarks). */
export interface EventSink {
  send(event: AguiEvent): void;
  readonly disconnected: boolean;
  onDisconnect(fn: () => void): void;
}

export interface RunContext {
  core: AdapterCore;
  admission: Admission;
  run: ActiveRun;
  tr: RunTranslator;
  sink: EventSink;
  /** The iac-code.session.v1 event goes out once per run. */
  sessionAnnounced: boolean;
  /** The last task state the stream reported (decides how the run ends). */
  lastState: string | undefined;
  /** A failed task's status text and metadata.iac_code.error (the run's RUN_ERROR says the same). */
  failure?: { text: string; error?: Record<string, unknown> };
}

/** What the run's A2A requests carry: the run's upstream signal, and when to stop waiting for A2A. */
export function upstreamSignals(
  ctx: RunContext,
  upstream: AbortController = ctx.run.upstream,
): RequestSignals {
  return { signal: upstream.signal, stop: ctx.run.waitStop.signal };
}

/** Copies the translator's durable cursors into the execution, if it is still this run's. */
export function syncDurable(ctx: RunContext): void {
  const d = ctx.tr.durableState();
  const ex = ctx.admission.doc.execution;
  if (ex.executionId !== ctx.run.executionId) return;
  ex.pipelineSequence = d.pipelineSequence;
  ex.pipelineOpenSteps = d.pipelineOpenSteps;
  ex.textSnapshotDigests = d.textSnapshotDigests;
}
