// The step after admission: an admitted message becomes a new turn (the
// task's context is reserved, the turn starts), an answer to the running
// turn, an answer that resumes a turn restored after a restart, or a task that
// fails at once. Holds the running turns; whatever it changes is staged in the
// store, and the service commits before any event leaves.
import { setImmediate as afterGroupCommit } from "node:timers/promises";
import type { Logger } from "pino";
import { pb } from "../../../contract/index.js";
import { t, type Language } from "../../../i18n/index.js";
import type { AgentSession } from "../../../runtime/seam.js";
import type { ArtifactStore } from "../../stores/artifact-store.js";
import type { PushOutbox, StateStore } from "../../stores/state.js";
import type { Admission } from "../incoming-message/admission.js";
import type { Cluster, LeaseResult, ReplicaCommand } from "./cluster.js";
import type { ContextManager, LiveContext } from "./contexts.js";
import { A2AError, invalidParams } from "../request/errors.js";
import type { ExposureOptions } from "./event-mapper.js";
import { TurnExecution, type TurnObserver } from "./execution.js";
import { matchesRequest } from "../incoming-message/input-answer.js";
import {
  INTERRUPTED_STATES,
  isTerminal,
  serverStatusEvent,
  snapshotEvent,
  type TaskRecord,
} from "../task-record.js";

export interface TurnsDeps {
  state: StateStore;
  artifactFiles: ArtifactStore;
  contexts: ContextManager;
  logger: Logger;
  exposure: ExposureOptions;
  autoApprovePermissions: boolean;
  observer?: TurnObserver;
  /** Stages a push delivery of a task event (a no-op without push). */
  notify: PushOutbox["enqueue"];
  /** The other replicas on the shared store (store: redis); absent for one process. */
  cluster?: Cluster;
}

/** The first events of a started message (a task snapshot first) and the live events of its turn. */
export interface Started {
  first: pb.StreamResponse[];
  live?: AsyncIterableIterator<pb.StreamResponse>;
  record: TaskRecord;
}

const waitPointUnavailable = () =>
  invalidParams("permission_resume_invalid: permission wait point is unavailable.");

export class Turns {
  private readonly running = new Map<string, TurnExecution>();
  /** Requests between taking a context's lease and starting (or not) its turn, by context. */
  private readonly claims = new Map<string, number>();

  constructor(private readonly deps: TurnsDeps) {
    deps.cluster?.onCommand((command) => this.onCommand(command));
    deps.cluster?.onLost((contextId) => void this.onLeaseLost(contextId));
  }

  /** The running turn of a task. */
  get(taskId: string): TurnExecution | undefined {
    return this.running.get(taskId);
  }

  all(): TurnExecution[] {
    return [...this.running.values()];
  }

  /** `streamed`: the caller writes the first events as they come (SendStreamingMessage). */
  async start(admission: Admission, signal: AbortSignal, streamed = false): Promise<Started> {
    switch (admission.kind) {
      case "refused":
        return this.failAtOnce(
          admission.record,
          admission.message,
          admission.language,
          admission.key,
          admission.params,
        );
      case "answer":
        return this.deps.cluster && !this.running.has(admission.record.task.id)
          ? this.answerShared(this.deps.cluster, admission, signal)
          : this.answer(admission, signal);
      case "interject":
        return this.interject(admission, signal);
      case "turn":
        return this.deps.cluster
          ? this.newTurnShared(this.deps.cluster, admission, signal, streamed)
          : this.newTurn(admission, signal, streamed);
    }
  }

