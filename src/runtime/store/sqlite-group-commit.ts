// Group commit on one SQLite database: writers stage their changes in memory
// and ask for a commit; everything staged during one event-loop turn is
// written in one transaction at the end of that turn, and commit() resolves
// once it is. The A2A state store (tasks, contexts, push outbox) and the
// runtime store share one such commit, so a turn's conversation and journal
// land together with the task state they belong to. (A wider window, one
// commit per n ms under load, was measured slower: timers add latency and CPU
// on a busy machine.)
import type { Database } from "better-sqlite3";
import type { Logger } from "pino";

/** Something that stages changes and writes them inside the commit's transaction. */
export interface StagedWriter {
  hasStaged(): boolean;
  /** Writes what is staged (inside the transaction; `now` is the commit's time). */
  write(now: number): void;
  /** Forgets what was written (after the transaction committed). */
  clear(): void;
}

/** What a writer asks of the commit it joins. */
export interface CommitHooks {
  /** Commits at the end of this event-loop turn. */
  schedule(): void;
  /** Commits what is staged now (reads see staged changes). */
  commitNow(): void;
  /** Resolves once what is staged now is committed. */
  commit(): Promise<void>;
}

/** The result of a synchronous call as a promise (rejected when it throws). */
export function settled<T>(call: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(call()));
}

export class SqliteGroupCommit implements CommitHooks {
  /** Transactions written so far (each one a group commit). */
  commits = 0;
  private readonly writers: StagedWriter[] = [];
  private readonly transaction: () => void;
  private scheduled = false;
  private closed = false;
  private readonly waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
  ) {
    this.transaction = db.transaction(() => {
      const now = Date.now();
      for (const writer of this.writers) writer.write(now);
    });
  }

  /** Writers commit in the order they joined. */
  join(writer: StagedWriter): void {
    this.writers.push(writer);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private hasStaged(): boolean {
    return this.writers.some((w) => w.hasStaged());
  }

  commit(): Promise<void> {
    if (!this.hasStaged()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /** Writes everything staged in one transaction; staged changes stay staged if it fails. */
  commitNow(): void {
    if (!this.hasStaged()) return;
    if (this.closed) throw new Error("the state store is closed");
    this.transaction();
    this.commits += 1;
    for (const writer of this.writers) writer.clear();
  }

  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const waiters = this.waiters.splice(0);
    try {
      if (!this.closed) this.commitNow();
    } catch (error) {
      this.logger.error({ err: error }, "state commit failed; changes stay staged");
      for (const waiter of waiters) waiter.reject(error);
      return;
    }
    for (const waiter of waiters) waiter.resolve();
  }

  /** Commits what is staged, then closes the database (`after` runs once it is closed). */
  close(after?: () => void): Promise<void> {
    return settled(() => {
      if (this.closed) return;
      const waiters = this.waiters.splice(0);
      try {
        this.commitNow();
        for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        for (const waiter of waiters) waiter.reject(error);
        throw error;
      } finally {
        this.closed = true;
        this.db.close();
        after?.();
      }
    });
  }
}
