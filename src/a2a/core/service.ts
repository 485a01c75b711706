// The A2A service core: every A2A method, transport-agnostic. Bindings decode
// the wire into protobuf-es requests, call these methods with a CallContext,
// and encode the result (or the A2AError) back. No binding holds logic.
import { appendFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Logger } from "pino";
import { pb } from "../../contract/index.js";
import { resolveLanguage, t, type Language } from "../../i18n/index.js";
import type { AgentRuntime, AgentSession } from "../../runtime/seam.js";
import type { ArtifactStore } from "../stores/artifact-store.js";
import type { ContextStore } from "../stores/context-store.js";
import type { TaskStore } from "../stores/task-store.js";
import type { CallContext } from "./call-context.js";
import type { AgentCards } from "./card.js";
import { ContextManager, type LiveContext } from "./contexts.js";
import { A2AError, invalidParams, taskNotFound } from "./errors.js";
import { TurnExecution, type AuditEntry } from "./execution.js";
import { isValidA2aId, newId } from "./ids.js";
import { looksLikeAnswer, matchesRequest, parseAnswer, type ParsedAnswer } from "./input-answer.js";
import { checkHistoryLength, listTasks } from "./list-tasks.js";
import { ingestParts, type MediaTypes } from "./parts.js";
import { checkRequiredExtensions } from "./service-params.js";
import { INTERRUPTED_STATES, TaskRecord, iacCode, isTerminal, trimTask } from "./task-record.js";
import { preferredLanguageOf, turnOverridesFrom } from "./turn-overrides.js";
import { resolveWorkspace, WorkspaceError } from "./workspace.js";

export interface A2AServiceOptions {
  runtime: AgentRuntime;
  tasks: TaskStore;
  contexts: ContextStore;
  artifacts: ArtifactStore;
  logger: Logger;
  /** Cards are built once the listener knows its port. */
  cards: () => AgentCards;
  thinkingExposure: readonly string[];
  autoApprovePermissions: boolean;
  requiredExtensions: readonly string[];
  pushNotifications: boolean;
  idleContextMs: number;
  defaultCwd: string;
  allowedRoots: readonly string[];
  mediaTypes: MediaTypes;
  /** Where permission decisions are audited (JSON lines). */
  auditFile: string;
}

type Stream = AsyncIterable<pb.StreamResponse>;

function streamEvent(payload: pb.StreamResponse["payload"]): pb.StreamResponse {
  return create(pb.StreamResponseSchema, { payload });
}

function taskEvent(task: pb.Task): pb.StreamResponse {
  return streamEvent({ case: "task", value: trimTask(task) });
}

/** Values of message.metadata.iac_code (request side). */
function requestMetadata(message: pb.Message): JsonObject {
  return iacCode(message.metadata);
}

export class A2AService {
  private readonly contexts: ContextManager;
  private readonly executions = new Map<string, TurnExecution>();
  private readonly sweepTimer: NodeJS.Timeout;
  private closing = false;

  constructor(private readonly options: A2AServiceOptions) {
    this.contexts = new ContextManager(
      options.runtime,
      options.contexts,
      options.logger,
      options.idleContextMs,
    );
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
    const { first, live, record } = await this.admit(request, ctx);
    const historyLength = request.configuration?.historyLength;
    const result = () =>
      create(pb.SendMessageResponseSchema, {
        payload: { case: "task", value: trimTask(record.task, historyLength) },
      });
    if (request.configuration?.returnImmediately || !live) {
      await live?.return?.();
      return result();
    }
    void first;
    try {
      for await (const event of live) {
        const state = event.payload.case === "statusUpdate" ? event.payload.value.status?.state : undefined;
        if (state !== undefined && (INTERRUPTED_STATES.has(state) || isTerminal(state))) break;
      }
    } finally {
      await live.return?.();
    }
    return result();
  }

  async sendStreamingMessage(request: pb.SendMessageRequest, ctx: CallContext): Promise<Stream> {
    const { first, live } = await this.admit(request, ctx);
    return (async function* () {
      yield* first;
      if (live) yield* live;
    })();
  }

