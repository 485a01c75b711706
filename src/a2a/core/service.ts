// The A2A service core: every A2A method, transport-agnostic. Bindings decode
// the wire into protobuf-es requests, call these methods with a CallContext,
// and encode the result (or the A2AError) back. No binding holds logic.
// A message goes one way: incoming-message/admission.ts -> turn/turns.ts ->
// turn/execution.ts -> store (README.md, "The core's rooms").
import { create } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import { pb } from "../../contract/index.js";
import { t } from "../../i18n/index.js";
import type { AgentRuntime } from "../../runtime/seam.js";
import type { ArtifactStore } from "../stores/artifact-store.js";
import type { PushConfigs } from "../push/configs.js";
import type { PushOutbox, StateStore } from "../stores/state.js";
import { admit, type AdmissionDeps } from "./incoming-message/admission.js";
import type { CallContext } from "./request/call-context.js";
import type { Cluster } from "./turn/cluster.js";
import type { AgentCards } from "./card.js";
import { ContextManager } from "./turn/contexts.js";
import { A2AError, invalidParams, taskNotFound } from "./request/errors.js";
import { isValidA2aId } from "./request/ids.js";
import { checkHistoryLength, listTasksQuery, listTasksResponse } from "./request/list-tasks.js";
import type { MediaTypes } from "./incoming-message/parts.js";
import { checkRequiredExtensions } from "./request/service-params.js";
import {
  INTERRUPTED_STATES,
  TaskRecord,
  isTerminal,
  serverStatusEvent,
  snapshotEvent,
  trimTask,
} from "./task-record.js";
import { settleInterruptedTasks, settleOrphanedTasks } from "./turn/recovery.js";
import type { TurnObserver } from "./turn/execution.js";
import { permissionAudit } from "./turn/input-waits.js";
import { ReplicaTurns } from "./turn/replica-turns.js";
import { Turns, type TurnsDeps } from "./turn/turns.js";
import { BackupGate } from "./turn/backup-gate.js";
import { restoreFromBackup } from "./turn/backup-restore.js";
import type { SessionBackups } from "../stores/session-backup.js";

export interface A2AServiceOptions {
  runtime: AgentRuntime;
  state: StateStore;
  artifactFiles: ArtifactStore;
  logger: Logger;
  /** Cards are built once the listener knows its port. */
  cards: () => AgentCards;
  thinkingExposure: readonly string[];
  autoApprovePermissions: boolean;
  requiredExtensions: readonly string[];
  /** Push notification configs; undefined: push is off (PushNotificationNotSupportedError). */
  push?: PushConfigs;
  idleContextMs: number;
  defaultCwd: string;
  allowedRoots: readonly string[];
  mediaTypes: MediaTypes;
  /** Told of every turn's end and of input waits (metrics). */
  turnObserver?: TurnObserver;
  /** The other replicas on the shared store (store: redis); absent for one process. */
  cluster?: Cluster;
  /** With a cluster: how often tasks left running by a replica that is gone are looked for. */
  orphanSweepMs?: number;
  /** Told of each context's workspace when it is created or restored (safe mode's known roots). */
  workspaceSeen?: (cwd: string) => void;
  /** The telemetry channel of a context no message named one for (IAC_CODE_CHANNEL, else "unknown"). */
  defaultChannel?: string;
  /** Session backups (IAC_CODE_CONFIG_BACKUP_DIR): committed at turn ends, restored on the next message. */
  backups?: SessionBackups;
}

type Stream = AsyncIterable<pb.StreamResponse>;

export class A2AService {
  private readonly state: StateStore;
  private readonly contexts: ContextManager;
  private readonly turns: Turns;
  /** The same turns, when other replicas share the store. */
  private readonly replicas?: ReplicaTurns;
  private readonly admission: AdmissionDeps;
  private readonly sweepTimer: NodeJS.Timeout;
  private orphanTimer?: NodeJS.Timeout;
  private closing = false;
  /** Stages a push delivery of a task event; a no-op while push is off. */
  private readonly notify: PushOutbox["enqueue"];
  /** Session backups at turn ends and cancels (IAC_CODE_CONFIG_BACKUP_DIR); absent when off. */
  private readonly backupGate?: BackupGate;

