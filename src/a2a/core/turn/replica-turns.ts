// The turns of a server sharing its store with other replicas (store: redis;
// core/turn/cluster.ts): a turn runs on the replica holding its context's
// lease. A new turn takes the lease first (a context busy elsewhere answers as
// one busy here); an answer, a cancel or a subscription for a turn running
// elsewhere is handed to that replica or follows its events; a lease goes
// back once no turn or request holds the context here.
import { pb } from "../../../contract/index.js";
import type { Admission } from "../incoming-message/admission.js";
import { invalidParams, taskAlreadyWorking } from "../request/errors.js";
import { answerRefusal } from "../incoming-message/input-answer.js";
import { INTERRUPTED_STATES, isTerminal, snapshotEvent, type TaskRecord } from "../task-record.js";
import type { Cluster, LeaseResult, ReplicaCommand } from "./cluster.js";
import type { TurnExecution } from "./execution.js";
import { Turns, type Started, type TurnsDeps } from "./turns.js";

export class ReplicaTurns extends Turns {
  /** Requests between taking a context's lease and starting (or not) its turn, by context. */
  private readonly claims = new Map<string, number>();

  constructor(
    readonly cluster: Cluster,
    deps: TurnsDeps,
  ) {
    super(deps);
    cluster.onCommand((command) => this.onCommand(command));
    cluster.onLost((contextId) => void this.onLeaseLost(contextId));
  }

  /** Other replicas follow a local turn's events. */
  protected override reserved(execution: TurnExecution): void {
    this.cluster.relay(execution.taskId, execution.hub.subscribe());
  }

  protected override released(contextId: string): void {
    void this.releaseLease(contextId);
  }

  /**
   * A new turn takes its context's lease first: a context busy on another
   * replica gets the same answer as one busy here. A context newly taken may
   * have run turns elsewhere since this replica last held it: its cached
   * session is dropped and read again from the shared store.
   */
  protected override async newTurn(
    admission: Extract<Admission, { kind: "turn" }>,
    signal: AbortSignal,
    streamed: boolean,
  ): Promise<Started> {
    const { record, message, language } = admission;
    const contextId = record.task.contextId;
    const lease = await this.claim(contextId);
    if (lease === "busy") {
      this.unclaim(contextId);
      // A task of ours already has history: a plain message to it while its turn runs elsewhere.
      if (
        record.task.history.length > 0 &&
        !INTERRUPTED_STATES.has(record.state) &&
        !isTerminal(record.state)
      ) {
        throw taskAlreadyWorking(language, record.task.id);
      }
      return this.failAtOnce(record, message, language, "a2a.taskAlreadyWorking");
    }
    if (lease === "acquired") this.deps.contexts.dropSession(contextId);
    try {
      return super.newTurn(admission, signal, streamed);
    } finally {
      this.unclaim(contextId);
    }
  }

  /**
   * An answer for a task whose turn is not running here: the replica holding
   * the context runs it and gets the answer, and this caller follows the
   * turn's events; when no replica holds it (its replica is gone), the wait
   * point is restored from the shared session and resumed here.
   */
  protected override async answer(
    admission: Extract<Admission, { kind: "answer" }>,
    signal: AbortSignal,
  ): Promise<Started> {
    const { record, message, answer } = admission;
    if (this.get(record.task.id)) return super.answer(admission, signal);
    const cluster = this.cluster;
    const contextId = record.task.contextId;
    const lease = await this.claim(contextId);
    if (lease !== "busy") {
      if (lease === "acquired") this.deps.contexts.dropSession(contextId);
      try {
        return await super.answer(admission, signal);
      } finally {
        this.unclaim(contextId);
      }
    }
    this.unclaim(contextId);
    const live = await cluster.follow(record.task.id, contextId, signal);
    try {
      await cluster.forward(contextId, { type: "answer", taskId: record.task.id, answer, message });
    } catch (error) {
      await live.return?.();
      throw error;
    }
    return { first: [snapshotEvent(record.task)], live: this.refreshing(record, live), record };
  }