  /**
   * Validates a message and starts (or continues) its turn. Errors thrown here
   * come before any event, so bindings return them as plain errors. Returns the
   * first events (the task snapshot, or a task that failed at once) and the
   * live events of the turn.
   */
  private async admit(
    request: pb.SendMessageRequest,
    ctx: CallContext,
  ): Promise<{
    first: pb.StreamResponse[];
    live?: AsyncIterableIterator<pb.StreamResponse>;
    record: TaskRecord;
  }> {
    if (this.closing) throw new A2AError("UnsupportedOperationError", "The server is shutting down.");
    checkRequiredExtensions(this.options.requiredExtensions, ctx.requestedExtensions);
    const message = request.message;
    if (!message) throw invalidParams("message is required", { field: "message" });
    if (!message.messageId)
      throw invalidParams("message.messageId is required", { field: "message.messageId" });
    if (message.role === pb.Role.UNSPECIFIED)
      throw invalidParams("message.role is required", { field: "message.role" });
    if (message.parts.length === 0)
      throw invalidParams("message.parts must not be empty", { field: "message.parts" });
    for (const id of [message.contextId, message.taskId]) {
      if (id && !isValidA2aId(id)) throw invalidParams("Invalid A2A id");
    }
    const meta = requestMetadata(message);
    const language = resolveLanguage(preferredLanguageOf(meta), ctx.acceptLanguage);
    // A pipeline the server does not have is refused before any task exists.
    const refusal = this.options.runtime.checkTurn?.(turnOverridesFrom(meta, language));
    if (refusal) throw invalidParams(refusal, { field: "metadata.iac_code.pipelineName" });

    let existing: TaskRecord | undefined;
    if (message.taskId) {
      existing = await this.findTask(message.taskId, ctx.owner);
      if (!existing) throw taskNotFound(message.taskId);
      if (message.contextId && message.contextId !== existing.task.contextId) {
        throw invalidParams("Task belongs to a different context", { taskId: message.taskId });
      }
      if (looksLikeAnswer(message)) return this.admitAnswer(existing, message, ctx, language, meta);
      if (isTerminal(existing.state)) {
        throw new A2AError(
          "UnsupportedOperationError",
          `Task ${existing.task.id} is in a terminal state; send a new message with the contextId only.`,
          { taskId: existing.task.id },
        );
      }
      const running = this.executions.get(existing.task.id);
      if (running) {
        const interjected = await this.interject(running, message, ctx, language, meta);
        if (interjected) return interjected;
        throw new A2AError("UnsupportedOperationError", t(language, "a2a.taskAlreadyWorking"), {
          taskId: existing.task.id,
        });
      }
    } else if (looksLikeAnswer(message)) {
      throw invalidParams("Permission response correlation fields are required.");
    }
    if (message.role !== pb.Role.USER) throw invalidParams("message.role must be ROLE_USER");

    const contextId = existing?.task.contextId ?? (message.contextId || newId());
    const taskId = existing?.task.id ?? newId();
    const stamped = create(pb.MessageSchema, { ...structuredClone(message), contextId, taskId });
    const record =
      existing ??
      new TaskRecord(
        create(pb.TaskSchema, {
          id: taskId,
          contextId,
          status: { state: pb.TaskState.SUBMITTED, timestamp: timestampFromDate(new Date()) },
          history: [],
        }),
        ctx.owner,
      );
    const failAtOnce = (key: string) => this.failAtOnce(record, stamped, t(language, key));

    let context = await this.contexts.find(contextId);
    if (context && context.record.owner !== ctx.owner) return failAtOnce("a2a.contextOtherOwner");
    let cwd: string;
    try {
      cwd = resolveWorkspace(
        meta.cwd ?? context?.record.cwd,
        this.options.defaultCwd,
        this.options.allowedRoots,
      );
    } catch (error) {
      if (error instanceof WorkspaceError) return failAtOnce("a2a.invalidWorkspace");
      throw error;
    }
    if (context && context.record.cwd !== cwd) return failAtOnce("a2a.contextOtherWorkspace");
    const input = ingestParts(message.parts, {
      cwd,
      roots: this.options.allowedRoots,
      mediaTypes: this.options.mediaTypes,
    });
    if (input.text.trim() === "" && input.images.length === 0) return failAtOnce("a2a.textInputOnly");

    context = this.contexts.ensure(contextId, ctx.owner, cwd);
    if (context.record.owner !== ctx.owner) return failAtOnce("a2a.contextOtherOwner");
    if (context.record.cwd !== cwd) return failAtOnce("a2a.contextOtherWorkspace");
    if (context.execution) return failAtOnce("a2a.taskAlreadyWorking");

    if (existing) existing.beginTurn(stamped);
    else record.task.history.push(stamped);
    const execution = this.reserve(context, record, language);
    const live = execution.hub.subscribe(ctx.signal);
    const first = [taskEvent(record.task)];
    // Queued, not awaited: the write queue keeps snapshots of a task in order.
    record.save(this.options.tasks).catch((error: unknown) => {
      this.options.logger.error({ err: error, taskId }, "task snapshot not saved");
    });
    const overrides = turnOverridesFrom(meta, language);
    const ctxRef = context;
    execution.start(
      () => this.contexts.session(ctxRef),
      (session) =>
        session.runTurn({ text: input.text, images: input.images, overrides, taskId }, execution.signal),
    );
    return { first, live, record };
  }

