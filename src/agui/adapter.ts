// The AG-UI adapter: admits RunAgentInput requests against the thread's durable
// binding, runs each admitted request over A2A (a new message, or the answers
// of a resume) as a stream of AG-UI events, and serves the cancel extension. It
// is an A2A *client*: it never runs the agent itself. This class is the face
// the HTTP app and the server use; the steps live in admission.ts, run.ts,
// run-stream.ts, resume.ts and cancel.ts, over the state in adapter-core.ts.
import { AdapterCore, type AdapterOptions } from "./adapter-core.js";
import { admit, type Admission, type RunRequest } from "./run/admission.js";
import { cancelExecution, type CancelStatus } from "./run/cancel.js";
import { hasPending } from "./threads/execution.js";
import { runAdmitted } from "./run/run.js";
import { admitObservation, Observer, type Observation, type ObservationIdentity } from "./run/observe.js";
import type { EventSink } from "./run/run-state.js";
import type { Language } from "../i18n/index.js";

export class AguiAdapter {
  private readonly core: AdapterCore;

  constructor(options: AdapterOptions) {
    this.core = new AdapterCore(options);
  }

  /** When the adapter last admitted, finished or cancelled something (for idle shutdown). */
  get lastActivity(): number {
    return this.core.lastActivity;
  }

  /** No active run and no pending interrupt among loaded threads. */
  isIdle(): boolean {
    if (this.core.active.size || this.core.observers) return false;
    return !this.core.store.loaded().some(hasPending);
  }

  /** Interrupts waiting for an answer among loaded threads (metrics). */
  interruptsWaiting(): number {
    return this.core.store.loaded().reduce((n, doc) => n + Object.keys(doc.execution.pending).length, 0);
  }

  close(): void {
    this.core.close();
  }

  /** Admission (agui-iaccode.md §2.5): throws AguiError with its HTTP status, or reserves the thread. */
  admit(request: RunRequest, language: Language): Promise<Admission> {
    return admit(this.core, request, language);
  }

  /** Runs an admitted request to its end, sending AG-UI events to the sink. */
  run(admission: Admission, sink: EventSink): Promise<void> {
    return runAdmitted(this.core, admission, sink);
  }

  /** The subscribe extension's checks (§9.2): throws ObservationRefused (404/409) or AguiError. */
  admitObservation(
    executionId: string,
    identity: ObservationIdentity,
    language: Language,
    user?: string,
  ): Promise<Observation> {
    return admitObservation(this.core, executionId, identity, language, user);
  }

  /** Follows an admitted observation to the observed task's stop (read-only). */
  observe(observation: Observation, sink: EventSink): Promise<void> {
    return new Observer(this.core, observation, sink).run();
  }

  /** POST /extensions/iac-code/v1/executions/{executionId}/cancel */
  cancelExecution(
    executionId: string,
    threadId: string,
    rosInvocationId: string,
    user?: string,
  ): Promise<CancelStatus> {
    return cancelExecution(this.core, executionId, threadId, rosInvocationId, user);
  }
}
