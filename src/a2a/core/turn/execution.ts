// One running turn of one task: consumes the runtime's events, projects them
// onto A2A events (status updates, artifact updates), folds them into the
// task, persists state changes and fans them out to every watching stream.
import { randomUUID } from "node:crypto";
import { create, type JsonObject } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import { pb } from "../../../contract/index.js";
import { t, type Language } from "../../../i18n/index.js";
import { ERROR_CODE_MESSAGES, errorCodeFor, InvalidInputAnswerError } from "../../../runtime/errors.js";
import { checkAnswer } from "../../../runtime/permissions/input-requests.js";
import type {
  AgentSession,
  InputRequest,
  PipelineEnvelope,
  RuntimeErrorCode,
  RuntimeEvent,
} from "../../../runtime/seam.js";
import type { ArtifactStore, StoredArtifact } from "../../stores/artifact-store.js";
import type { AuditEntry, PushOutbox, StateStore } from "../../stores/state.js";
import { invalidParams } from "../request/errors.js";
import { EventHub } from "./event-hub.js";
import {
  artifactMetadata,
  metadataFor,
  pipelineMetadata,
  pipelineTaskState,
  type ExposureOptions,
} from "./event-mapper.js";
import { inputEnvelope, matchesRequest, type ParsedAnswer } from "../incoming-message/input-answer.js";
import { sanitizeClientText } from "../sanitize.js";
import { now, TextChunks } from "./text-chunks.js";
import type { TaskRecord } from "../task-record.js";
import { addModelTokens, type ModelTokens } from "../../../server/model-tokens.js";
import { failSpan, startSpan, withSpan, type Span } from "../../../server/tracing/index.js";

/** One turn as the log line and the metrics see it. */
export interface TurnSummary {
  taskId: string;
  contextId: string;
  /** completed (ready for the next message), failed, canceled, detached (shutdown while waiting), or a pipeline end state. */
  outcome: string;
  /** The failure's code, when failed. */
  code?: string;
  durationMs: number;
  inputTokens: number;
  outputTokens: number;
  /** The same tokens by provider and model (one entry per model the turn called). */
  usage: ModelTokens[];
}

/** Told when a turn ends and when a live turn starts or stops waiting for an answer. */
export interface TurnObserver {
  ended(summary: TurnSummary): void;
  waiting(delta: 1 | -1): void;
}

export interface ExecutionDeps {
  /** Task snapshots and the artifact index are staged here; the core commits before clients hear. */
  state: Pick<StateStore, "tasks" | "artifacts">;
  /** Where artifact payloads are written. */
  artifactFiles: ArtifactStore;
  logger: Logger;
  exposure: ExposureOptions;
  autoApprovePermissions: boolean;
  audit(entry: AuditEntry): Promise<void>;
  observer?: TurnObserver;
  /** Stages a push delivery of a state change or an artifact update (a no-op without push). */
  notify: PushOutbox["enqueue"];
}

/** How long a cancel waits for the runtime to unwind before giving up on it. */
const CANCEL_UNWIND_MS = 30_000;

export class TurnExecution {
  readonly hub = new EventHub<pb.StreamResponse>();
  private readonly controller = new AbortController();
  private waitingFor?: InputRequest;
  private startedAt = performance.now();
  private readonly tokens = { input: 0, output: 0 };
  private readonly tokensByModel = new Map<string, ModelTokens>();
  private readonly announced = new Set<string>();
  private canceling = false;
  private seq = 0;
  /** Text chunks (status updates with a delta) share all but their text, id and time. */
  private readonly chunks = new TextChunks((text, messageId) =>
    this.makeStatusEvent(pb.TaskState.WORKING, { text }, messageId),
  );
  private finalText = "";
  private failure?: { state: pb.TaskState; text: string; error: JsonObject };
  private done: Promise<void> = Promise.resolve();
  private finished = false;
  /**
   * A pipeline update that ends the task (COMPLETED / FAILED / CANCELED): the
   * end of the turn, published when the turn is over (so the context is free
   * the moment a client sees it). Terminal updates that follow one another
   * (step_failed, then pipeline_completed) are joined into that one update;
   * anything else that follows publishes the ones held first, as WORKING.
   */
  private pipelineEnd?: { state: pb.TaskState; envelopes: PipelineEnvelope[]; cleanupOnly?: JsonObject };
  /**
   * Waits a restored turn will publish again (a restart or another replica
   * left them on disk), and the answers already taken for them: each answer
   * goes to the runtime when its wait is published again.
   */
  private readonly restoredWaits = new Map<string, InputRequest>();
  private readonly earlyAnswers = new Map<string, ParsedAnswer>();
  /** Set on shutdown while the turn waits for input: stop following it, publish nothing. */
  private detached = false;
  /** Ends the wait for the runtime's next event (set while the turn runs). */
  private stopFollowing?: () => void;