  /** A human-input answer: resumes the live turn, or a turn restored after a restart. */
  private async admitAnswer(
    record: TaskRecord,
    message: pb.Message,
    ctx: CallContext,
    language: Language,
    meta: JsonObject,
  ): Promise<{
    first: pb.StreamResponse[];
    live?: AsyncIterableIterator<pb.StreamResponse>;
    record: TaskRecord;
  }> {
    const parsed: ParsedAnswer = parseAnswer(message, message.taskId, message.contextId);
    const stamped = create(pb.MessageSchema, {
      ...structuredClone(message),
      contextId: record.task.contextId,
    });
    const running = this.executions.get(record.task.id);
    const context = await this.contexts.find(record.task.contextId);
    if (running) {
      if (!context?.session)
        throw invalidParams("permission_resume_invalid: permission wait point is unavailable.");
      const live = running.hub.subscribe(ctx.signal);
      const first = [taskEvent(running.record.task)];
      try {
        running.answer(parsed, stamped, context.session);
      } catch (error) {
        await live.return?.();
        throw error;
      }
      return { first, live, record: running.record };
    }
    // No live turn: only a wait point restored from disk can take the answer.
    const envelope = record.pendingInput;
    const field = (key: string): string => {
      const value = envelope?.[key];
      return typeof value === "string" ? value : "";
    };
    const pending =
      envelope && record.state === pb.TaskState.INPUT_REQUIRED
        ? { inputId: field("inputId"), toolUseId: field("toolUseId"), kind: field("kind") }
        : undefined;
    if (!pending) throw invalidParams("permission_resume_invalid: pending permission is not active.");
    if (!matchesRequest(parsed, pending))
      throw invalidParams("input_response_mismatch: permission correlation does not match.");
    if (!context || context.record.owner !== ctx.owner) {
      throw invalidParams("permission_resume_invalid: permission wait point is unavailable.");
    }
    if (context.execution) {
      throw new A2AError("UnsupportedOperationError", t(language, "a2a.taskAlreadyWorking"), {
        taskId: record.task.id,
      });
    }
    const execution = this.reserve(context, record, language);
    let session: AgentSession;
    try {
      session = await this.contexts.session(context);
      if (!session.pendingInputs().some((p) => p.inputId === parsed.answer.inputId)) {
        throw invalidParams("permission_resume_invalid: permission wait point is unavailable.");
      }
    } catch (error) {
      this.release(context, execution);
      if (error instanceof A2AError) throw error;
      this.options.logger.error({ err: error, taskId: record.task.id }, "session restore failed");
      throw new A2AError("InternalError", "The task's session could not be restored.");
    }
    record.task.history.push(stamped);
    const live = execution.hub.subscribe(ctx.signal);
    const first = [taskEvent(record.task)];
    const overrides = turnOverridesFrom(meta, language);
    execution.start(
      () => Promise.resolve(session),
      (s) => s.resumeTurn(overrides, execution.signal),
      parsed,
    );
    return { first, live, record };
  }