  constructor(private readonly options: A2AServiceOptions) {
    this.state = options.state;
    this.notify = options.push ? (taskId, event) => options.state.pushJobs.enqueue(taskId, event) : () => {};
    this.backupGate = options.backups && new BackupGate(options.backups, options.logger);
    this.contexts = new ContextManager(
      options.runtime,
      options.state.contexts,
      options.logger,
      options.idleContextMs,
      options.workspaceSeen,
      options.defaultChannel,
    );
    const turns: TurnsDeps = {
      state: options.state,
      artifactFiles: options.artifactFiles,
      contexts: this.contexts,
      logger: options.logger,
      exposure: {
        toolTrace: options.thinkingExposure.includes("tool_trace"),
        rawThinking: options.thinkingExposure.includes("raw_thinking"),
      },
      autoApprovePermissions: options.autoApprovePermissions,
      observer: options.turnObserver,
      notify: this.notify,
      ...(this.backupGate ? { backup: this.backupGate } : {}),
    };
    this.replicas = options.cluster && new ReplicaTurns(options.cluster, turns);
    this.turns = this.replicas ?? new Turns(turns);
    this.admission = {
      closing: () => this.closing,
      requiredExtensions: options.requiredExtensions,
      findTask: (taskId, owner) => this.findTask(taskId, owner),
      isRunning: (taskId) => this.turns.get(taskId) !== undefined,
      checkTurn: options.runtime.checkTurn?.bind(options.runtime),
      findContext: (contextId) => this.contexts.find(contextId),
      defaultCwd: options.defaultCwd,
      allowedRoots: options.allowedRoots,
      mediaTypes: options.mediaTypes,
    };
    const sweepEvery = Math.max(50, Math.min(options.idleContextMs / 2, 300_000));
    this.sweepTimer = setInterval(() => {
      this.contexts
        .evictIdle()
        .catch((error: unknown) => options.logger.warn({ err: error }, "context sweep failed"));
    }, sweepEvery);
    this.sweepTimer.unref();
  }

  // ---- Messages -------------------------------------------------------------

  async sendMessage(request: pb.SendMessageRequest, ctx: CallContext): Promise<pb.SendMessageResponse> {
    checkHistoryLength(request.configuration?.historyLength, "configuration.historyLength");
    const { live, record } = await this.turns.start(await this.admit(request, ctx), ctx.signal);
    const historyLength = request.configuration?.historyLength;
    let task: pb.Task;
    try {
      if (live && !request.configuration?.returnImmediately) {
        for await (const event of live) {
          const state = event.payload.case === "statusUpdate" ? event.payload.value.status?.state : undefined;
          if (state !== undefined && (INTERRUPTED_STATES.has(state) || isTerminal(state))) break;
        }
      }
      // The answer is the task as it is now (the turn goes on after a returnImmediately).
      task = trimTask(record.task, historyLength);
    } finally {
      await live?.return?.();
    }
    await this.state.commit();
    return create(pb.SendMessageResponseSchema, { payload: { case: "task", value: task } });
  }

  async sendStreamingMessage(request: pb.SendMessageRequest, ctx: CallContext): Promise<Stream> {
    checkHistoryLength(request.configuration?.historyLength, "configuration.historyLength");
    const { first, live } = await this.turns.start(await this.admit(request, ctx), ctx.signal, true);
    return this.durable(first, live);
  }

  /**
   * Admission, and the push config the message carries for its task
   * (configuration.taskPushNotificationConfig): checked before any task
   * exists, staged before the task's first event so that event is pushed too.
   */
  private async admit(request: pb.SendMessageRequest, ctx: CallContext): ReturnType<typeof admit> {
    const inline = request.configuration?.taskPushNotificationConfig;
    const prefix = "configuration.taskPushNotificationConfig.";
    if (inline) this.pushConfigs(ctx).check(inline, prefix);
    await restoreFromBackup(this.options.backups, request.message?.contextId, this.contexts);
    const admission = await admit(request, ctx, this.admission);
    if (inline) this.pushConfigs(ctx).save(ctx.owner, admission.record.task.id, inline);
    return admission;
  }

  /**
   * The events of a stream, each one committed to the store before it is
   * handed to the binding: a client never hears of a state that a crash
   * right after could lose.
   */
  private async *durable(
    first: pb.StreamResponse[],
    live?: AsyncIterableIterator<pb.StreamResponse>,
  ): Stream {
    try {
      for (const event of first) {
        await this.state.commit();
        yield event;
      }
      if (!live) return;
      for (let step = await live.next(); !step.done; step = await live.next()) {
        await this.state.commit();
        yield step.value;
      }
    } finally {
      await live?.return?.();
    }
  }

  // ---- Tasks ----------------------------------------------------------------

  /** The caller's task: the live record while a turn runs, else the stored one. */
  private async findTask(taskId: string, owner: string): Promise<TaskRecord | undefined> {
    if (!isValidA2aId(taskId)) return undefined;
    const running = this.turns.get(taskId);
    if (running) return running.record.owner === owner ? running.record : undefined;
    const stored = await this.state.tasks.get(taskId);
    return stored && stored.owner === owner ? TaskRecord.fromStored(stored) : undefined;
  }