  constructor(
    private readonly deps: ExecutionDeps,
    readonly record: TaskRecord,
    private readonly onFinished: () => void,
  ) {}

  /** Server texts follow the language of the task's current turn. */
  private get language(): Language {
    return this.record.language;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }
  get taskId(): string {
    return this.record.task.id;
  }
  get contextId(): string {
    return this.record.task.contextId;
  }
  get pendingInput(): InputRequest | undefined {
    return this.waitingFor;
  }

  /** The input the live turn waits for (the observer counts the waits). */
  private get pending(): InputRequest | undefined {
    return this.waitingFor;
  }
  private set pending(request: InputRequest | undefined) {
    if (!this.waitingFor !== !request) this.deps.observer?.waiting(request ? 1 : -1);
    this.waitingFor = request;
  }
  get isFinished(): boolean {
    return this.finished;
  }

  /** Runs a turn: opens the session (may fail), then drives the runtime events. */
  start(
    open: () => Promise<AgentSession>,
    events: (session: AgentSession) => AsyncIterable<RuntimeEvent>,
    resume?: ParsedAnswer,
  ): void {
    this.startedAt = performance.now();
    // The turn's span: child of the A2A call that started it; the runtime's model and tool spans are its children.
    this.span = startSpan("iac-code.a2a", "turn", {
      attributes: {
        "iac_code.task_id": this.taskId,
        "iac_code.context_id": this.contextId,
        ...(resume ? { "iac_code.turn.resumed": true } : {}),
      },
    });
    if (resume) this.earlyAnswers.set(resume.answer.inputId, resume);
    this.done = withSpan(this.span, () => this.run(open, events));
  }

  private span?: Span;

  /** The waits a restored turn will publish again: their answers are taken before they are. */
  expect(waits: readonly InputRequest[]): void {
    for (const wait of waits) this.restoredWaits.set(wait.inputId, wait);
  }

  /** Resolves a pending input of the live turn (the answer came on the same task). */
  answer(parsed: ParsedAnswer, message: pb.Message, session: AgentSession): void {
    if (this.canceling)
      throw invalidParams("permission_resume_invalid: task cancellation is already in progress.");
    const restored = this.restoredWaits.get(parsed.answer.inputId);
    if (restored && !this.earlyAnswers.has(restored.inputId) && this.pending?.inputId !== restored.inputId) {
      this.takeEarly(parsed, message, restored);
      return;
    }
    const pending = this.pending;
    if (!pending) throw invalidParams("permission_resume_invalid: pending permission is not active.");
    if (!matchesRequest(parsed, pending))
      throw invalidParams("input_response_mismatch: permission correlation does not match.");
    let taken: boolean;
    try {
      taken = session.answerInput(parsed.answer);
    } catch (error) {
      // An answer that does not fit the question (an unknown option...): the client's to fix; the
      // wait stays open for a right one.
      if (error instanceof InvalidInputAnswerError)
        throw invalidParams(`input_response_invalid: ${error.message}`);
      throw error;
    }
    if (!taken) throw invalidParams("permission_resume_invalid: permission wait point is unavailable.");
    this.pending = undefined;
    this.accept(parsed, message);
  }

