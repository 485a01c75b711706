// The read-only observer of a running execution (agui-iaccode.md §9.2): a
// second screen, or a page that lost its connection, watches a run it did not
// start. It follows the execution's A2A task on a copy of the thread's binding:
// it never takes the thread's active run, never sends input, never cancels
// (not even when its own client leaves) and never writes the thread's state.
//
// Its stream: RUN_STARTED, MESSAGES_SNAPSHOT (the conversation so far), for a
// pipeline the ACTIVITY_SNAPSHOT of its state and STEP_STARTED for its open
// steps, iac-code.session.v1, then every item of the task mapped as a run maps
// it, until the task stops: RUN_FINISHED (success, or the interrupt the task
// waits for), or RUN_ERROR (the failure or the cancellation).
import { t, type Language } from "../../i18n/index.js";
import type { AdapterCore } from "../adapter-core.js";
import { AguiError, MSG, RunFailure, type MessageKey, type MessageParams } from "../errors.js";
import { CUSTOM_SESSION, type AguiEvent } from "../events.js";
import { appliedDigest } from "../threads/execution.js";
import type { PendingInterrupt, ThreadDoc } from "../threads/thread-store.js";
import { readItem, sessionIdOf, STOP_STATES, type A2aItem, type JsonObject } from "../upstream/a2a-items.js";
import type { RequestSignals } from "../upstream/a2a-client.js";
import { openStepKeys, threadSnapshots } from "./conversation.js";
import { requiredInputs, toInterrupt } from "./interrupts.js";
import type { EventSink } from "./run-state.js";
import { failureOf, taskFailure } from "./stream.js";
import { RunTranslator } from "./translate.js";

/** Body errors and refusals of the subscribe route (the reference's texts, not the error envelope). */
export const OBSERVE_ERRORS = {
  invalidIdentity: "Invalid observation identity",
  checkpointUnavailable: "Execution checkpoint unavailable",
  identityChanged: "Execution observation identity changed",
} as const;

/** The identity an observer gives in its body. */
export interface ObservationIdentity {
  threadId: string;
  runId: string;
  rosInvocationId: string;
}

/** A refusal before the stream starts: 404 nothing to observe, 409 another execution. */
export class ObservationRefused extends Error {
  constructor(
    readonly status: 404 | 409,
    readonly error: string,
  ) {
    super(error);
    this.name = "ObservationRefused";
  }
}

/** An admitted observation: what it watches, on a copy of the binding taken at admission. */
export interface Observation {
  executionId: string;
  identity: ObservationIdentity;
  binding: ThreadDoc;
  language: Language;
}

/** Re-subscriptions after a stream ended while the task still runs (an A2A restart). */
const MAX_SUBSCRIPTIONS = 3;

/**
 * Checks the identity against the thread's binding, in the reference's order:
 * no binding or no bound task (nothing running) is 404; another execution,
 * another rosInvocationId or a runId the thread never admitted is 409. A2A is
 * not contacted.
 */
export async function admitObservation(
  core: AdapterCore,
  executionId: string,
  identity: ObservationIdentity,
  language: Language,
  user?: string,
): Promise<Observation> {
  const doc = await core.loadThread(identity.threadId);
  // A JWT caller sees only its own threads: another user's is not found (as for cancel).
  if (!doc || !doc.execution.taskId || (user !== undefined && doc.userId !== user))
    throw new ObservationRefused(404, OBSERVE_ERRORS.checkpointUnavailable);
  if (
    executionId !== doc.execution.executionId ||
    identity.rosInvocationId !== doc.execution.rosInvocationId ||
    !Object.hasOwn(doc.runDigests, identity.runId)
  ) {
    throw new ObservationRefused(409, OBSERVE_ERRORS.identityChanged);
  }
  return { executionId, identity, binding: structuredClone(doc), language };
}

/** How the observed task stopped. */
type Stop = { kind: "interrupt"; inputs: JsonObject[] } | { kind: "state"; state: string; item: A2aItem };

export class Observer {
  private readonly tr: RunTranslator;
  private readonly upstream = new AbortController();
  private readonly waitStop = new AbortController();
  private readonly taskId: string;

  constructor(
    private readonly core: AdapterCore,
    private readonly obs: Observation,
    private readonly sink: EventSink,
  ) {
    this.taskId = obs.binding.execution.taskId!;
    this.tr = new RunTranslator({ threadId: obs.identity.threadId, runId: obs.identity.runId });
    sink.onDisconnect(() => {
      // Only this observer's own A2A requests end: the run goes on.
      this.upstream.abort();
      this.waitStop.abort();
    });
  }

  async run(): Promise<void> {
    const { core } = this;
    core.observers++;
    this.sendAll(this.tr.start());
    try {
      await this.follow();
    } catch (err) {
      this.fail(err);
    } finally {
      this.upstream.abort();
      core.observers--;
      core.lastActivity = core.now();
    }
  }

  private send(ev: AguiEvent): void {
    if (!this.sink.disconnected) this.sink.send(ev);
  }

  private sendAll(events: AguiEvent[]): void {
    for (const ev of events) this.send(ev);
  }

  private signals(): RequestSignals {
    return { signal: this.upstream.signal, stop: this.waitStop.signal };
  }