  /**
   * The task a method names, the caller's (required extensions first, then
   * the id, then TaskNotFound for an unknown task or another owner's).
   */
  private async callerTask(taskId: string, ctx: CallContext, field = "id"): Promise<TaskRecord> {
    checkRequiredExtensions(this.options.requiredExtensions, ctx.requestedExtensions);
    if (!taskId) throw invalidParams(`${field} is required`, { field });
    const record = await this.findTask(taskId, ctx.owner);
    if (!record) throw taskNotFound(taskId);
    return record;
  }

  async getTask(request: pb.GetTaskRequest, ctx: CallContext): Promise<pb.Task> {
    checkRequiredExtensions(this.options.requiredExtensions, ctx.requestedExtensions);
    if (!request.id) throw invalidParams("id is required", { field: "id" });
    checkHistoryLength(request.historyLength);
    const record = await this.callerTask(request.id, ctx);
    await this.state.commit();
    return trimTask(record.task, request.historyLength);
  }

  async listTasks(request: pb.ListTasksRequest, ctx: CallContext): Promise<pb.ListTasksResponse> {
    checkRequiredExtensions(this.options.requiredExtensions, ctx.requestedExtensions);
    const query = listTasksQuery(request, ctx.owner);
    const page = await this.state.tasks.list(query);
    if (!page) throw invalidParams(`Invalid page token: ${request.pageToken}`);
    // A running turn's record is fresher than its last commit.
    const tasks = page.tasks.map((stored) => this.turns.get(stored.task.id)?.record.task ?? stored.task);
    return listTasksResponse(tasks, page, request);
  }

  async cancelTask(request: pb.CancelTaskRequest, ctx: CallContext): Promise<pb.Task> {
    const record = await this.callerTask(request.id, ctx);
    const running = this.turns.get(request.id);
    if (running) {
      const context = await this.contexts.find(record.task.contextId);
      await running.cancel(context?.session);
      await this.state.commit();
      return trimTask(running.record.task);
    }
    if (await this.replicas?.cancelElsewhere(record)) return trimTask(record.task);
    // A wait point kept across a restart: the task is canceled without reviving its turn.
    if (record.state === pb.TaskState.INPUT_REQUIRED && record.pendingInput) {
      await this.cancelWaiting(record);
      return trimTask(record.task);
    }
    throw new A2AError("TaskNotCancelableError", "Task cannot be canceled", { taskId: request.id });
  }

  /**
   * Cancels a task that waits for input with no live turn (kept across a
   * restart). A pending permission is audited as cancelled; the runtime's wait
   * point is superseded by the context's next message.
   */
  private async cancelWaiting(record: TaskRecord): Promise<void> {
    const { contextId } = record.task;
    const canceled = serverStatusEvent(
      record.task,
      pb.TaskState.CANCELED,
      t(record.language, "a2a.taskCanceled"),
      "canceled",
    );
    // With session backups the cancel is published once backed up; blocked, the task stays waiting.
    const gated = await this.backupGate?.cancelWaiting(record, canceled);
    if (gated && !gated.ok) {
      this.state.tasks.save(record);
      this.notify(record.task.id, gated.blocked);
      return this.state.commit();
    }
    const input = record.pendingInput ?? {};
    const text = (key: string): string => (typeof input[key] === "string" ? input[key] : "");
    if (text("kind") === "permission") {
      const session = await this.state.contexts.get(contextId);
      const wait = { toolName: text("toolName"), toolUseId: text("toolUseId"), inputId: text("inputId") };
      const entry = permissionAudit(record, session?.sessionId, wait, "cancelled", "task_canceled");
      this.options.logger.info({ audit: entry }, "permission decision");
      await this.state.audit.record(entry);
    }
    record.apply(canceled, true);
    this.state.tasks.save(record);
    this.notify(record.task.id, canceled);
    await this.state.commit();
  }

  async subscribeToTask(request: pb.SubscribeToTaskRequest, ctx: CallContext): Promise<Stream> {
    const record = await this.callerTask(request.id, ctx);
    const running = this.turns.get(request.id);
    const elsewhere = running ? undefined : await this.replicas?.followElsewhere(record, ctx.signal);
    if (elsewhere) return this.durable([snapshotEvent(record.task)], elsewhere);
    if (
      !running ||
      running.record.state === pb.TaskState.INPUT_REQUIRED ||
      isTerminal(running.record.state)
    ) {
      throw taskNotFound(request.id, `Task ${request.id} is not active`);
    }
    const live = running.hub.subscribe(ctx.signal);
    return this.durable([snapshotEvent(running.record.task)], live);
  }

  // ---- Cards and push configs ----------------------------------------------