  /** An answer for a restored wait not published again yet: checked now, handed over when it is. */
  private takeEarly(parsed: ParsedAnswer, message: pb.Message, wait: InputRequest): void {
    if (!matchesRequest(parsed, wait))
      throw invalidParams("input_response_mismatch: permission correlation does not match.");
    try {
      checkAnswer(wait, parsed.answer);
    } catch (error) {
      if (error instanceof InvalidInputAnswerError)
        throw invalidParams(`input_response_invalid: ${error.message}`);
      throw error;
    }
    this.earlyAnswers.set(wait.inputId, parsed);
    this.accept(parsed, message);
  }

  /**
   * The answer is the task's now: it joins the history and the task goes back
   * to WORKING with inputReceived (staged, so it is durable before the client
   * hears of it). A turn restored after a restart hands the answer to the
   * runtime when the runtime publishes the wait point again.
   */
  accept(parsed: ParsedAnswer, message: pb.Message): void {
    this.record.task.history.push(message);
    this.announceReceived(parsed);
  }

  async cancel(session?: AgentSession): Promise<void> {
    if (!this.canceling && !this.finished) {
      this.canceling = true;
      const pending = this.pending;
      // Abort first: a runtime that watches the signal then records the wait as
      // cancelled (not as the user's deny) and announces no answer.
      this.controller.abort();
      if (pending && session) {
        // A cancelled task never keeps a permission open: deny it (audited), also
        // for a runtime that does not watch the signal while it waits.
        if (pending.kind === "permission") {
          session.answerInput({ kind: "permission", inputId: pending.inputId, decision: "deny" });
          await this.audit(pending, "cancelled", "task_canceled");
        } else session.answerInput({ kind: pending.kind, inputId: pending.inputId, cancelled: true });
      }
    }
    await boundedWait(this.done, CANCEL_UNWIND_MS);
  }

  /**
   * Shutdown of a turn that waits for input: stop following it without
   * answering (the runtime keeps its wait point on disk) and leave the durable
   * INPUT_REQUIRED snapshot as it is, so a restarted server can take the
   * answer. Returns false when the turn is not waiting.
   */
  detach(): boolean {
    if (!this.pending || this.finished || this.canceling) return false;
    this.detached = true;
    this.stopFollowing?.();
    return true;
  }

  /** Waits for the turn to end (used on shutdown). */
  whenDone(): Promise<void> {
    return this.done;
  }

  private announceReceived(parsed: ParsedAnswer): void {
    this.announced.add(parsed.answer.inputId);
    const received: JsonObject = {
      kind: parsed.answer.kind,
      inputId: parsed.answer.inputId,
      toolUseId: parsed.toolUseId,
    };
    if (parsed.answer.kind === "permission") received.decision = parsed.answer.decision;
    this.status(pb.TaskState.WORKING, { metadata: { inputReceived: received } });
  }

  private sessionId = "";

  private async run(
    open: () => Promise<AgentSession>,
    events: (session: AgentSession) => AsyncIterable<RuntimeEvent>,
  ): Promise<void> {
    let session: AgentSession | undefined;
    let iterator: AsyncIterator<RuntimeEvent> | undefined;
    try {
      session = await open();
      this.sessionId = session.sessionId;
      if (this.canceling) throw new CanceledSignal();
      this.status(pb.TaskState.WORKING, {});
      iterator = events(session)[Symbol.asyncIterator]();
      const { next, stop } = abortableSteps(iterator, this.signal);
      this.stopFollowing = stop;
      for (;;) {
        const step = await next();
        if (step === "aborted") {
          const unwound = iterator.return?.().catch(() => undefined);
          // A cancelled turn is over once the runtime has unwound (its session is
          // free for the next turn, its audit lines are written); a runtime that
          // ignores the signal is not waited for beyond the bound, a detached one not at all.
          if (unwound && !this.detached) await boundedWait(unwound, CANCEL_UNWIND_MS);
          break;
        }
        if (step.done) break;
        await this.handle(step.value, session);
      }
      this.finish();
    } catch (error) {
      if (error instanceof CanceledSignal || this.canceling) {
        this.finish();
      } else {
        const errorId = randomUUID();
        this.deps.logger.error({ err: error, errorId, taskId: this.taskId }, "turn failed unexpectedly");
        this.fail(
          looksLikeAuthError(error) ? "MODEL_AUTHENTICATION_FAILED" : "RUNTIME_ERROR",
          errorId,
          false,
        );
        // The runtime's turn may be waiting (for an answer, a tool): stop it, so its session is
        // free for the next turn instead of busy forever.
        this.controller.abort();
        const unwound = iterator?.return?.().catch(() => undefined);
        if (unwound) await boundedWait(unwound, CANCEL_UNWIND_MS);
        this.finish();
      }
    } finally {
      this.finished = true;
      this.pending = undefined;
      this.hub.close();
      this.onFinished();
      this.summarize();
    }
  }