  /**
   * Events followed from another replica, folded into the caller's record; at
   * an interruption or the end the record is read again from the store (the
   * other replica commits before it publishes), so a unary answer returns the
   * task as it is.
   */
  private async *refreshing(
    record: TaskRecord,
    live: AsyncIterableIterator<pb.StreamResponse>,
  ): AsyncIterableIterator<pb.StreamResponse> {
    try {
      for await (const event of live) {
        record.apply(event, false);
        const state = event.payload.case === "statusUpdate" ? event.payload.value.status?.state : undefined;
        if (state !== undefined && (INTERRUPTED_STATES.has(state) || isTerminal(state))) {
          const stored = await this.deps.state.tasks.get(record.task.id);
          if (stored) record.task = stored.task;
        }
        yield event;
      }
    } finally {
      await live.return?.();
    }
  }

  /** Cancels a task whose turn runs on another replica; false when no other replica runs it. */
  async cancelElsewhere(record: TaskRecord): Promise<boolean> {
    if (!(await this.cluster.heldElsewhere(record.task.contextId))) return false;
    await this.cluster.forward(record.task.contextId, { type: "cancel", taskId: record.task.id });
    const stored = await this.deps.state.tasks.get(record.task.id);
    if (stored) record.task = stored.task;
    return true;
  }

  /** The events of a task whose turn runs on another replica; undefined when none runs it. */
  async followElsewhere(
    record: TaskRecord,
    signal: AbortSignal,
  ): Promise<AsyncIterableIterator<pb.StreamResponse> | undefined> {
    if (INTERRUPTED_STATES.has(record.state) || isTerminal(record.state)) return undefined;
    if (!(await this.cluster.heldElsewhere(record.task.contextId))) return undefined;
    return this.cluster.follow(record.task.id, record.task.contextId, signal);
  }

  /** A command from another replica for a turn running here. */
  private async onCommand(command: ReplicaCommand): Promise<void> {
    const running = this.get(command.taskId);
    if (!running) throw invalidParams("permission_resume_invalid: the task's turn is not running.");
    const context = await this.deps.contexts.find(running.contextId);
    if (command.type === "cancel") await running.cancel(context?.session);
    else {
      if (!context?.session) throw answerRefusal.unavailable();
      running.answer(command.answer, command.message, context.session);
    }
    await this.deps.state.commit();
  }

  /** This replica lost a context's lease: its turn there stops (its writes are refused anyway). */
  private async onLeaseLost(contextId: string): Promise<void> {
    const context = await this.deps.contexts.find(contextId);
    if (context?.execution) await context.execution.cancel(context.session);
  }

  /**
   * Takes the context's lease for a request that may start a turn on it (see
   * unclaim); a lease whose replica is gone is taken over at once.
   */
  private async claim(contextId: string): Promise<LeaseResult> {
    const cluster = this.cluster;
    this.claims.set(contextId, (this.claims.get(contextId) ?? 0) + 1);
    try {
      const lease = await cluster.acquire(contextId);
      if (lease !== "busy") return lease;
      return (await cluster.takeOver(contextId)) ? "acquired" : "busy";
    } catch (error) {
      this.unclaim(contextId);
      throw error;
    }
  }

  /** For the orphan sweep: the context's lease when nothing here or elsewhere is at the context (see unclaim). */
  async takeIdle(contextId: string): Promise<boolean> {
    if (this.claims.has(contextId) || this.deps.contexts.loaded(contextId)?.execution) return false;
    if ((await this.claim(contextId)) === "acquired") return true;
    this.unclaim(contextId);
    return false;
  }

  /** The request is past starting its turn: the lease goes back unless a turn or a request holds the context. */
  unclaim(contextId: string): void {
    const left = (this.claims.get(contextId) ?? 1) - 1;
    if (left > 0) this.claims.set(contextId, left);
    else this.claims.delete(contextId);
    void this.releaseLease(contextId);
  }

  /** Commits what the context's turn wrote and, when no turn or request holds the context here, gives its lease back with it. */
  private async releaseLease(contextId: string): Promise<void> {
    try {
      const context = this.deps.contexts.loaded(contextId);
      // A claim arriving before the release is sent keeps the lease (Cluster.acquire).
      if (!context?.execution && !this.claims.has(contextId)) await this.cluster.release(contextId);
      else await this.deps.state.commit();
    } catch (error) {
      this.deps.logger.warn({ err: error, contextId }, "context lease not released (it expires)");
    }
  }
}