  private async follow(): Promise<void> {
    const { client } = this.core;
    let task = await this.getTask();
    let caughtUp = false;
    for (let n = 0; n < MAX_SUBSCRIPTIONS; n++) {
      const early = this.stopOf(task);
      if (early) {
        if (!caughtUp) await this.catchUp();
        return this.end(early);
      }
      // Subscribed first, then the snapshots read: every later event is on the stream.
      const stream = client.stream("SubscribeToTask", { id: this.taskId }, this.signals());
      const it = stream[Symbol.asyncIterator]();
      let next: IteratorResult<unknown> | undefined;
      try {
        next = await it.next();
      } catch (err) {
        if (this.upstream.signal.aborted) throw err;
        next = undefined; // A task that stopped meanwhile refuses the subscription: asked again below.
      }
      if (!caughtUp) {
        await this.catchUp();
        caughtUp = true;
      }
      try {
        for (; next && !next.done; next = await it.next()) {
          let stop: Stop | undefined;
          try {
            stop = this.handle(readItem(next.value));
          } catch (err) {
            await it.return?.(undefined); // an identity change: the stream is closed
            throw err;
          }
          if (stop) {
            await it.return?.(undefined);
            return this.end(stop);
          }
        }
      } catch (err) {
        // An identity change ends the observation; a stream that failed is asked again.
        if (this.upstream.signal.aborted || err instanceof RunFailure) throw err;
        this.core.logger?.warn(
          { taskId: this.taskId, err: (err as Error).message },
          "observed A2A stream failed",
        );
      }
      task = await this.getTask();
    }
    const last = this.stopOf(task);
    if (last) return this.end(last);
    throw new RunFailure("A2A_UNAVAILABLE", MSG.a2aUnavailable);
  }

  /**
   * The snapshots (MESSAGES_SNAPSHOT; for a pipeline its open steps and the
   * ACTIVITY_SNAPSHOT, then the journal events read after its cursor) and the
   * session event. The translator's cursor ends at the last event shown: the
   * stream's items repeat nothing.
   */
  private async catchUp(): Promise<void> {
    const { binding, identity } = this.obs;
    const { messages, pipeline } = await threadSnapshots(
      this.core.client,
      binding,
      this.taskId,
      this.signals(),
    );
    this.send(this.tr.messagesSnapshot(messages));
    if (pipeline) {
      this.sendAll(this.tr.recovery(pipeline.snapshot, pipeline.later, openStepKeys(pipeline.snapshot)));
    }
    const value: JsonObject = {
      schemaVersion: 1,
      threadId: identity.threadId,
      aguiRunId: identity.runId,
      executionId: binding.execution.executionId,
      contextId: binding.contextId,
      rosInvocationId: binding.execution.rosInvocationId,
      taskId: this.taskId,
    };
    if (binding.iacCodeSessionId) value.sessionId = binding.iacCodeSessionId;
    this.send(this.tr.custom(CUSTOM_SESSION, value));
  }

  private async getTask(): Promise<A2aItem> {
    const task = readItem({ result: { task: await this.core.client.getTask(this.taskId, this.signals()) } });
    this.checkIdentity(task);
    return task;
  }

  /** The task, context and session must stay the binding's: else the observation ends. */
  private checkIdentity(item: A2aItem): void {
    const { binding } = this.obs;
    if (item.taskId && item.taskId !== this.taskId)
      throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.taskChanged);
    if (item.contextId && item.contextId !== binding.contextId)
      throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.contextChanged);
    const session = sessionIdOf(item);
    if (session && binding.iacCodeSessionId && session !== binding.iacCodeSessionId)
      throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.sessionChanged);
  }

  /** Maps a stream item (a task snapshot is not mapped: it repeats what came before); its stop, if any. */
  private handle(item: A2aItem): Stop | undefined {
    this.checkIdentity(item);
    if (item.kind !== "task") this.sendAll(this.tr.map(item));
    return this.stopOf(item);
  }

  /** New inputs (answers this execution applied are not asked again), or a stop state. */
  private stopOf(item: A2aItem): Stop | undefined {
    const all = requiredInputs(item);
    const inputs = all
      .map((i) => i.value)
      .filter(
        (v) => typeof v.inputId !== "string" || appliedDigest(this.obs.binding, v.inputId) === undefined,
      );
    if (inputs.length) return { kind: "interrupt", inputs };
    const state = item.state;
    // Waiting only for answers already given: the turn goes on.
    if (state === "input-required" && all.length) return undefined;
    return state && STOP_STATES.has(state) ? { kind: "state", state, item } : undefined;
  }

  private async end(stop: Stop): Promise<void> {
    if (stop.kind === "interrupt") {
      const live = await this.core.store.load(this.obs.identity.threadId).catch(() => undefined);
      const interrupts = stop.inputs.map((value) => {
        const id = String(value.inputId);
        const pending: PendingInterrupt = live?.execution.pending[id] ??
          this.obs.binding.execution.pending[id] ?? {
            value,
            sideband: false,
            expiresAt: new Date(this.core.now() + this.core.ttlMs).toISOString(),
          };
        return toInterrupt(pending);
      });
      return this.sendAll(this.tr.finishInterrupt(interrupts));
    }
    if (stop.state === "completed" || stop.state === "input-required")
      return this.sendAll(this.tr.finishSuccess());
    if (stop.state === "canceled") throw new RunFailure("CANCELLED", MSG.cancelled);
    throw taskFailure(failureOf(stop.item));
  }

  private fail(err: unknown): void {
    if (this.sink.disconnected) return;
    let code = "A2A_UNAVAILABLE";
    let key: MessageKey = MSG.a2aUnavailable;
    let params: MessageParams = {};
    let localized: string | undefined;
    if (err instanceof RunFailure || err instanceof AguiError) {
      code = err.code;
      key = err.messageKey;
      params = err.params;
      if (err instanceof RunFailure) localized = err.localized;
    } else {
      this.core.logger?.warn({ taskId: this.taskId, err: (err as Error).message }, "observer failed");
    }
    this.sendAll(this.tr.closeAll());
    this.send(this.tr.error(code, localized ?? t(this.obs.language, key, params)));
  }
}