  /** One info line per turn (task, context, outcome, duration, tokens), and the same to the observer. */
  private summarize(): void {
    const summary: TurnSummary = {
      taskId: this.taskId,
      contextId: this.contextId,
      outcome: this.detached
        ? "detached"
        : this.canceling
          ? "canceled"
          : this.failure
            ? "failed"
            : this.pipelineEnd
              ? pb.TaskState[this.pipelineEnd.state].toLowerCase().replace(/_/g, "-")
              : "completed",
      durationMs: Math.round(performance.now() - this.startedAt),
      inputTokens: this.tokens.input,
      outputTokens: this.tokens.output,
      usage: [...this.tokensByModel.values()],
    };
    const code = this.failure?.error.code;
    if (summary.outcome === "failed" && typeof code === "string") summary.code = code;
    if (this.span) {
      this.span.setAttributes({
        "iac_code.turn.outcome": summary.outcome,
        "gen_ai.usage.input_tokens": summary.inputTokens,
        "gen_ai.usage.output_tokens": summary.outputTokens,
      });
      if (summary.outcome === "failed") failSpan(this.span, new Error(), summary.code ?? "failed");
      this.span.end();
    }
    const { usage: _byModel, ...line } = summary; // the log line keeps its totals
    this.deps.logger.info(line, "turn ended");
    this.deps.observer?.ended(summary);
  }

  private finish(): void {
    if (this.detached) return;
    if (this.canceling) {
      this.status(pb.TaskState.CANCELED, { text: t(this.language, "a2a.taskCanceled"), keep: true });
    } else if (this.failure) {
      this.status(this.failure.state, {
        text: this.failure.text,
        keep: true,
        metadata: { error: this.failure.error },
      });
    } else if (this.pipelineEnd) {
      this.status(this.pipelineEnd.state, { metadata: this.pipelineEndMetadata(), keep: true });
    } else {
      if (this.finalText.trim() !== "") {
        this.status(pb.TaskState.WORKING, {
          text: this.finalText,
          keep: true,
          metadata: { assistantFinal: { complete: true } },
        });
      }
      this.status(pb.TaskState.INPUT_REQUIRED, {});
    }
  }

  private pipelineEndMetadata(): JsonObject {
    const end = this.pipelineEnd;
    return {
      ...(end && pipelineMetadata(end.envelopes, this.deps.exposure)),
      ...(end?.cleanupOnly ? { cleanupOnly: end.cleanupOnly } : {}),
    };
  }

  /** Held terminal pipeline updates turned out not to be the end: they go out now, in order. */
  private releasePipelineEnd(): void {
    if (!this.pipelineEnd) return;
    const metadata = this.pipelineEndMetadata();
    this.pipelineEnd = undefined;
    if (Object.keys(metadata).length) this.status(pb.TaskState.WORKING, { metadata });
  }