  private newTurn(
    admission: Extract<Admission, { kind: "turn" }>,
    signal: AbortSignal,
    streamed: boolean,
  ): Started {
    const { record, message, language, cwd, input, settings } = admission;
    // Nothing awaits between these checks and the reservation: no other request can slip in.
    const context = this.deps.contexts.ensure(record.task.contextId, record.owner, cwd);
    const refuse = (key: string) => this.failAtOnce(record, message, language, key);
    if (context.record.owner !== record.owner) return refuse("a2a.contextOtherOwner");
    if (context.record.cwd !== cwd) return refuse("a2a.contextOtherWorkspace");
    if (context.execution) return refuse("a2a.taskAlreadyWorking");

    record.beginTurn(message, language, settings.credentialNames);
    this.deps.state.tasks.save(record);
    const execution = this.reserve(context, record);
    const live = execution.hub.subscribe(signal);
    const first = [snapshotEvent(record.task)];
    this.deps.notify(record.task.id, first[0]);
    const overrides = settings.overrides;
    const open = () => this.deps.contexts.session(context);
    execution.start(
      // A streamed turn's runtime starts after this loop turn's group commit (the immediate queued
      // by the save above runs first): the task's first event is written before the turn's work
      // competes with it. A unary caller is told nothing before the end: its turn starts at once
      // (deferred, its SUBMITTED row would be written in a commit of its own).
      streamed ? () => afterGroupCommit().then(open) : open,
      (session) =>
        session.runTurn(
          { text: input.text, images: input.images, overrides, taskId: record.task.id },
          execution.signal,
        ),
    );
    return { first, live, record };
  }

  /** A human-input answer: resumes the live turn, or a turn restored after a restart. */
  private async answer(
    admission: Extract<Admission, { kind: "answer" }>,
    signal: AbortSignal,
  ): Promise<Started> {
    const { record, message, answer, language, settings } = admission;
    const running = this.running.get(record.task.id);
    const context = await this.deps.contexts.find(record.task.contextId);
    if (running) {
      if (!context?.session) throw waitPointUnavailable();
      const live = running.hub.subscribe(signal);
      const first = [snapshotEvent(running.record.task)];
      try {
        running.answer(answer, message, context.session);
      } catch (error) {
        await live.return?.();
        throw error;
      }
      return { first, live, record: running.record };
    }
    // No live turn: only a wait point restored from the store can take the answer. A task still
    // WORKING is a pipeline run whose process died while it ran: the answer revives it.
    const revives = record.state === pb.TaskState.WORKING || record.state === pb.TaskState.SUBMITTED;
    if (!revives) {
      const envelope = record.pendingInput;
      const field = (key: string): string => {
        const value = envelope?.[key];
        return typeof value === "string" ? value : "";
      };
      if (!envelope || record.state !== pb.TaskState.INPUT_REQUIRED)
        throw invalidParams("permission_resume_invalid: pending permission is not active.");
      const pending = { inputId: field("inputId"), toolUseId: field("toolUseId"), kind: field("kind") };
      if (!matchesRequest(answer, pending))
        throw invalidParams("input_response_mismatch: permission correlation does not match.");
    }
    if (!context || context.record.owner !== record.owner) throw waitPointUnavailable();
    // The turn's credentials were not kept: the answer must bring them again.
    const missing = record.credentialNames.filter((name) => !settings.credentialNames.includes(name));
    if (missing.length > 0) {
      throw invalidParams(t(language, "a2a.credentialsRequired", { names: missing.join(", ") }), {
        reason: "credentials_required",
        missing: missing.join(","),
      });
    }
    if (context.execution) {
      throw new A2AError("UnsupportedOperationError", t(language, "a2a.taskAlreadyWorking"), {
        taskId: record.task.id,
      });
    }
    const execution = this.reserve(context, record);
    let session: AgentSession;
    try {
      session = await this.deps.contexts.session(context);
      const wait = session.pendingInputs().find((p) => p.inputId === answer.answer.inputId);
      if (!wait || (revives && !session.revivable?.())) throw waitPointUnavailable();
      if (revives && !matchesRequest(answer, wait))
        throw invalidParams("input_response_mismatch: permission correlation does not match.");
      // The run's other waits (parallel candidates) can be answered before they are published again.
      if (revives) execution.expect(session.pendingInputs());
    } catch (error) {
      this.release(context, execution);
      if (error instanceof A2AError) throw error;
      this.deps.logger.error({ err: error, taskId: record.task.id }, "session restore failed");
      throw new A2AError("InternalError", "The task's session could not be restored.");
    }
    const live = execution.hub.subscribe(signal);
    const first = [snapshotEvent(record.task)];
    record.language = language;
    execution.accept(answer, message);
    execution.start(
      () => Promise.resolve(session),
      (s) => s.resumeTurn(settings.overrides, execution.signal),
      answer,
    );
    return { first, live, record };
  }

