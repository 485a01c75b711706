// What every step of the adapter shares: its dependencies, the lock under which
// thread decisions are made one at a time, the runs in progress, and the
// durable effects they all use (load a thread, save it best-effort, cancel an
// A2A task, expire unanswered interrupts on a timer, agui-iaccode.md §5.11).
import type { ServerMetrics } from "../server/metrics.js";
import { DEFAULT_INTERRUPT_TTL_SECONDS } from "./config.js";
import type { AdapterLogger } from "./logger.js";
import type { A2aClient } from "./upstream/a2a-client.js";
import { AguiError, MSG } from "./errors.js";
import { earliestExpiry, hasPending, markTerminal } from "./threads/execution.js";
import {
  isAcceptableThreadId,
  StateUnavailableError,
  type ThreadDoc,
  type ThreadStates,
} from "./threads/thread-store.js";

export interface AdapterOptions {
  client: A2aClient;
  store: ThreadStates;
  allowedRoots: string[];
  /** Seconds an interrupt stays answerable. */
  interruptTtl?: number;
  now?: () => number;
  logger?: AdapterLogger;
  /** Run metrics (served on /metrics). */
  metrics?: ServerMetrics;
}

/** The live part of a run (one per thread at most). */
export interface ActiveRun {
  runId: string;
  executionId: string;
  upstream: AbortController;
  /** Aborted once the client left or the run was cancelled: a wait for an unreachable A2A server ends. */
  waitStop: AbortController;
  /** True once the run committed an interrupt: a disconnect then changes nothing. */
  paused: boolean;
  /** True while a resume waits for A2A to accept its answers: a disconnect keeps them pending. */
  accepting: boolean;
  done: boolean;
  cancelledByExtension: boolean;
}

/**
 * Decisions about one thread are made one at a time (agui-iaccode.md §2.5 says
 * "under a global lock"; every decision reads and writes one thread's document
 * only, so a lock per thread decides the same, and one thread's fsync no longer
 * holds back every other thread's admission).
 */
class ThreadLocks {
  private readonly tails = new Map<string, Promise<void>>();
  async run<T>(threadId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(threadId);
    let release!: () => void;
    const tail = new Promise<void>((r) => (release = r));
    this.tails.set(threadId, tail);
    await prev;
    try {
      return await fn();
    } finally {
      if (this.tails.get(threadId) === tail) this.tails.delete(threadId);
      release();
    }
  }
}

export class AdapterCore {
  readonly client: A2aClient;
  readonly store: ThreadStates;
  readonly roots: string[];
  readonly ttlMs: number;
  readonly now: () => number;
  readonly logger?: AdapterLogger;
  readonly metrics?: ServerMetrics;
  readonly lock = new ThreadLocks();
  /** Runs in progress by thread id. */
  readonly active = new Map<string, ActiveRun>();
  /** Observers following an execution (the subscribe extension): the adapter is not idle meanwhile. */
  observers = 0;
  private readonly expiryTimers = new Map<string, NodeJS.Timeout>();
  lastActivity: number;

  constructor(options: AdapterOptions) {
    this.client = options.client;
    this.store = options.store;
    // Threads with a run here or an interrupt waiting stay loaded; idle ones may leave memory.
    this.store.keepInUse?.((doc) => hasPending(doc) || this.active.has(doc.threadId));
    this.roots = options.allowedRoots;
    this.ttlMs = (options.interruptTtl ?? DEFAULT_INTERRUPT_TTL_SECONDS) * 1000;
    this.now = options.now ?? (() => Date.now());
    this.logger = options.logger;
    this.metrics = options.metrics;
    this.lastActivity = this.now();
  }

  /** Stops every timer and aborts every upstream stream. */
  close(): void {
    for (const t of this.expiryTimers.values()) clearTimeout(t);
    this.expiryTimers.clear();
    for (const run of this.active.values()) run.upstream.abort();
  }

  /** The thread's document (arming its expiry timer), or undefined; unreadable state is STATE_UNAVAILABLE. */
  async loadThread(threadId: string): Promise<ThreadDoc | undefined> {
    if (!isAcceptableThreadId(threadId)) throw new AguiError("INVALID_INPUT", MSG.threadIdInvalid);
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

  /** Saves where a failure must not change the outcome any more (it is logged). */
  async saveBestEffort(doc: ThreadDoc): Promise<void> {
    try {
      await this.store.save(doc);
    } catch (err) {
      this.logger?.error(
        { threadId: doc.threadId, err: (err as Error).message },
        "thread state write failed",
      );
    }
  }

  /** CancelTask when a task is bound; a failure is logged, never raised. */
  async cancelUpstream(taskId: string | null | undefined): Promise<void> {
    if (!taskId) return;
    try {
      await this.client.cancelTask(taskId);
    } catch (err) {
      this.logger?.warn({ taskId, err: (err as Error).message }, "CancelTask failed");
    }
  }

  /** (Re)arms the thread's timer for its earliest pending deadline; none pending, no timer. */
  scheduleExpiry(doc: ThreadDoc): void {
    this.clearExpiry(doc.threadId);
    const at = earliestExpiry(doc);
    if (at === undefined) return;
    const executionId = doc.execution.executionId;
    // setTimeout caps at ~24.8 days; longer TTLs re-arm on the next access.
    const delay = Math.min(Math.max(0, at - this.now()), 2 ** 31 - 1);
    const timer = setTimeout(() => {
      this.expiryTimers.delete(doc.threadId);
      void this.lock.run(doc.threadId, async () => {
        if (this.active.has(doc.threadId) || doc.execution.executionId !== executionId) return;
        const due = earliestExpiry(doc);
        if (due === undefined || due > this.now()) return;
        await this.expire(doc);
      });
    }, delay);
    timer.unref();
    this.expiryTimers.set(doc.threadId, timer);
  }

  clearExpiry(threadId: string): void {
    const timer = this.expiryTimers.get(threadId);
    if (timer) clearTimeout(timer);
    this.expiryTimers.delete(threadId);
  }

  /** Expired interrupts: cancel the A2A task, forget the pending state, mark the execution terminal. */
  async expire(doc: ThreadDoc): Promise<void> {
    const ids = Object.keys(doc.execution.pending);
    const taskId = doc.execution.taskId;
    doc.execution.expiredInterruptIds = [...(doc.execution.expiredInterruptIds ?? []), ...ids];
    markTerminal(doc);
    await this.cancelUpstream(taskId);
    await this.saveBestEffort(doc);
  }
}