  getExtendedAgentCard(_request: pb.GetExtendedAgentCardRequest, ctx: CallContext): Promise<pb.AgentCard> {
    const cards = this.options.cards();
    // The spec: UnsupportedOperationError when the card does not declare the
    // extended card, which it declares only with auth configured (the method
    // MUST require authentication). With auth, every caller that reaches the
    // core has been authenticated by its binding or transport.
    if (!cards.extendedCard.capabilities?.extendedAgentCard || !ctx.authenticated) {
      throw new A2AError(
        "UnsupportedOperationError",
        "The extended agent card requires authentication, and none is configured on this transport.",
      );
    }
    return Promise.resolve(cards.extendedCard);
  }

  /** The push configs for a call: required extensions, then PushNotificationNotSupportedError while push is off. */
  private pushConfigs(ctx: CallContext): PushConfigs {
    checkRequiredExtensions(this.options.requiredExtensions, ctx.requestedExtensions);
    if (!this.options.push) throw new A2AError("PushNotificationNotSupportedError");
    return this.options.push;
  }

  async createTaskPushNotificationConfig(
    request: pb.TaskPushNotificationConfig,
    ctx: CallContext,
  ): Promise<pb.TaskPushNotificationConfig> {
    const push = this.pushConfigs(ctx);
    push.check(request);
    const record = await this.callerTask(request.taskId, ctx, "taskId");
    const stored = push.save(ctx.owner, record.task.id, request);
    await this.state.commit();
    return stored;
  }

  async getTaskPushNotificationConfig(
    request: pb.GetTaskPushNotificationConfigRequest,
    ctx: CallContext,
  ): Promise<pb.TaskPushNotificationConfig> {
    const push = this.pushConfigs(ctx);
    if (!request.id) throw invalidParams("id is required", { field: "id" });
    const record = await this.callerTask(request.taskId, ctx, "taskId");
    const config = await push.get(ctx.owner, record.task.id, request.id);
    if (!config) throw taskNotFound(request.taskId, `Push notification config ${request.id} not found`);
    return config;
  }

  async listTaskPushNotificationConfigs(
    request: pb.ListTaskPushNotificationConfigsRequest,
    ctx: CallContext,
  ): Promise<pb.ListTaskPushNotificationConfigsResponse> {
    const push = this.pushConfigs(ctx);
    const record = await this.callerTask(request.taskId, ctx, "taskId");
    return push.list(ctx.owner, { ...request, taskId: record.task.id });
  }

  /** Deleting a config that does not exist is no error (the task must). */
  async deleteTaskPushNotificationConfig(
    request: pb.DeleteTaskPushNotificationConfigRequest,
    ctx: CallContext,
  ): Promise<void> {
    const push = this.pushConfigs(ctx);
    if (!request.id) throw invalidParams("id is required", { field: "id" });
    const record = await this.callerTask(request.taskId, ctx, "taskId");
    push.remove(ctx.owner, record.task.id, request.id);
    await this.state.commit();
  }

  // ---- Lifecycle ------------------------------------------------------------

  /**
   * Ends the tasks whose turn died with the previous process (at start-up,
   * before serving). With other replicas, a task is ended only once no
   * replica holds its context (its lease ran out), and the search goes on
   * while the server runs.
   */
  async recover(): Promise<number> {
    const replicas = this.replicas;
    const revive = (record: TaskRecord) => this.turns.revive(record);
    if (!replicas) return settleInterruptedTasks(this.state, this.options.logger, this.notify, revive);
    const leases = {
      takeIdle: (contextId: string) => replicas.takeIdle(contextId),
      give: (contextId: string) => replicas.unclaim(contextId),
      publishEnd: replicas.cluster.publishEnd.bind(replicas.cluster),
    };
    const sweep = () => settleOrphanedTasks(this.state, leases, this.options.logger, this.notify, revive);
    const settled = await sweep();
    this.orphanTimer = setInterval(() => {
      sweep().catch((error: unknown) =>
        this.options.logger.warn({ err: error }, "orphaned task sweep failed"),
      );
    }, this.options.orphanSweepMs ?? 5000);
    this.orphanTimer.unref();
    return settled;
  }

  /**
   * Stops taking turns, cancels running ones (turns waiting for an answer are
   * only detached, so they stay answerable after a restart), closes sessions
   * and commits the store.
   */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweepTimer);
    clearInterval(this.orphanTimer);
    await Promise.all(
      this.turns.all().map(async (execution) => {
        if (execution.detach()) return execution.whenDone();
        const context = await this.contexts.find(execution.contextId);
        await execution.cancel(context?.session);
      }),
    );
    await this.contexts.closeAll();
    await this.state.commit();
  }

  /** Test/ops hook: evict idle contexts now. */
  evictIdleContexts(now?: number): Promise<number> {
    return this.contexts.evictIdle(now);
  }

  isContextLoaded(contextId: string): boolean {
    return this.contexts.isLoaded(contextId);
  }
}