  /**
   * Continues a task whose turn died with its process (a restart, a replica
   * lost) while a pipeline run was working: the run goes on from the store
   * (its waits published again, answerable at once). False when it cannot:
   * not a pipeline run, the context busy, or the turn needed credentials the
   * request brought (they are never stored).
   */
  async revive(record: TaskRecord): Promise<boolean> {
    if (record.credentialNames.length > 0) return false;
    const context = await this.deps.contexts.find(record.task.contextId);
    if (!context || context.execution || context.record.owner !== record.owner) return false;
    let session: AgentSession;
    try {
      session = await this.deps.contexts.session(context);
    } catch (error) {
      this.deps.logger.error({ err: error, taskId: record.task.id }, "session restore failed");
      return false;
    }
    if (!session.revivable?.() || context.execution) return false;
    const execution = this.reserve(context, record);
    execution.expect(session.pendingInputs());
    execution.start(
      () => Promise.resolve(session),
      (s) => s.resumeTurn({ language: record.language }, execution.signal),
    );
    return true;
  }

  /**
   * A message to a task whose turn still runs: a pipeline run takes it (the
   * candidate choice, or an interruption its judge classifies) and the caller
   * follows the running turn; any other turn refuses it.
   */
  private async interject(
    admission: Extract<Admission, { kind: "interject" }>,
    signal: AbortSignal,
  ): Promise<Started> {
    const { record, message, language, input, settings } = admission;
    const running = this.running.get(record.task.id);
    const context = await this.deps.contexts.find(record.task.contextId);
    const turn = { text: input.text, images: [], overrides: settings.overrides, taskId: record.task.id };
    if (running && context?.session?.interject) {
      const live = running.hub.subscribe(signal);
      if (context.session.interject(turn)) {
        running.record.task.history.push(message);
        this.deps.state.tasks.save(running.record);
        return { first: [snapshotEvent(running.record.task)], live, record: running.record };
      }
      await live.return?.();
    }
    throw new A2AError("UnsupportedOperationError", t(language, "a2a.taskAlreadyWorking"), {
      taskId: record.task.id,
    });
  }

  private reserve(context: LiveContext, record: TaskRecord): TurnExecution {
    const execution: TurnExecution = new TurnExecution(
      {
        state: this.deps.state,
        artifactFiles: this.deps.artifactFiles,
        logger: this.deps.logger,
        exposure: this.deps.exposure,
        autoApprovePermissions: this.deps.autoApprovePermissions,
        audit: (entry) => this.audit(entry),
        observer: this.deps.observer,
        notify: this.deps.notify,
      },
      record,
      () => this.release(context, execution),
    );
    context.execution = execution;
    this.running.set(record.task.id, execution);
    this.deps.contexts.touch(context);
    this.deps.cluster?.relay(record.task.id, execution.hub.subscribe());
    return execution;
  }

  private release(context: LiveContext, execution: TurnExecution): void {
    if (context.execution === execution) context.execution = undefined;
    if (this.running.get(execution.taskId) === execution) this.running.delete(execution.taskId);
    this.deps.contexts.touch(context);
    if (this.deps.cluster) void this.releaseLease(context.record.contextId);
  }

  private async audit(entry: Parameters<StateStore["audit"]["record"]>[0]): Promise<void> {
    this.deps.logger.info({ audit: entry }, "permission decision");
    await this.deps.state.audit.record(entry);
  }

  // ---- several replicas on one store (a Cluster) ------------------------------

