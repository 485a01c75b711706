// The group commit (server/group-commit.ts) on one SQLite database: what the
// parts staged during one event-loop turn is written in one transaction. The
// A2A state store (tasks, contexts, push outbox) and the runtime store share
// one such commit, so a turn's conversation and journal land together with
// the task state they belong to.
import type { Database } from "better-sqlite3";
import type { Logger } from "pino";
import { GroupCommit, type CommitHooks, type Staged } from "../../server/group-commit.js";

/**
 * What one part staged, written inside the commit's transaction (`now` is the
 * commit's time). The write is synchronous: nothing is staged between take()
 * and restage(), which puts back what was taken.
 */
export interface SqliteStaged extends Staged {
  write(now: number): void;
}

/** A part of a SQLite store commits at once before a read (reads see staged changes). */
export type SqliteCommitHooks = CommitHooks & Pick<GroupCommit<SqliteStaged>, "commitNow">;

export function sqliteGroupCommit(db: Database, logger: Logger): GroupCommit<SqliteStaged> {
  const transaction = db.transaction((taken: SqliteStaged[]) => {
    const now = Date.now();
    for (const part of taken) part.write(now);
  });
  return new GroupCommit<SqliteStaged>((taken) => transaction(taken), logger);
}