  /**
   * A message to a task whose turn still runs: a pipeline run takes it (the
   * candidate choice, or an interruption its judge classifies); the caller
   * follows the running turn. Undefined when the turn does not take messages.
   */
  private async interject(
    running: TurnExecution,
    message: pb.Message,
    ctx: CallContext,
    language: Language,
    meta: JsonObject,
  ): Promise<
    | { first: pb.StreamResponse[]; live: AsyncIterableIterator<pb.StreamResponse>; record: TaskRecord }
    | undefined
  > {
    const context = await this.contexts.find(running.contextId);
    if (!context?.session?.interject || message.role !== pb.Role.USER) return undefined;
    const input = ingestParts(message.parts, {
      cwd: context.record.cwd,
      roots: this.options.allowedRoots,
      mediaTypes: this.options.mediaTypes,
    });
    const overrides = turnOverridesFrom(meta, language);
    const live = running.hub.subscribe(ctx.signal);
    if (!context.session.interject({ text: input.text, images: [], overrides, taskId: running.taskId })) {
      await live.return?.();
      return undefined;
    }
    running.record.task.history.push(
      create(pb.MessageSchema, { ...structuredClone(message), contextId: running.contextId }),
    );
    return { first: [taskEvent(running.record.task)], live, record: running.record };
  }

  private reserve(context: LiveContext, record: TaskRecord, language: Language): TurnExecution {
    const execution: TurnExecution = new TurnExecution(
      {
        tasks: this.options.tasks,
        artifacts: this.options.artifacts,
        logger: this.options.logger,
        exposure: {
          toolTrace: this.options.thinkingExposure.includes("tool_trace"),
          rawThinking: this.options.thinkingExposure.includes("raw_thinking"),
        },
        autoApprovePermissions: this.options.autoApprovePermissions,
        audit: (entry) => this.audit(entry),
      },
      record,
      language,
      () => this.release(context, execution),
    );
    context.execution = execution;
    this.executions.set(record.task.id, execution);
    this.contexts.touch(context);
    return execution;
  }

  private release(context: LiveContext, execution: TurnExecution): void {
    if (context.execution === execution) context.execution = undefined;
    if (this.executions.get(execution.taskId) === execution) this.executions.delete(execution.taskId);
    this.contexts.touch(context);
  }

  /** A task that fails before its turn starts (busy context, bad workspace, empty input). */
  private async failAtOnce(
    record: TaskRecord,
    message: pb.Message,
    text: string,
  ): Promise<{ first: pb.StreamResponse[]; record: TaskRecord }> {
    const created = record.task.history.length === 0 && record.state === pb.TaskState.SUBMITTED;
    if (created) record.task.history.push(message);
    else record.beginTurn(message);
    const first = [taskEvent(record.task)];
    const failed = streamEvent({
      case: "statusUpdate",
      value: create(pb.TaskStatusUpdateEventSchema, {
        taskId: record.task.id,
        contextId: record.task.contextId,
        status: {
          state: pb.TaskState.FAILED,
          timestamp: timestampFromDate(new Date()),
          message: {
            messageId: `${record.task.id}-status-failed`,
            role: pb.Role.AGENT,
            taskId: record.task.id,
            contextId: record.task.contextId,
            parts: [{ content: { case: "text", value: text } }],
          },
        },
      }),
    });
    record.apply(failed, true);
    await record.save(this.options.tasks);
    return { first: [...first, failed], record };
  }