  /**
   * A new turn takes its context's lease first: a context busy on another
   * replica gets the same answer as one busy here. A context newly taken may
   * have run turns elsewhere since this replica last held it: its cached
   * session is dropped and read again from the shared store.
   */
  private async newTurnShared(
    cluster: Cluster,
    admission: Extract<Admission, { kind: "turn" }>,
    signal: AbortSignal,
    streamed: boolean,
  ): Promise<Started> {
    const { record, message, language } = admission;
    const contextId = record.task.contextId;
    const lease = await this.claim(cluster, contextId);
    if (lease === "busy") {
      this.unclaim(contextId);
      // A task of ours already has history: a plain message to it while its turn runs elsewhere.
      if (
        record.task.history.length > 0 &&
        !INTERRUPTED_STATES.has(record.state) &&
        !isTerminal(record.state)
      ) {
        throw new A2AError("UnsupportedOperationError", t(language, "a2a.taskAlreadyWorking"), {
          taskId: record.task.id,
        });
      }
      return this.failAtOnce(record, message, language, "a2a.taskAlreadyWorking");
    }
    if (lease === "acquired") this.deps.contexts.dropSession(contextId);
    try {
      return this.newTurn(admission, signal, streamed);
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
  private async answerShared(
    cluster: Cluster,
    admission: Extract<Admission, { kind: "answer" }>,
    signal: AbortSignal,
  ): Promise<Started> {
    const { record, message, answer } = admission;
    const contextId = record.task.contextId;
    const lease = await this.claim(cluster, contextId);
    if (lease !== "busy") {
      if (lease === "acquired") this.deps.contexts.dropSession(contextId);
      try {
        return await this.answer(admission, signal);
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
    const cluster = this.deps.cluster;
    if (!cluster || !(await cluster.heldElsewhere(record.task.contextId))) return false;
    await cluster.forward(record.task.contextId, { type: "cancel", taskId: record.task.id });
    const stored = await this.deps.state.tasks.get(record.task.id);
    if (stored) record.task = stored.task;
    return true;
  }

  /** The events of a task whose turn runs on another replica; undefined when none runs it. */
  async followElsewhere(
    record: TaskRecord,
    signal: AbortSignal,
  ): Promise<AsyncIterableIterator<pb.StreamResponse> | undefined> {
    const cluster = this.deps.cluster;
    if (!cluster || INTERRUPTED_STATES.has(record.state) || isTerminal(record.state)) return undefined;
    if (!(await cluster.heldElsewhere(record.task.contextId))) return undefined;
    return cluster.follow(record.task.id, record.task.contextId, signal);
  }

  /** A command from another replica for a turn running here. */
  private async onCommand(command: ReplicaCommand): Promise<void> {
    const running = this.running.get(command.taskId);
    if (!running) throw invalidParams("permission_resume_invalid: the task's turn is not running.");
    const context = await this.deps.contexts.find(running.contextId);
    if (command.type === "cancel") await running.cancel(context?.session);
    else {
      if (!context?.session) throw waitPointUnavailable();
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
  private async claim(cluster: Cluster, contextId: string): Promise<LeaseResult> {
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
  async takeIdle(cluster: Cluster, contextId: string): Promise<boolean> {
    if (this.claims.has(contextId) || this.deps.contexts.loaded(contextId)?.execution) return false;
    if ((await this.claim(cluster, contextId)) === "acquired") return true;
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
      if (this.deps.cluster && !context?.execution && !this.claims.has(contextId))
        await this.deps.cluster.release(contextId);
      else await this.deps.state.commit();
    } catch (error) {
      this.deps.logger.warn({ err: error, contextId }, "context lease not released (it expires)");
    }
  }

  /** A task that fails before its turn starts (busy context, bad workspace, empty input). */
  private failAtOnce(
    record: TaskRecord,
    message: pb.Message,
    language: Language,
    key: string,
    params: Record<string, string> = {},
  ): Started {
    // In English in the log, with the ids the client can quote.
    this.deps.logger.info(
      {
        taskId: record.task.id,
        contextId: record.task.contextId,
        messageId: message.messageId,
        reason: t("en", key, params),
      },
      "message refused",
    );
    const text = t(language, key, params);
    record.beginTurn(message, language, []);
    const first = [snapshotEvent(record.task)];
    const failed = serverStatusEvent(record.task, pb.TaskState.FAILED, text, "failed");
    record.apply(failed, true);
    this.deps.state.tasks.save(record);
    for (const event of [...first, failed]) this.deps.notify(record.task.id, event);
    return { first: [...first, failed], record };
  }
}
