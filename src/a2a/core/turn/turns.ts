// The step after admission: an admitted message becomes a new turn (the
// task's context is reserved, the turn starts), an answer to the running
// turn, an answer that resumes a turn restored after a restart, or a task that
// fails at once. Holds the running turns; whatever it changes is staged in the
// store, and the service commits before any event leaves. With other replicas
// on the store, replica-turns.ts decides where a turn runs.
import { setImmediate as afterGroupCommit } from "node:timers/promises";
import type { Logger } from "pino";
import { pb } from "../../../contract/index.js";
import { t, type Language } from "../../../i18n/index.js";
import type { AgentSession } from "../../../runtime/seam.js";
import type { ArtifactStore } from "../../stores/artifact-store.js";
import type { PushOutbox, StateStore } from "../../stores/state.js";
import type { Admission } from "../incoming-message/admission.js";
import type { ContextManager, LiveContext } from "./contexts.js";
import { A2AError, invalidParams, taskAlreadyWorking } from "../request/errors.js";
import type { ExposureOptions } from "./event-mapper.js";
import type { BackupGate } from "./backup-gate.js";
import { TurnExecution, type TurnObserver } from "./execution.js";
import { answerRefusal, matchesRequest } from "../incoming-message/input-answer.js";
import { serverStatusEvent, snapshotEvent, type TaskRecord } from "../task-record.js";

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
  /** Session backups at turn ends (IAC_CODE_CONFIG_BACKUP_DIR); absent when off. */
  backup?: BackupGate;
}

/** The first events of a started message (a task snapshot first) and the live events of its turn. */
export interface Started {
  first: pb.StreamResponse[];
  live?: AsyncIterableIterator<pb.StreamResponse>;
  record: TaskRecord;
}

export class Turns {
  private readonly running = new Map<string, TurnExecution>();

  constructor(protected readonly deps: TurnsDeps) {}

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
        return this.answer(admission, signal);
      case "interject":
        return this.interject(admission, signal);
      case "turn":
        return this.newTurn(admission, signal, streamed);
    }
  }

  /** A new turn: its context reserved (the same request may wait for the context's lease first, see ReplicaTurns). */
  protected newTurn(
    admission: Extract<Admission, { kind: "turn" }>,
    signal: AbortSignal,
    streamed: boolean,
  ): Started | Promise<Started> {
    const { record, message, language, cwd, input, settings } = admission;
    // Nothing awaits between these checks and the reservation: no other request can slip in.
    const context = this.deps.contexts.ensure(record.task.contextId, record.owner, cwd);
    const refuse = (key: string) => this.failAtOnce(record, message, language, key);
    if (context.record.owner !== record.owner) return refuse("a2a.contextOtherOwner");
    if (context.record.cwd !== cwd) return refuse("a2a.contextOtherWorkspace");
    if (context.execution) return refuse("a2a.taskAlreadyWorking");
    this.deps.contexts.bindChannel(context, settings.overrides.channel);

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
  protected async answer(
    admission: Extract<Admission, { kind: "answer" }>,
    signal: AbortSignal,
  ): Promise<Started> {
    const { record, message, answer, language, settings } = admission;
    const running = this.running.get(record.task.id);
    const context = await this.deps.contexts.find(record.task.contextId);
    if (running) {
      if (!context?.session) throw answerRefusal.unavailable();
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
      if (!envelope || record.state !== pb.TaskState.INPUT_REQUIRED) throw answerRefusal.inactive();
      const pending = { inputId: field("inputId"), toolUseId: field("toolUseId"), kind: field("kind") };
      if (!matchesRequest(answer, pending)) throw answerRefusal.mismatch();
    }
    if (!context || context.record.owner !== record.owner) throw answerRefusal.unavailable();
    this.deps.contexts.bindChannel(context, settings.overrides.channel);
    // The turn's credentials were not kept: the answer must bring them again.
    const missing = record.credentialNames.filter((name) => !settings.credentialNames.includes(name));
    if (missing.length > 0) {
      throw invalidParams(t(language, "a2a.credentialsRequired", { names: missing.join(", ") }), {
        reason: "credentials_required",
        missing: missing.join(","),
      });
    }
    if (context.execution) {
      throw taskAlreadyWorking(language, record.task.id);
    }
    const execution = this.reserve(context, record);
    let session: AgentSession;
    try {
      session = await this.deps.contexts.session(context);
      const wait = session.pendingInputs().find((p) => p.inputId === answer.answer.inputId);
      if (!wait || (revives && !session.revivable?.())) throw answerRefusal.unavailable();
      if (revives && !matchesRequest(answer, wait)) throw answerRefusal.mismatch();
      // The run's other waits (parallel candidates) can be answered before they are published again.
      if (revives) execution.waits.expect(session.pendingInputs());
    } catch (error) {
      this.release(context, execution);
      if (error instanceof A2AError) throw error;
      this.deps.logger.error({ err: error, taskId: record.task.id }, "session restore failed");
      throw new A2AError("InternalError", "The task's session could not be restored.");
    }
    const live = execution.hub.subscribe(signal);
    const first = [snapshotEvent(record.task)];
    record.language = language;
    execution.waits.accept(answer, message);
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
    execution.waits.expect(session.pendingInputs());
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
    if (context) this.deps.contexts.bindChannel(context, settings.overrides.channel);
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
    throw taskAlreadyWorking(language, record.task.id);
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
        backup: this.deps.backup,
      },
      record,
      () => this.release(context, execution),
    );
    execution.channel = this.deps.contexts.channelOf(context);
    context.execution = execution;
    this.running.set(record.task.id, execution);
    this.deps.contexts.touch(context);
    this.reserved(execution);
    return execution;
  }

  /** A turn was reserved (another replica may follow its events). */
  protected reserved(_execution: TurnExecution): void {}

  /** A turn's context is free again (its lease may go back). */
  protected released(_contextId: string): void {}

  private release(context: LiveContext, execution: TurnExecution): void {
    if (context.execution === execution) context.execution = undefined;
    if (this.running.get(execution.taskId) === execution) this.running.delete(execution.taskId);
    this.deps.contexts.touch(context);
    this.released(context.record.contextId);
  }

  private async audit(entry: Parameters<StateStore["audit"]["record"]>[0]): Promise<void> {
    this.deps.logger.info({ audit: entry }, "permission decision");
    await this.deps.state.audit.record(entry);
  }

  /** A task that fails before its turn starts (busy context, bad workspace, empty input). */
  protected failAtOnce(
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