  private async handle(event: RuntimeEvent, session: AgentSession): Promise<void> {
    if (event.type !== "pipeline") this.releasePipelineEnd();
    switch (event.type) {
      case "text_delta":
        if (event.text !== "") this.status(pb.TaskState.WORKING, { text: event.text, delta: true });
        return;
      case "message_end": {
        if (event.stopReason !== "tool_use" && event.text.trim() !== "") this.finalText = event.text;
        this.tokens.input += event.usage?.inputTokens ?? 0;
        this.tokens.output += event.usage?.outputTokens ?? 0;
        if (event.usage) addModelTokens(this.tokensByModel, event.usage);
        const metadata = metadataFor(event, this.deps.exposure);
        if (metadata) this.status(pb.TaskState.WORKING, { metadata });
        return;
      }
      case "tool_result": {
        let stored: StoredArtifact | undefined;
        if (event.artifact) {
          try {
            stored = await this.deps.artifactFiles.save(event.artifact);
            this.emitArtifact(stored);
          } catch (error) {
            this.deps.logger.warn({ err: error, taskId: this.taskId }, "artifact not stored");
          }
        }
        const metadata = metadataFor(event, this.deps.exposure, stored);
        if (metadata) this.status(pb.TaskState.WORKING, { metadata });
        return;
      }
      case "input_required":
        await this.inputRequired(event.request, session, event.pipeline);
        return;
      case "input_received": {
        if (this.pending?.inputId === event.inputId) this.pending = undefined;
        const pipeline = event.pipeline && pipelineMetadata(event.pipeline, this.deps.exposure);
        if (this.announced.has(event.inputId)) {
          if (pipeline) this.status(pb.TaskState.WORKING, { metadata: pipeline });
          return;
        }
        this.announced.add(event.inputId);
        const metadata = { ...metadataFor(event, this.deps.exposure), ...pipeline };
        if (Object.keys(metadata).length) this.status(pb.TaskState.WORKING, { metadata });
        return;
      }
      case "pipeline": {
        const cleanupOnly = event.cleanupOnly as unknown as JsonObject | undefined;
        const metadata = {
          ...pipelineMetadata(event.envelopes, this.deps.exposure),
          ...(cleanupOnly ? { cleanupOnly } : {}),
        };
        if (Object.keys(metadata).length === 0) return;
        // A cleanup-only turn ends the task with its summary, like a pipeline run's end.
        const state = event.cleanupOnly
          ? event.cleanupOnly.status === "completed"
            ? pb.TaskState.COMPLETED
            : pb.TaskState.FAILED
          : pipelineTaskState(event.envelopes);
        if (state === pb.TaskState.WORKING || state === pb.TaskState.INPUT_REQUIRED) {
          this.releasePipelineEnd();
          this.status(state, { metadata });
          return;
        }
        const held = this.pipelineEnd;
        this.pipelineEnd = {
          state,
          envelopes: [...(held?.envelopes ?? []), ...event.envelopes],
          ...(cleanupOnly || held?.cleanupOnly ? { cleanupOnly: cleanupOnly ?? held?.cleanupOnly } : {}),
        };
        return;
      }
      case "error": {
        // The runtime logged the detail (endpoint, status) under this errorId; its text is already localised.
        const errorId = event.errorId ?? randomUUID();
        const code = event.code ?? errorCodeFor(event.kind);
        // A coded event's text is the code's catalogue text (built by the runtime, kept as it is);
        // without a code, a fatal event's own text is kept, sanitised, and the others get the code's.
        const text =
          event.code !== undefined
            ? event.message
            : event.kind === "fatal"
              ? sanitizeClientText(event.message)
              : undefined;
        this.fail(code, errorId, event.kind === "retryable", text);
        return;
      }
      case "mcp_warning":
        // a2a-iaccode.md §6.7: the warning is also agent text, so that a plain client shows it.
        this.status(pb.TaskState.WORKING, {
          text: `MCP warning: ${event.warning.message}`,
          metadata: metadataFor(event, this.deps.exposure),
        });
        return;
      default: {
        const metadata = metadataFor(event, this.deps.exposure);
        if (metadata) this.status(pb.TaskState.WORKING, { metadata });
      }
    }
  }

