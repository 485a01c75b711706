// The AG-UI adapter core: admits RunAgentInput requests against the thread's
// durable binding, drives one A2A SendStreamingMessage per run (or the answers
// of a resume), translates the A2A stream into AG-UI events, commits
// interrupts before announcing them, and serves the cancel extension. It is an
// A2A *client*: it never runs the agent itself.
import { createHash, randomUUID } from "node:crypto";
import {
  readItem,
  FAILED_STATES,
  sessionIdOf,
  type A2aItem,
  type JsonObject,
  isObject,
} from "./a2a-items.js";
import { A2aClient, A2aRpcError, A2aUnavailableError } from "./a2a-client.js";
import { AguiError, localize, MSG, type AguiErrorCode } from "./errors.js";
import { canonicalJson, CUSTOM_SESSION, type AguiEvent, type InterruptObject } from "./events.js";
import {
  answerDigest,
  answerPart,
  answerText,
  isPermission,
  payloadMatches,
  requiredInputs,
  responseSchemaFor,
  toInterrupt,
  type PendingInterrupt,
  type ResumeAnswer,
} from "./interrupts.js";
import { iacMetadata, lastUserMessage, resolveWorkspace, userParts, type IacCode } from "./inputs.js";
import { contextIdFor, StateUnavailableError, ThreadStore, type ThreadDoc } from "./thread-store.js";
import { RunTranslator } from "./translate.js";
import type { Language } from "../i18n/index.js";

export const DEFAULT_INTERRUPT_TTL_SECONDS = 540;

/** Where a run's events go (the SSE writer, or an array in tests and benchmarks). */
export interface EventSink {
  send(event: AguiEvent): void;
  readonly disconnected: boolean;
  onDisconnect(fn: () => void): void;
}

/** The parts of a validated RunAgentInput the adapter uses. */
export interface RunRequest {
  threadId: string;
  runId: string;
  parentRunId?: string;
  messages: unknown[];
  resume?: ResumeAnswer[];
  iacCode: IacCode;
  /** The whole parsed body (for the request digest). */
  raw: JsonObject;
}

export interface Admission {
  request: RunRequest;
  doc: ThreadDoc;
  cwd: string;
  language: Language;
  isResume: boolean;
}

export interface AdapterOptions {
  client: A2aClient;
  store: ThreadStore;
  allowedRoots: string[];
  /** Seconds an interrupt stays answerable. */
  interruptTtl?: number;
  now?: () => number;
  logger?: { warn(obj: unknown, msg?: string): void; error(obj: unknown, msg?: string): void };
}

/** Thrown inside a run to end it with RUN_ERROR. */
class RunFailure extends Error {
  constructor(
    readonly code: AguiErrorCode,
    message: string,
  ) {
    super(message);
  }
}

interface ActiveRun {
  runId: string;
  executionId: string;
  upstream: AbortController;
  /** True once the run committed an interrupt: a disconnect then changes nothing. */
  paused: boolean;
  /** True while a resume waits for A2A to accept its answers: a disconnect keeps them pending. */
  accepting: boolean;
  done: boolean;
  cancelledByExtension: boolean;
}

function digestOf(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value), "utf8").digest("hex");
}

