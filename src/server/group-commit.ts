// Group commit, whatever the store: writers stage their changes in memory and
// ask for a commit; everything staged during one event-loop turn is written in
// one atomic step at the end of that turn (a SQLite transaction, a Redis
// script call), and commit() resolves once it is applied. A write that fails
// is logged, its waiters are rejected, and what it took is staged again. The
// store gives the write: synchronous (SQLite: reads may commit at once with
// commitNow) or asynchronous (Redis: the next write may be sent before this
// one is answered; each resolves once every one before it has). (A wider
// window, one commit per n ms under load, was measured slower: timers add
// latency and CPU on a busy machine.)
import type { Logger } from "pino";

/** What a commit took of one part's staged changes. */
export interface Staged {
  /** Stages it all again (the write failed), behind nothing newer. */
  restage(): void;
}

/** One part of a store that stages changes: the group commit takes them at each commit. */
export interface StagedPart<T extends Staged> {
  hasStaged(): boolean;
  /** What is staged, for this commit; the part starts staging anew. */
  take(): T;
}

/** What a part asks of the commit it joined. */
export interface CommitHooks {
  /** Commits at the end of this event-loop turn. */
  schedule(): void;
  /** Resolves once what is staged now is committed. */
  commit(): Promise<void>;
}

/** The result of a synchronous call as a promise (rejected when it throws). */
export function settled<T>(call: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(call()));
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

const FAILED = "state commit failed; changes stay staged";

export class GroupCommit<T extends Staged> implements CommitHooks {
  /** Writes applied so far (each one a group commit). */
  commits = 0;
  private readonly parts: Array<StagedPart<T>> = [];
  private scheduled = false;
  private closing: Promise<void> | undefined;
  /** Settles once every write sent so far has (never rejects: a failure is logged and restaged). */
  private inFlight: Promise<void> = Promise.resolve();
  private waiters: Waiter[] = [];

  /** `write` applies what the parts took, in the order they joined, in one atomic step. */
  constructor(
    private readonly write: (taken: T[]) => void | Promise<void>,
    private readonly logger: Logger,
  ) {}

  /** Parts are written in the order they joined. */
  join(part: StagedPart<T>): void {
    this.parts.push(part);
  }

  get isClosed(): boolean {
    return this.closing !== undefined;
  }

  hasStaged(): boolean {
    return this.parts.some((p) => p.hasStaged());
  }

  /** Resolves once what is staged now is applied (and once every write in flight is). */
  commit(): Promise<void> {
    if (!this.hasStaged()) return this.inFlight;
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes what is staged now; with a synchronous write it is applied (or has thrown) on return. */
  commitNow(): void {
    if (!this.hasStaged()) return;
    if (this.closing) throw new Error("the state store is closed");
    void this.send();
  }

  /**
   * The last commit: writes what is staged now (with the waiters of the next
   * flush); later commits write nothing. Resolves once every write in flight
   * is applied; rejects when a synchronous write fails.
   */
  close(): Promise<void> {
    this.closing ??= settled(() => {
      const waiters = this.waiters.splice(0);
      try {
        wake(waiters, this.hasStaged() ? this.send() : undefined);
      } catch (error) {
        for (const waiter of waiters) waiter.reject(error);
        throw error;
      }
    }).then(() => this.inFlight);
    return this.closing;
  }

  private flush(): void {
    this.scheduled = false;
    const waiters = this.waiters.splice(0);
    if (this.closing) return wake(waiters, undefined);
    if (!this.hasStaged()) return wake(waiters, this.inFlight);
    try {
      wake(waiters, this.send());
    } catch (error) {
      this.logger.error({ err: error }, FAILED);
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  /**
   * Takes what every part staged and writes it. A synchronous write is done
   * (or has thrown, its changes staged again) on return; an asynchronous one
   * gives the promise of its outcome, settled after every write before it.
   */
  private send(): Promise<void> | undefined {
    const taken = this.parts.map((p) => p.take());
    const restage = () => taken.forEach((t) => t.restage());
    let writing: void | Promise<void>;
    try {
      writing = this.write(taken);
    } catch (error) {
      restage();
      throw error;
    }
    if (!writing) {
      this.commits += 1;
      return undefined;
    }
    const previous = this.inFlight;
    const done = writing.then(async () => {
      await previous;
      this.commits += 1;
    });
    this.inFlight = done.catch((error: unknown) => {
      this.logger.error({ err: error }, FAILED);
      restage();
    });
    return done;
  }
}

/** Settles the waiters of a write: at once when it was synchronous, else with its outcome. */
function wake(waiters: Waiter[], outcome: Promise<void> | undefined): void {
  for (const waiter of waiters) {
    if (outcome) void outcome.then(waiter.resolve, waiter.reject);
    else waiter.resolve();
  }
}
