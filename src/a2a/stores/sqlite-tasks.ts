// Reading tasks from the state database: GetTask as one lookup by id,
// ListTasks as one index range in (status timestamp desc, id desc) order from
// the cursor task's position (keyset paging: tasks created meanwhile sort
// before the cursor and never shift a later page), totals from the counts
// table. A row that cannot be read back is quarantined, and the read goes on.
import type { Database, Statement } from "better-sqlite3";
import type { Logger } from "pino";
import type { pb } from "../../contract/index.js";
import type { StoredTask, TaskPage, TaskQuery } from "./state.js";
import { decodeArtifact, decodeTask, UnreadableRecordError } from "./task-codec.js";

interface TaskRow {
  id: string;
  owner: string;
  context_id: string;
  state: number;
  status_ms: number;
  updated_ms: number;
  language: string;
  credential_names: string;
  body: Buffer;
}

const COLUMNS = "id, owner, context_id, state, status_ms, updated_ms, language, credential_names, body";

/** The WHERE terms and arguments of a query's filters (owner always). */
function filters(query: TaskQuery): { where: string[]; args: unknown[] } {
  const where = ["owner = ?"];
  const args: unknown[] = [query.owner];
  if (query.contextId !== undefined) {
    where.push("context_id = ?");
    args.push(query.contextId);
  }
  if (query.state !== undefined) {
    where.push("state = ?");
    args.push(query.state);
  }
  if (query.statusAfterMs !== undefined) {
    where.push("status_ms >= ?");
    args.push(query.statusAfterMs);
  }
  return { where, args };
}

export class SqliteTaskReader {
  private readonly byId: Statement<[string], TaskRow>;
  private readonly artifactsOf: Statement<[string], { rowid: number; body: Buffer }>;
  private readonly unfinishedRows: Statement<[], TaskRow>;
  private readonly cursorOf: Statement<
    [string],
    Pick<TaskRow, "owner" | "context_id" | "state" | "status_ms">
  >;
  private readonly countAll: Statement<[string], { n: number }>;
  private readonly countState: Statement<[string, number], { n: number }>;
  /** ListTasks statements by the filters they use. */
  private readonly pages = new Map<string, Statement<unknown[], TaskRow>>();
  private readonly counts = new Map<string, Statement<unknown[], { n: number }>>();

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
  ) {
    this.byId = db.prepare(`SELECT ${COLUMNS} FROM tasks WHERE id = ?`);
    this.artifactsOf = db.prepare("SELECT rowid, body FROM artifacts WHERE task_id = ? ORDER BY rowid");
    this.unfinishedRows = db.prepare(`SELECT ${COLUMNS} FROM tasks WHERE state IN (1, 2)`);
    this.cursorOf = db.prepare("SELECT owner, context_id, state, status_ms FROM tasks WHERE id = ?");
    this.countAll = db.prepare("SELECT COALESCE(SUM(n), 0) AS n FROM task_counts WHERE owner = ?");
    this.countState = db.prepare(
      "SELECT COALESCE(SUM(n), 0) AS n FROM task_counts WHERE owner = ? AND state = ?",
    );
  }

  get(id: string): StoredTask | undefined {
    const row = this.byId.get(id);
    return row && this.read(row, true);
  }

  unfinished(): StoredTask[] {
    return this.unfinishedRows.all().flatMap((row) => this.read(row, true) ?? []);
  }

  list(query: TaskQuery): TaskPage | undefined {
    let cursor: { ms: number; id: string } | undefined;
    if (query.startId !== undefined) {
      const at = this.cursorOf.get(query.startId);
      const matches =
        at &&
        at.owner === query.owner &&
        (query.contextId === undefined || at.context_id === query.contextId) &&
        (query.state === undefined || at.state === (query.state as number)) &&
        (query.statusAfterMs === undefined || at.status_ms >= query.statusAfterMs);
      if (!matches) return undefined;
      cursor = { ms: at.status_ms, id: query.startId };
    }
    for (;;) {
      const rows = this.pageRows(query, cursor);
      const tasks: StoredTask[] = [];
      let unreadable = false;
      for (const [i, row] of rows.entries()) {
        // The row after the page is read too: the next page's cursor must name a readable task.
        const task = this.read(row, query.includeArtifacts && i < query.pageSize);
        if (!task) unreadable = true;
        else if (i < query.pageSize) tasks.push(task);
      }
      // The unreadable rows are quarantined now: read the page again without them.
      if (unreadable) continue;
      const next = rows[query.pageSize];
      return { tasks, nextId: next?.id, totalSize: this.count(query) };
    }
  }

  private pageRows(query: TaskQuery, cursor: { ms: number; id: string } | undefined): TaskRow[] {
    const { where, args } = filters(query);
    if (cursor) {
      where.push("status_ms <= ?", "(status_ms < ? OR id <= ?)");
      args.push(cursor.ms, cursor.ms, cursor.id);
    }
    const key = where.join(" AND ");
    let statement = this.pages.get(key);
    if (!statement) {
      statement = this.db.prepare(
        `SELECT ${COLUMNS} FROM tasks WHERE ${key} ORDER BY status_ms DESC, id DESC LIMIT ?`,
      );
      this.pages.set(key, statement);
    }
    return statement.all(...args, query.pageSize + 1);
  }

  private count(query: TaskQuery): number {
    if (query.contextId === undefined && query.statusAfterMs === undefined) {
      return query.state === undefined
        ? (this.countAll.get(query.owner)?.n ?? 0)
        : (this.countState.get(query.owner, query.state)?.n ?? 0);
    }
    const { where, args } = filters(query);
    const key = where.join(" AND ");
    let statement = this.counts.get(key);
    if (!statement) {
      statement = this.db.prepare(`SELECT COUNT(*) AS n FROM tasks WHERE ${key}`);
      this.counts.set(key, statement);
    }
    return statement.get(...args)?.n ?? 0;
  }

  /** The stored task, or undefined after quarantining an unreadable row. */
  private read(row: TaskRow, withArtifacts: boolean): StoredTask | undefined {
    let task: pb.Task;
    try {
      task = decodeTask(row.id, row.body);
    } catch (error) {
      if (!(error instanceof UnreadableRecordError)) throw error;
      this.quarantine("task", row.id, error.message, row.body, "DELETE FROM tasks WHERE id = ?", row.id);
      return undefined;
    }
    if (withArtifacts) {
      for (const artifact of this.artifactsOf.all(row.id)) {
        try {
          task.artifacts.push(decodeArtifact(row.id, artifact.body));
        } catch (error) {
          if (!(error instanceof UnreadableRecordError)) throw error;
          const remove = "DELETE FROM artifacts WHERE rowid = ?";
          this.quarantine("artifact", row.id, error.message, artifact.body, remove, artifact.rowid);
        }
      }
    }
    return {
      task,
      owner: row.owner,
      updatedAt: row.updated_ms,
      language: row.language,
      credentialNames: row.credential_names === "" ? [] : row.credential_names.split(","),
    };
  }

  /** Moves an unreadable record to the quarantine table (remove: the statement deleting it). */
  private quarantine(
    kind: string,
    id: string,
    reason: string,
    body: Buffer,
    remove: string,
    key: string | number,
  ): void {
    this.logger.warn({ kind, id, reason }, "unreadable stored record quarantined");
    this.db.transaction(() => {
      this.db
        .prepare("INSERT INTO quarantine (kind, id, reason, at_ms, body) VALUES (?, ?, ?, ?, ?)")
        .run(kind, id, reason, Date.now(), body);
      this.db.prepare(remove).run(key);
    })();
  }
}
