// What the parts of one run share (the run itself, its stream reader and a
// resume): the core, the admission, the live flags, the translator, the watched
// event sink, the signals of its A2A requests and its durable cursors.
import type { ActiveRun, AdapterCore } from "../adapter-core.js";
import type { AguiEvent } from "../events.js";
import type { RequestSignals } from "../upstream/a2a-client.js";
import type { Admission } from "./admission.js";
import { RunTranslator } from "./translate.js";

/** Where a run's events go (the SSE writer, or an array in tests and benchmarks). */
export interface EventSink {
  send(event: AguiEvent): void;
  readonly disconnected: boolean;
  onDisconnect(fn: () => void): void;
}

/** Why a run's A2A requests are aborted once it is over: one object (a new DOMException per abort costs a stack trace). */
export const RUN_OVER = new DOMException("The AG-UI run is over.", "AbortError");

export class RunState {
  /** The live part of the run (flags a disconnect, a cancel and the stream read). */
  readonly active: ActiveRun;
  readonly tr: RunTranslator;
  /** The sink, watched: it notes how the run ended and when its first event went out. */
  readonly sink: EventSink & Watched;

  constructor(
    readonly core: AdapterCore,
    readonly admission: Admission,
    sink: EventSink,
  ) {
    const { request, doc } = admission;
    this.active = core.active.get(request.threadId)!;
    this.tr = new RunTranslator({
      threadId: request.threadId,
      runId: request.runId,
      durable: {
        pipelineSequence: doc.execution.pipelineSequence,
        pipelineOpenSteps: doc.execution.pipelineOpenSteps,
        textSnapshotDigests: doc.execution.textSnapshotDigests,
      },
    });
    this.sink = watch(core, sink);
  }

  /** What the run's A2A requests carry: the run's upstream signal, and when to stop waiting for A2A. */
  signals(upstream: AbortController = this.active.upstream): RequestSignals {
    return { signal: upstream.signal, stop: this.active.waitStop.signal };
  }

  /** Copies the translator's durable cursors into the execution, if it is still this run's. */
  syncDurable(): void {
    const d = this.tr.durableState();
    const ex = this.admission.doc.execution;
    if (ex.executionId !== this.active.executionId) return;
    ex.pipelineSequence = d.pipelineSequence;
    ex.pipelineOpenSteps = d.pipelineOpenSteps;
    ex.textSnapshotDigests = d.textSnapshotDigests;
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