  private async inputRequired(
    request: InputRequest,
    session: AgentSession,
    pipeline?: PipelineEnvelope[],
  ): Promise<void> {
    this.restoredWaits.delete(request.inputId);
    const early = this.earlyAnswers.get(request.inputId);
    if (early) {
      // A restored turn re-publishes what it waits for; the answer (accepted) is already here.
      this.earlyAnswers.delete(request.inputId);
      if (!session.answerInput(early.answer))
        this.failUnexpectedly("restored input wait point did not take the answer");
      return;
    }
    if (request.kind === "permission" && this.deps.autoApprovePermissions) {
      // Fail closed: an approval whose audit record cannot be written becomes a deny.
      this.announced.add(request.inputId);
      const announced = pipeline && pipelineMetadata(pipeline, this.deps.exposure);
      if (announced) this.status(pb.TaskState.WORKING, { metadata: announced });
      const audited = await this.audit(request, "allow_once", "auto-approve-permissions", true);
      const decision = audited ? "allow_once" : "deny";
      if (this.deps.exposure.toolTrace) {
        this.status(pb.TaskState.WORKING, {
          metadata: {
            permission: { autoApproved: audited, toolName: request.toolName, toolUseId: request.toolUseId },
          },
        });
      }
      if (!session.answerInput({ kind: "permission", inputId: request.inputId, decision }))
        this.failUnexpectedly("auto-approved permission was not taken by the runtime");
      return;
    }
    this.pending = request;
    const metadata: JsonObject = {
      input: inputEnvelope(request, this.taskId, this.contextId),
      ...(pipeline && pipelineMetadata(pipeline, this.deps.exposure)),
    };
    if (request.kind === "permission") {
      metadata.permission = {
        autoApproved: false,
        pending: true,
        toolName: request.toolName,
        toolUseId: request.toolUseId,
      };
    }
    // A resume after a crash depends on this snapshot: the core commits it before anyone sees it.
    this.status(pb.TaskState.INPUT_REQUIRED, { metadata, keep: false, persist: true });
  }

  private failUnexpectedly(reason: string): void {
    if (this.signal.aborted) return;
    const errorId = randomUUID();
    this.deps.logger.error({ taskId: this.taskId, errorId }, reason);
    this.fail("RUNTIME_ERROR", errorId, false);
    this.controller.abort();
  }

  /** Every failure ends the task FAILED: the code's text (with the errorId) and metadata.iac_code.error. */
  private fail(code: RuntimeErrorCode, errorId: string, retryable: boolean, text?: string): void {
    this.failure = {
      state: pb.TaskState.FAILED,
      text: text ?? t(this.language, ERROR_CODE_MESSAGES[code], { errorId }),
      error: { retryable, errorId, code },
    };
  }

  private async audit(
    request: InputRequest,
    decision: AuditEntry["decision"],
    reason: string,
    autoApproved = false,
  ): Promise<boolean> {
    try {
      await this.deps.audit({
        ts: new Date().toISOString(),
        ...(this.sessionId && { sessionId: this.sessionId }),
        taskId: this.taskId,
        contextId: this.contextId,
        owner: this.record.owner,
        toolName: request.toolName,
        toolUseId: request.toolUseId,
        inputId: request.inputId,
        decision,
        reason,
        autoApproved,
      });
      return true;
    } catch (error) {
      this.deps.logger.error({ err: error, taskId: this.taskId }, "permission audit record not written");
      return false;
    }
  }

  private emitArtifact(stored: StoredArtifact): void {
    const metadata = { mediaType: stored.mediaType, byteSize: stored.byteSize, sha256: stored.sha256 };
    const artifact = create(pb.ArtifactSchema, {
      artifactId: stored.artifactId,
      name: stored.filename,
      parts: [
        {
          content: { case: "url", value: stored.url },
          filename: stored.filename,
          mediaType: stored.mediaType,
          metadata,
        },
      ],
      metadata: { ...metadata, iac_code: { artifact: artifactMetadata(stored) } },
    });
    const event = create(pb.StreamResponseSchema, {
      payload: {
        case: "artifactUpdate",
        value: { taskId: this.taskId, contextId: this.contextId, artifact, lastChunk: true },
      },
    });
    this.publish(event, false, true, true);
  }

  /**
   * Emits a status update carrying metadata.iac_code (+ the session id) and
   * optional agent text. State changes and kept messages are staged for the
   * store (streamed text chunks are not); state changes (and each new input
   * request) are pushed to the task's push configs.
   */
  private status(
    state: pb.TaskState,
    options: { text?: string; keep?: boolean; delta?: boolean; metadata?: JsonObject; persist?: boolean },
  ): void {
    const event = this.statusEvent(state, options);
    const changed = this.record.state !== state || options.persist === true;
    this.publish(event, options.keep ?? false, changed || options.keep === true, changed);
  }

