// Group commit, whatever the store: what the parts staged during one
// event-loop turn is written in one atomic step at the end of the turn (a
// SQLite transaction, a Redis script call); commit() resolves once it is
// applied. A failed write is logged, rejects its waiters and restages what it
// took. Writes are synchronous (SQLite: a read may commitNow) or asynchronous
// (Redis: the next goes out before this one is answered; each resolves after
// those before it). One commit per n ms was measured slower (timers cost).
import type { Logger } from "pino";

/** What a commit took of one part's staged changes. */
export interface Staged {
  /** Stages it all again (the write failed), behind nothing newer. */
  restage(): void;
  /**
   * The write failed and its waiters were told so (a flush, not a read's commitNow):
   * drops from what was staged again whatever must not land later (an audit record
   * whose decision failed closed). Called right after restage(), before any waiter hears.
   */
  dropFailed?(): void;
}

/** A part of a store that stages changes; `take` hands them to a commit and starts staging anew. */
export interface StagedPart<T extends Staged> {
  hasStaged(): boolean;
  take(): T;
}

/** What a part asks of its commit: one at the end of this turn; a promise of what is staged now. */
export type CommitHooks = Pick<GroupCommit<Staged>, "schedule" | "commit">;

/** The result of a synchronous call as a promise (rejected when it throws). */
export function settled<T>(call: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(call()));
}

type Waiter = { resolve: () => void; reject: (error: unknown) => void };

export class GroupCommit<T extends Staged> {
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

  join(part: StagedPart<T>): void {
    this.parts.push(part);
  }

  hasStaged(): boolean {
    return this.parts.some((p) => p.hasStaged());
  }

  /** Resolves once what is staged now is applied (and every write in flight). */
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

  /** Writes what is staged now: a synchronous write is applied (or has thrown) on return. */
  commitNow(): void {
    if (!this.hasStaged()) return;
    if (this.closing) throw new Error("the state store is closed");
    void this.send(this.parts.map((p) => p.take()));
  }

  /**
   * The last commit (with the next flush's waiters); later ones write nothing. `after` runs once it is
   * sent (written, if synchronous). Resolves once every write in flight is; rejects if a synchronous one fails.
   */
  close(after?: () => void): Promise<void> {
    if (this.closing) return this.closing.catch(() => undefined);
    this.closing = settled(() => {
      const waiters = this.waiters.splice(0);
      try {
        wake(waiters, this.hasStaged() ? this.send(this.parts.map((p) => p.take())) : undefined);
      } catch (error) {
        for (const waiter of waiters) waiter.reject(error);
        throw error;
      } finally {
        after?.();
      }
    }).then(() => this.inFlight);
    return this.closing;
  }

  private flush(): void {
    this.scheduled = false;
    const waiters = this.waiters.splice(0);
    if (this.closing) return wake(waiters, undefined);
    if (!this.hasStaged()) return wake(waiters, this.inFlight);
    // Outside the try: a part that cannot hand over its changes is a bug, thrown.
    const taken = this.parts.map((p) => p.take());
    try {
      wake(waiters, this.send(taken));
    } catch (error) {
      this.logger.error({ err: error }, "state commit failed; changes stay staged");
      for (const t of taken) t.dropFailed?.();
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  /** Writes what the parts staged: undefined once a synchronous write is done, else its outcome. */
  private send(taken: T[]): Promise<void> | undefined {
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
      this.logger.error({ err: error }, "state commit failed; changes stay staged");
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