  private async audit(entry: AuditEntry): Promise<void> {
    this.options.logger.info({ audit: entry }, "permission decision");
    await mkdir(path.dirname(this.options.auditFile), { recursive: true });
    await appendFile(this.options.auditFile, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  }

  // ---- Tasks ----------------------------------------------------------------

  /** The caller's task: the live record while a turn runs, else the stored one. */
  private async findTask(taskId: string, owner: string): Promise<TaskRecord | undefined> {
    if (!isValidA2aId(taskId)) return undefined;
    const running = this.executions.get(taskId);
    if (running) return running.record.owner === owner ? running.record : undefined;
    const stored = await this.options.tasks.get(taskId);
    return stored && stored.owner === owner ? TaskRecord.fromStored(stored) : undefined;
  }

  async getTask(request: pb.GetTaskRequest, ctx: CallContext): Promise<pb.Task> {
    checkRequiredExtensions(this.options.requiredExtensions, ctx.requestedExtensions);
    if (!request.id) throw invalidParams("id is required", { field: "id" });
    checkHistoryLength(request.historyLength);
    const record = await this.findTask(request.id, ctx.owner);
    if (!record) throw taskNotFound(request.id);
    return trimTask(record.task, request.historyLength);
  }

  async listTasks(request: pb.ListTasksRequest, ctx: CallContext): Promise<pb.ListTasksResponse> {
    checkRequiredExtensions(this.options.requiredExtensions, ctx.requestedExtensions);
    const stored = await this.options.tasks.listByOwner(ctx.owner);
    const tasks = stored.map((s) => this.executions.get(s.task.id)?.record.task ?? s.task);
    return listTasks(tasks, request);
  }

  async cancelTask(request: pb.CancelTaskRequest, ctx: CallContext): Promise<pb.Task> {
    checkRequiredExtensions(this.options.requiredExtensions, ctx.requestedExtensions);
    if (!request.id) throw invalidParams("id is required", { field: "id" });
    const record = await this.findTask(request.id, ctx.owner);
    if (!record) throw taskNotFound(request.id);
    const running = this.executions.get(request.id);
    if (!running)
      throw new A2AError("TaskNotCancelableError", "Task cannot be canceled", { taskId: request.id });
    const context = await this.contexts.find(record.task.contextId);
    await running.cancel(context?.session);
    return trimTask(running.record.task);
  }

  async subscribeToTask(request: pb.SubscribeToTaskRequest, ctx: CallContext): Promise<Stream> {
    checkRequiredExtensions(this.options.requiredExtensions, ctx.requestedExtensions);
    if (!request.id) throw invalidParams("id is required", { field: "id" });
    const record = await this.findTask(request.id, ctx.owner);
    if (!record) throw taskNotFound(request.id);
    const running = this.executions.get(request.id);
    if (
      !running ||
      running.record.state === pb.TaskState.INPUT_REQUIRED ||
      isTerminal(running.record.state)
    ) {
      throw taskNotFound(request.id, `Task ${request.id} is not active`);
    }
    const live = running.hub.subscribe(ctx.signal);
    const first = taskEvent(running.record.task);
    return (async function* () {
      yield first;
      yield* live;
    })();
  }

  // ---- Cards and push configs ----------------------------------------------

  getExtendedAgentCard(_request: pb.GetExtendedAgentCardRequest, ctx: CallContext): Promise<pb.AgentCard> {
    const cards = this.options.cards();
    // With auth configured every A2A call is authenticated before it gets here;
    // without auth the server is in trusted-local mode and the caller is anonymous.
    if (
      !ctx.authenticated &&
      cards.extendedCard.securitySchemes &&
      Object.keys(cards.extendedCard.securitySchemes).length
    ) {
      throw new A2AError("UnsupportedOperationError", "The extended agent card requires authentication.");
    }
    return Promise.resolve(cards.extendedCard);
  }

  pushConfigUnavailable(): never {
    if (!this.options.pushNotifications) throw new A2AError("PushNotificationNotSupportedError");
    throw new A2AError(
      "UnsupportedOperationError",
      "Push notification configs are not available in this version.",
    );
  }

  // ---- Lifecycle ------------------------------------------------------------

  /**
   * Stops taking turns, cancels running ones (turns waiting for an answer are
   * only detached, so they stay answerable after a restart), closes sessions
   * and flushes the stores.
   */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweepTimer);
    const running = [...this.executions.values()];
    await Promise.all(
      running.map(async (execution) => {
        if (execution.detach()) return execution.whenDone();
        const context = await this.contexts.find(execution.contextId);
        await execution.cancel(context?.session);
      }),
    );
    await this.options.tasks.flush();
    await this.contexts.closeAll();
    await this.options.contexts.flush();
  }

  /** Test/ops hook: evict idle contexts now. */
  evictIdleContexts(now?: number): Promise<number> {
    return this.contexts.evictIdle(now);
  }

  isContextLoaded(contextId: string): boolean {
    return this.contexts.isLoaded(contextId);
  }
}