  private statusEvent(
    state: pb.TaskState,
    options: { text?: string; delta?: boolean; metadata?: JsonObject },
  ): pb.StreamResponse {
    this.seq += 1;
    if (state === pb.TaskState.WORKING && options.delta && options.text !== undefined && !options.metadata)
      return this.chunks.next(options.text, `${this.taskId}-delta-${this.seq}`, this.sessionId);
    return this.makeStatusEvent(state, options, `${this.taskId}-status-${this.seq}`);
  }

  private makeStatusEvent(
    state: pb.TaskState,
    options: { text?: string; metadata?: JsonObject },
    messageId: string,
  ): pb.StreamResponse {
    const iac: JsonObject = { ...(options.metadata ?? {}) };
    if (this.sessionId) iac.iacCodeSessionId = this.sessionId;
    // Literals, not create(): the generated types name every field, and create's walk of the
    // initialiser was the largest cost of a status event.
    const message: pb.Message | undefined =
      options.text === undefined
        ? undefined
        : {
            $typeName: "lf.a2a.v1.Message",
            messageId,
            contextId: this.contextId,
            taskId: this.taskId,
            role: pb.Role.AGENT,
            parts: [
              {
                $typeName: "lf.a2a.v1.Part",
                content: { case: "text", value: options.text },
                filename: "",
                mediaType: "",
              },
            ],
            extensions: [],
            referenceTaskIds: [],
          };
    return {
      $typeName: "lf.a2a.v1.StreamResponse",
      payload: {
        case: "statusUpdate",
        value: {
          $typeName: "lf.a2a.v1.TaskStatusUpdateEvent",
          taskId: this.taskId,
          contextId: this.contextId,
          status: message
            ? { $typeName: "lf.a2a.v1.TaskStatus", state, message, timestamp: now() }
            : { $typeName: "lf.a2a.v1.TaskStatus", state, timestamp: now() },
          metadata: { iac_code: iac },
        },
      },
    };
  }

  private publish(event: pb.StreamResponse, keep: boolean, persist: boolean, push: boolean): void {
    this.record.apply(event, keep);
    if (persist) this.deps.state.tasks.save(this.record);
    if (push) this.deps.notify(this.taskId, event);
    if (event.payload.case === "artifactUpdate" && event.payload.value.artifact)
      this.deps.state.artifacts.save(this.taskId, event.payload.value.artifact);
    this.hub.publish(event);
  }
}

class CanceledSignal extends Error {}

/**
 * The steps of `iterator`, each one ending early with "aborted" once the
 * signal fires or stop() is called. (A Promise.race of each step against one
 * promise of the abort keeps a reaction per step, and so every event of the
 * turn, alive until the turn ends.)
 */
function abortableSteps<T>(
  iterator: AsyncIterator<T>,
  signal: AbortSignal,
): { next: () => Promise<IteratorResult<T> | "aborted">; stop: () => void } {
  let aborted = signal.aborted;
  let wake: ((value: "aborted") => void) | undefined;
  const stop = () => {
    aborted = true;
    wake?.("aborted");
  };
  signal.addEventListener("abort", stop, { once: true });
  const next = () =>
    aborted
      ? Promise.resolve("aborted" as const)
      : new Promise<IteratorResult<T> | "aborted">((resolve, reject) => {
          wake = resolve;
          iterator.next().then(resolve, reject);
        });
  return { next, stop };
}

/** Waits for a promise, at most ms milliseconds. */
async function boundedWait(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** Provider/credential failures are reported as a sanitised authentication error. */
export function looksLikeAuthError(error: unknown): boolean {
  const e = error as { name?: string; status?: number; code?: string; message?: string } | null;
  if (!e) return false;
  if (e.name === "AuthenticationError" || e.status === 401 || e.code === "missing_credentials") return true;
  return /api[ _-]?key|credential|unauthori[sz]ed|authenticat/i.test(e.message ?? "");
}