/** A tiny async mutex: admission decisions are made one at a time. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const prev = this.tail;
    let release!: () => void;
    this.tail = new Promise((r) => (release = r));
    await prev;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

export class AguiAdapter {
  readonly client: A2aClient;
  readonly store: ThreadStore;
  private readonly roots: string[];
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly logger?: AdapterOptions["logger"];
  private readonly lock = new Mutex();
  private readonly active = new Map<string, ActiveRun>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  lastActivity: number;

  constructor(options: AdapterOptions) {
    this.client = options.client;
    this.store = options.store;
    this.roots = options.allowedRoots;
    this.ttlMs = (options.interruptTtl ?? DEFAULT_INTERRUPT_TTL_SECONDS) * 1000;
    this.now = options.now ?? (() => Date.now());
    this.logger = options.logger;
    this.lastActivity = this.now();
  }

  /** No active run and no pending interrupt among loaded threads. */
  isIdle(): boolean {
    if (this.active.size) return false;
    return !this.store.loaded().some((d) => Object.keys(d.execution.pending).length > 0);
  }

  close(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const run of this.active.values()) run.upstream.abort();
  }

  // --- state helpers ------------------------------------------------------------

  private async loadThread(threadId: string): Promise<ThreadDoc | undefined> {
    try {
      const doc = await this.store.load(threadId);
      if (doc) this.scheduleExpiry(doc);
      return doc;
    } catch (err) {
      if (err instanceof StateUnavailableError) {
        this.logger?.warn({ threadId, err: err.message }, "thread state unavailable");
        throw new AguiError("STATE_UNAVAILABLE", MSG.stateUnavailable);
      }
      throw err;
    }
  }

  private markTerminal(doc: ThreadDoc): void {
    const ex = doc.execution;
    if (!doc.terminalExecutionIds.includes(ex.executionId)) doc.terminalExecutionIds.push(ex.executionId);
    if (ex.taskId) ex.lastTaskId = ex.taskId;
    ex.taskId = null;
    ex.pending = {};
  }

  private isTerminal(doc: ThreadDoc): boolean {
    return doc.terminalExecutionIds.includes(doc.execution.executionId);
  }

  private async saveBestEffort(doc: ThreadDoc): Promise<void> {
    try {
      await this.store.save(doc);
    } catch (err) {
      this.logger?.error(
        { threadId: doc.threadId, err: (err as Error).message },
        "thread state write failed",
      );
    }
  }

  private async cancelUpstream(taskId: string | null | undefined): Promise<void> {
    if (!taskId) return;
    try {
      await this.client.cancelTask(taskId);
    } catch (err) {
      this.logger?.warn({ taskId, err: (err as Error).message }, "CancelTask failed");
    }
  }

  // --- expiry ------------------------------------------------------------------------

  private earliestExpiry(doc: ThreadDoc): number | undefined {
    const times = Object.values(doc.execution.pending).map((p) => Date.parse(p.expiresAt));
    return times.length ? Math.min(...times) : undefined;
  }

  private scheduleExpiry(doc: ThreadDoc): void {
    const old = this.timers.get(doc.threadId);
    if (old) clearTimeout(old);
    this.timers.delete(doc.threadId);
    const at = this.earliestExpiry(doc);
    if (at === undefined) return;
    const executionId = doc.execution.executionId;
    // setTimeout caps at ~24.8 days; longer TTLs re-arm on the next access.
    const delay = Math.min(Math.max(0, at - this.now()), 2 ** 31 - 1);
    const timer = setTimeout(() => {
      this.timers.delete(doc.threadId);
      void this.lock.run(async () => {
        if (this.active.has(doc.threadId) || doc.execution.executionId !== executionId) return;
        if (this.earliestExpiry(doc) === undefined || this.earliestExpiry(doc)! > this.now()) return;
        await this.expire(doc);
      });
    }, delay);
    timer.unref();
    this.timers.set(doc.threadId, timer);
  }

  /** Expired interrupts: cancel the A2A task, forget the pending state, mark the execution terminal. */
  private async expire(doc: ThreadDoc): Promise<void> {
    const ids = Object.keys(doc.execution.pending);
    const taskId = doc.execution.taskId;
    doc.execution.expiredInterruptIds = [...(doc.execution.expiredInterruptIds ?? []), ...ids];
    this.markTerminal(doc);
    await this.cancelUpstream(taskId);
    await this.saveBestEffort(doc);
  }

  private hasExpired(doc: ThreadDoc): boolean {
    const at = this.earliestExpiry(doc);
    return at !== undefined && at <= this.now();
  }

  // --- admission -------------------------------------------------------------------------

  /** Admission (agui-iaccode.md §2.5): throws AguiError with its HTTP status, or reserves the thread. */
  async admit(request: RunRequest, language: Language): Promise<Admission> {
    this.lastActivity = this.now();
    let cwd: string;
    try {
      cwd = resolveWorkspace(request.iacCode.cwd, this.roots);
    } catch {
      throw new AguiError("INVALID_INPUT", MSG.invalidForwardedProps);
    }
    const isResume = request.resume !== undefined;
    const userId = request.iacCode.userId ?? null;
    return this.lock.run(async () => {
      let doc = await this.loadThread(request.threadId);
      let created = false;
      if (!doc) {
        if (isResume) throw new AguiError("EXECUTION_LOST", MSG.executionLostResume);
        doc = {
          schemaVersion: 1,
          threadId: request.threadId,
          contextId: contextIdFor(request.threadId),
          cwd,
          userId,
          iacCodeSessionId: null,
          execution: this.freshExecution(request.iacCode.rosInvocationId),
          runDigests: {},
          appliedResumeDigests: [],
          terminalExecutionIds: [],
        };
        created = true;
      }
      const digest = digestOf(request.raw);
      const seen = doc.runDigests[request.runId];
      if (seen !== undefined) {
        throw new AguiError(seen === digest ? "DUPLICATE_RUN_ID" : "RUN_ID_CONFLICT", MSG.runIdUsed);
      }
      if (this.active.has(request.threadId)) throw new AguiError("THREAD_BUSY", MSG.threadBusy);
      if (doc.cwd !== cwd || doc.userId !== userId) {
        throw new AguiError("THREAD_BINDING_CONFLICT", MSG.bindingConflict);
      }
      const before = structuredClone(doc);
      if (isResume) {
        if (request.iacCode.rosInvocationId !== doc.execution.rosInvocationId) {
          throw new AguiError("EXECUTION_LOST", MSG.resumeMismatch);
        }
      } else {
        if (Object.keys(doc.execution.pending).length) {
          if (!this.hasExpired(doc)) throw new AguiError("RESUME_REQUIRED", MSG.resumeRequired);
          await this.expire(doc);
        }
        if (!created) this.rotateExecution(doc, request.iacCode.rosInvocationId);
      }
      doc.runDigests[request.runId] = digest;
      try {
        await this.store.save(doc);
      } catch (err) {
        this.logger?.error({ err: (err as Error).message }, "admission state write failed");
        if (created) this.store.forget(request.threadId);
        else Object.assign(doc, before);
        throw new AguiError("STATE_UNAVAILABLE", MSG.stateUnavailable);
      }
      this.active.set(request.threadId, {
        runId: request.runId,
        executionId: doc.execution.executionId,
        upstream: new AbortController(),
        paused: false,
        accepting: false,
        done: false,
        cancelledByExtension: false,
      });
      const language_ = language;
      return { request, doc, cwd, language: language_, isResume };
    });
  }

  private freshExecution(rosInvocationId: string): ThreadDoc["execution"] {
    return {
      executionId: randomUUID(),
      rosInvocationId,
      taskId: null,
      lastTaskId: null,
      pipelineSequence: 0,
      pipelineOpenSteps: [],
      textSnapshotDigests: [],
      pending: {},
    };
  }

  private rotateExecution(doc: ThreadDoc, rosInvocationId: string): void {
    if (!this.isTerminal(doc) && doc.execution.taskId) this.markTerminal(doc);
    const lastTaskId = doc.execution.lastTaskId;
    doc.execution = { ...this.freshExecution(rosInvocationId), lastTaskId };
  }

  // --- running ---------------------------------------------------------------------------

  /** Runs an admitted request to its end, sending AG-UI events to the sink. */
  async run(admission: Admission, sink: EventSink): Promise<void> {
    const { request, doc } = admission;
    const run = this.active.get(request.threadId)!;
    const tr = new RunTranslator({
      threadId: request.threadId,
      runId: request.runId,
      durable: {
        pipelineSequence: doc.execution.pipelineSequence,
        pipelineOpenSteps: doc.execution.pipelineOpenSteps,
        textSnapshotDigests: doc.execution.textSnapshotDigests,
      },
    });
    const ctx: RunContext = { admission, run, tr, sink, sessionAnnounced: false, lastState: undefined };
    sink.onDisconnect(() => void this.onDisconnect(ctx));
    for (const ev of tr.start(request.parentRunId)) sink.send(ev);
    try {
      if (admission.isResume) await this.resume(ctx);
      else await this.newRun(ctx);
    } catch (err) {
      await this.failRun(ctx, err);
    } finally {
      run.done = true;
      run.upstream.abort();
      if (this.active.get(request.threadId) === run) this.active.delete(request.threadId);
      this.lastActivity = this.now();
    }
  }

  private async failRun(ctx: RunContext, err: unknown): Promise<void> {
    const { doc } = ctx.admission;
    let code: string;
    let message: string;
    if (err instanceof RunFailure || err instanceof AguiError) {
      code = err.code;
      message = err.message;
    } else if (ctx.run.cancelledByExtension) {
      code = "CANCELLED";
      message = MSG.cancelled;
    } else {
      if (!(err instanceof A2aUnavailableError) && !(err instanceof A2aRpcError) && !ctx.sink.disconnected) {
        this.logger?.error({ err: (err as Error).stack ?? String(err) }, "AG-UI run failed unexpectedly");
      }
      code = "A2A_UNAVAILABLE";
      message = MSG.a2aUnavailable;
      // An unexpected failure of a normal run cancels its task, unless an interrupt waits.
      if (!ctx.run.accepting && !Object.keys(doc.execution.pending).length && !ctx.sink.disconnected) {
        await this.cancelUpstream(doc.execution.taskId);
        this.markTerminal(doc);
        await this.saveBestEffort(doc);
      }
    }
    this.syncDurable(ctx);
    if (
      !Object.keys(doc.execution.pending).length &&
      !this.isTerminal(doc) &&
      code !== "STATE_PERSISTENCE_FAILED"
    ) {
      if (["CANCELLED", "A2A_EXECUTION_FAILED", "A2A_PROTOCOL_ERROR", "INVALID_INPUT"].includes(code)) {
        this.markTerminal(doc);
        await this.saveBestEffort(doc);
      }
    }
    ctx.sink.send(ctx.tr.error(code, localize(ctx.admission.language, message)));
  }

  private syncDurable(ctx: RunContext): void {
    const d = ctx.tr.durableState();
    const ex = ctx.admission.doc.execution;
    if (ex.executionId !== ctx.run.executionId) return;
    ex.pipelineSequence = d.pipelineSequence;
    ex.pipelineOpenSteps = d.pipelineOpenSteps;
    ex.textSnapshotDigests = d.textSnapshotDigests;
  }

  private async onDisconnect(ctx: RunContext): Promise<void> {
    const { run } = ctx;
    if (run.done || run.paused || run.accepting) return;
    const { doc } = ctx.admission;
    if (Object.keys(doc.execution.pending).length) return;
    run.upstream.abort();
    await this.lock.run(async () => {
      if (doc.execution.executionId !== run.executionId || this.isTerminal(doc)) return;
      await this.cancelUpstream(doc.execution.taskId);
      this.markTerminal(doc);
      await this.saveBestEffort(doc);
    });
  }

  private messageParams(
    ctx: RunContext,
    parts: JsonObject[],
    messageId: string,
    withTask: boolean,
  ): JsonObject {
    const { doc, cwd, request, language } = ctx.admission;
    const message: JsonObject = {
      messageId,
      role: "ROLE_USER",
      parts,
      contextId: doc.contextId,
      metadata: { iac_code: iacMetadata(request.iacCode, cwd, language) },
    };
    if (withTask && doc.execution.taskId) message.taskId = doc.execution.taskId;
    return { message, configuration: { acceptedOutputModes: ["text/plain"] } };
  }

  private async newRun(ctx: RunContext): Promise<void> {
    const user = lastUserMessage(ctx.admission.request.messages);
    if (!user) throw new RunFailure("INVALID_INPUT", MSG.newRunNeedsMessage);
    const parts = userParts(user);
    const messageId = typeof user.id === "string" && user.id ? user.id : randomUUID();
    const params = this.messageParams(ctx, parts, messageId, false);
    const stream = this.client.sendStreamingMessage(params, ctx.run.upstream.signal);
    await this.consume(ctx, stream);
  }

  /** Learns and checks the task, context and session identities of an item; persists what is new. */
  private async learn(ctx: RunContext, item: A2aItem): Promise<void> {
    const { doc } = ctx.admission;
    const ex = doc.execution;
    if (item.contextId && item.contextId !== doc.contextId)
      throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.contextChanged);
    let changed = false;
    let failMsg: string = MSG.mappingNotCommitted;
    if (item.taskId) {
      if (ex.taskId && ex.taskId !== item.taskId) throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.taskChanged);
      if (!ex.taskId) {
        ex.taskId = item.taskId;
        changed = true;
      }
    }
    const session = sessionIdOf(item);
    if (session) {
      if (doc.iacCodeSessionId && doc.iacCodeSessionId !== session) {
        throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.sessionChanged);
      }
      if (!doc.iacCodeSessionId) {
        doc.iacCodeSessionId = session;
        if (!changed) failMsg = MSG.sessionNotCommitted;
        changed = true;
      }
    }
    if (changed) {
      try {
        await this.store.save(doc);
      } catch {
        await this.cancelUpstream(ex.taskId ?? item.taskId);
        this.markTerminal(doc);
        throw new RunFailure("STATE_PERSISTENCE_FAILED", failMsg);
      }
    }
  }

  private announceSession(ctx: RunContext, force: boolean): void {
    if (ctx.sessionAnnounced) return;
    const { doc, request } = ctx.admission;
    if (!force && !(doc.execution.taskId && doc.iacCodeSessionId)) return;
    ctx.sessionAnnounced = true;
    const value: JsonObject = {
      schemaVersion: 1,
      threadId: request.threadId,
      aguiRunId: request.runId,
      executionId: doc.execution.executionId,
      contextId: doc.contextId,
      rosInvocationId: doc.execution.rosInvocationId,
    };
    if (doc.execution.taskId) value.taskId = doc.execution.taskId;
    if (doc.iacCodeSessionId) value.sessionId = doc.iacCodeSessionId;
    ctx.sink.send(ctx.tr.custom(CUSTOM_SESSION, value));
  }

  private appliedDigest(doc: ThreadDoc, interruptId: string): string | undefined {
    return doc.appliedResumeDigests.find(
      (a) => a.executionId === doc.execution.executionId && a.interruptId === interruptId,
    )?.digest;
  }

  /** New pending inputs of an item (answers already applied in this execution are dropped). */
  private newInputs(ctx: RunContext, item: A2aItem): boolean {
    const { doc } = ctx.admission;
    let added = false;
    for (const input of requiredInputs(item)) {
      const id = input.value.inputId;
      if (typeof id !== "string" || !id) throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.interruptWithoutId);
      if (this.appliedDigest(doc, id) !== undefined) continue;
      const req = input.value.requestTaskId;
      if (typeof req === "string" && doc.execution.taskId && req !== doc.execution.taskId) {
        throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.otherTask);
      }
      const cx = input.value.contextId;
      if (typeof cx === "string" && cx !== doc.contextId)
        throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.otherContext);
      const existing = doc.execution.pending[id];
      if (existing) {
        if (input.sideband) existing.sideband = true;
        continue;
      }
      doc.execution.pending[id] = {
        value: input.value,
        sideband: input.sideband,
        expiresAt: new Date(this.now() + this.ttlMs).toISOString(),
      };
      added = true;
    }
    return added;
  }

  /** Persists the pending interrupts, then ends the run with them. */
  private async commitInterrupt(ctx: RunContext): Promise<void> {
    const { doc } = ctx.admission;
    ctx.tr.finalizeSnapshots();
    this.syncDurable(ctx);
    try {
      await this.store.save(doc);
    } catch {
      const taskId = doc.execution.taskId;
      await this.cancelUpstream(taskId);
      this.markTerminal(doc);
      throw new RunFailure("STATE_PERSISTENCE_FAILED", MSG.interruptNotCommitted);
    }
    ctx.run.paused = true;
    this.scheduleExpiry(doc);
    const interrupts: InterruptObject[] = Object.values(doc.execution.pending).map(toInterrupt);
    for (const ev of ctx.tr.finishInterrupt(interrupts)) ctx.sink.send(ev);
  }

  /**
   * Processes an A2A stream until it reaches a stop: a new interrupt (ends the
   * run with it), completion or the end of the turn (success), or a failure.
   */
  private async consume(ctx: RunContext, stream: AsyncIterable<unknown>, first?: A2aItem): Promise<void> {
    const handle = async (item: A2aItem): Promise<"stop" | "continue" | "interrupted"> => {
      await this.learn(ctx, item);
      this.announceSession(ctx, false);
      // A Task item is a snapshot (first event of a stream): its merged metadata
      // repeats what earlier runs showed, and input-required there is the wait
      // being answered, not the end of this run.
      const snapshot = item.kind === "task";
      if (!snapshot) for (const ev of ctx.tr.map(item)) ctx.sink.send(ev);
      if (this.newInputs(ctx, item)) {
        await this.commitInterrupt(ctx);
        return "interrupted";
      }
      if (
        snapshot &&
        item.state !== "canceled" &&
        item.state !== "completed" &&
        !FAILED_STATES.has(item.state ?? "")
      )
        return "continue";
      if (item.state) ctx.lastState = item.state;
      const st = item.state;
      if (st && (FAILED_STATES.has(st) || st === "canceled" || st === "completed" || st === "input-required"))
        return "stop";
      return "continue";
    };
    let outcome: "stop" | "continue" | "interrupted" = "continue";
    if (first) outcome = await handle(first);
    if (outcome === "continue") {
      for await (const raw of stream) {
        outcome = await handle(readItem(raw));
        if (outcome !== "continue") break;
      }
    }
    ctx.run.upstream.abort();
    if (outcome === "interrupted") return;
    await this.finish(ctx);
  }

  private async finish(ctx: RunContext): Promise<void> {
    const { doc } = ctx.admission;
    this.announceSession(ctx, true);
    const st = ctx.lastState;
    if (ctx.run.cancelledByExtension || st === "canceled") throw new RunFailure("CANCELLED", MSG.cancelled);
    if (st !== "completed" && st !== "input-required")
      throw new RunFailure("A2A_EXECUTION_FAILED", MSG.executionFailed);
    const events = ctx.tr.finishSuccess();
    this.syncDurable(ctx);
    this.markTerminal(doc);
    await this.saveBestEffort(doc);
    for (const ev of events) ctx.sink.send(ev);
  }

  // --- resume ------------------------------------------------------------------------------

  private async resume(ctx: RunContext): Promise<void> {
    const { doc, request } = ctx.admission;
    const entries = request.resume ?? [];
    const ex = doc.execution;
    const expired = new Set(ex.expiredInterruptIds ?? []);
    if (!ex.taskId || !Object.keys(ex.pending).length) {
      if (entries.some((e) => expired.has(e.interruptId)))
        throw new RunFailure("EXECUTION_EXPIRED", MSG.expired);
      if (entries.length && entries.every((e) => this.appliedDigestAny(doc, e.interruptId) !== undefined)) {
        throw new RunFailure("RESUME_ALREADY_APPLIED", MSG.alreadyApplied);
      }
      throw new RunFailure("EXECUTION_LOST", MSG.taskUnavailable);
    }
    if (this.hasExpired(doc)) {
      await this.expire(doc);
      throw new RunFailure("EXECUTION_EXPIRED", MSG.expired);
    }
    ctx.run.accepting = true;
    // Preflight: the task must still exist and be ours.
    let snapshot: A2aItem;
    try {
      snapshot = readItem({
        result: { task: await this.client.getTask(ex.taskId, ctx.run.upstream.signal) },
      });
    } catch (err) {
      if (err instanceof A2aRpcError) throw new RunFailure("EXECUTION_LOST", MSG.taskUnavailable);
      throw err;
    }
    if (snapshot.taskId !== ex.taskId || (snapshot.contextId && snapshot.contextId !== doc.contextId)) {
      throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.taskIdentityMismatch);
    }
    const session = sessionIdOf(snapshot);
    if (session && doc.iacCodeSessionId && session !== doc.iacCodeSessionId) {
      throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.sessionChanged);
    }
    if (
      snapshot.state &&
      (FAILED_STATES.has(snapshot.state) || snapshot.state === "canceled" || snapshot.state === "completed")
    ) {
      this.markTerminal(doc);
      await this.saveBestEffort(doc);
      throw new RunFailure("EXECUTION_LOST", MSG.taskUnavailable);
    }
    const knownBefore = new Set(Object.keys(ex.pending));
    const discovered = this.newInputs(ctx, snapshot);

    const ids = entries.map((e) => e.interruptId);
    if (new Set(ids).size !== ids.length || entries.length === 0) {
      throw new RunFailure(
        "INCOMPLETE_RESUME",
        entries.length ? MSG.duplicateInterruptIds : MSG.incompleteResume,
      );
    }
    for (const e of entries) {
      if (ex.pending[e.interruptId]) continue;
      const applied = this.appliedDigest(doc, e.interruptId);
      if (applied === undefined) throw new RunFailure("UNKNOWN_INTERRUPT", MSG.unknownInterrupt);
      if (applied !== answerDigest(e)) throw new RunFailure("RESUME_ALREADY_APPLIED", MSG.alreadyApplied);
    }
    const answered = new Set(ids);
    const missing = Object.keys(ex.pending).filter((id) => !answered.has(id));
    if (missing.length) {
      if (missing.some((id) => knownBefore.has(id)))
        throw new RunFailure("INCOMPLETE_RESUME", MSG.incompleteResume);
      if (discovered) {
        await this.commitInterrupt(ctx);
        return;
      }
    }
    const toApply = entries.filter((e) => ex.pending[e.interruptId]);
    for (const e of toApply) {
      const value = ex.pending[e.interruptId].value;
      if (e.status === "resolved") {
        if (e.payload === undefined || e.payload === null)
          throw new RunFailure("RESUME_PAYLOAD_INVALID", MSG.payloadRequired);
        if (!payloadMatches(responseSchemaFor(value), e.payload))
          throw new RunFailure("RESUME_PAYLOAD_INVALID", MSG.payloadInvalid);
        if (!isPermission(value) && !answerText(value, e.payload))
          throw new RunFailure("RESUME_PAYLOAD_INVALID", MSG.noAnswer);
      }
    }
    if (!toApply.length) throw new RunFailure("RESUME_ALREADY_APPLIED", MSG.alreadyApplied);
    const cancelledQuestion = toApply.find(
      (e) => e.status === "cancelled" && !isPermission(ex.pending[e.interruptId].value),
    );
    if (cancelledQuestion) {
      const taskId = ex.taskId;
      for (const e of toApply) this.recordApplied(doc, e);
      this.markTerminal(doc);
      await this.cancelUpstream(taskId);
      await this.saveBestEffort(doc);
      throw new RunFailure("CANCELLED", MSG.cancelledByResponse);
    }
    await this.applyAnswers(ctx, toApply);
  }

  private appliedDigestAny(doc: ThreadDoc, interruptId: string): string | undefined {
    const all = doc.appliedResumeDigests.filter((a) => a.interruptId === interruptId);
    return all.length ? all[all.length - 1].digest : undefined;
  }

  private recordApplied(doc: ThreadDoc, entry: ResumeAnswer): void {
    doc.appliedResumeDigests.push({
      executionId: doc.execution.executionId,
      interruptId: entry.interruptId,
      digest: answerDigest(entry),
    });
    delete doc.execution.pending[entry.interruptId];
  }

  /** Sends each answer on its own stream; the last stream carries the continuation. */
  private async applyAnswers(ctx: RunContext, entries: ResumeAnswer[]): Promise<void> {
    const { doc, request } = ctx.admission;
    const toolResults: Array<{ toolCallId: string; text: string }> = [];
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      const pending: PendingInterrupt = doc.execution.pending[entry.interruptId];
      const value = pending.value;
      const taskId = doc.execution.taskId!;
      const part = answerPart(value, entry, taskId);
      const params = this.messageParams(
        ctx,
        [part],
        `agui-resume-${request.runId}-${entry.interruptId}`,
        true,
      );
      const upstream = i === entries.length - 1 ? ctx.run.upstream : new AbortController();
      const stream = this.client.sendStreamingMessage(params, upstream.signal)[Symbol.asyncIterator]();
      let first: IteratorResult<unknown>;
      try {
        first = await stream.next();
      } catch (err) {
        if (err instanceof A2aRpcError) throw new RunFailure("A2A_UNAVAILABLE", MSG.interruptRejected);
        throw err;
      }
      if (first.done) {
        throw new RunFailure(
          "A2A_UNAVAILABLE",
          isPermission(value) ? MSG.permissionNotAccepted : MSG.interruptNotAccepted,
        );
      }
      const firstItem = readItem(first.value);
      if (
        (firstItem.taskId && firstItem.taskId !== taskId) ||
        (firstItem.contextId && firstItem.contextId !== doc.contextId)
      ) {
        throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.taskIdentityMismatch);
      }
      // Accepted: record the answer durably before anything else is announced.
      this.recordApplied(doc, entry);
      try {
        await this.store.save(doc);
      } catch {
        await this.cancelUpstream(taskId);
        this.markTerminal(doc);
        throw new RunFailure("STATE_PERSISTENCE_FAILED", MSG.responseNotCommitted);
      }
      if (!isPermission(value) && entry.status === "resolved" && typeof value.toolUseId === "string") {
        toolResults.push({ toolCallId: value.toolUseId, text: answerText(value, entry.payload) });
      }
      if (i < entries.length - 1) {
        upstream.abort();
        continue;
      }
      ctx.run.accepting = false;
      this.announceSession(ctx, true);
      for (const r of toolResults)
        for (const ev of ctx.tr.answeredToolResult(r.toolCallId, r.text)) ctx.sink.send(ev);
      const rest: AsyncIterable<unknown> = { [Symbol.asyncIterator]: () => stream };
      await this.consume(ctx, rest, firstItem);
    }
  }

  // --- cancel extension ------------------------------------------------------------------

  /** POST /extensions/iac-code/v1/executions/{executionId}/cancel */
  async cancelExecution(
    executionId: string,
    threadId: string,
    rosInvocationId: string,
  ): Promise<"cancelled" | "already_terminal"> {
    this.lastActivity = this.now();
    return this.lock.run(async () => {
      const doc = await this.loadThread(threadId);
      if (!doc) throw new AguiError("EXECUTION_NOT_FOUND", MSG.executionNotFound);
      const ex = doc.execution;
      if (ex.executionId !== executionId || this.isTerminal(doc)) {
        if (doc.terminalExecutionIds.includes(executionId)) return "already_terminal";
        throw new AguiError("EXECUTION_NOT_FOUND", MSG.executionNotFound);
      }
      if (ex.rosInvocationId !== rosInvocationId)
        throw new AguiError("EXECUTION_NOT_FOUND", MSG.executionNotFound);
      const run = this.active.get(threadId);
      if (!ex.taskId && !run) throw new AguiError("EXECUTION_NOT_FOUND", MSG.executionNotFound);
      const taskId = ex.taskId;
      if (run && run.executionId === executionId) {
        run.cancelledByExtension = true;
        // Without a task there is nothing to cancel upstream: end the stream here.
        if (!taskId) run.upstream.abort();
      }
      this.markTerminal(doc);
      await this.cancelUpstream(taskId);
      await this.saveBestEffort(doc);
      const timer = this.timers.get(threadId);
      if (timer) clearTimeout(timer);
      return "cancelled";
    });
  }
}

interface RunContext {
  admission: Admission;
  run: ActiveRun;
  tr: RunTranslator;
  sink: EventSink;
  sessionAnnounced: boolean;
  lastState: string | undefined;
}

export { isObject };
