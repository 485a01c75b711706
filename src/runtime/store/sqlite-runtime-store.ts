// The runtime store in SQLite: two tables, the rows of every log (numbered
// per log) and the documents, keyed by session, part and name. Changes are
// staged and written by the group commit the store joined: the A2A state
// store's (state.db) when a server hosts the runtime, else the standalone
// database's (standalone-store.ts).
import type { Database, Statement } from "better-sqlite3";
import { settled, type StagedPart } from "../../server/group-commit.js";
import type { SqliteCommitHooks, SqliteStaged } from "./sqlite-group-commit.js";
import {
  scopeKey,
  type PartCatalog,
  type RuntimeStore,
  type StoreLog,
  type StoreScope,
} from "./runtime-store.js";

export const RUNTIME_SCHEMA = `
-- Every log of the runtime (a session's conversation, usage, audit; a pipeline's journal; a step
-- attempt's transcript and tool log): one row per entry, numbered from 1 in append order.
CREATE TABLE IF NOT EXISTS runtime_log_rows (
  session_id TEXT NOT NULL,
  part TEXT NOT NULL,
  log TEXT NOT NULL,
  seq INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (session_id, part, log, seq)
) WITHOUT ROWID;
-- Documents replaced whole (session identity, waiting round, rules, pipeline run and context...).
CREATE TABLE IF NOT EXISTS runtime_docs (
  session_id TEXT NOT NULL,
  part TEXT NOT NULL,
  name TEXT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (session_id, part, name)
) WITHOUT ROWID;
`;

interface StagedRow {
  scope: StoreScope;
  log: string;
  seq: number;
  body: string;
}

class SqliteLog implements StoreLog {
  constructor(
    private readonly store: SqliteRuntimeStore,
    private readonly scope: StoreScope,
    private readonly name: string,
    private next: number,
  ) {}

  get nextSeq(): number {
    return this.next;
  }

  append(rows: readonly string[]): void {
    for (const body of rows)
      this.store.stageRow({ scope: this.scope, log: this.name, seq: this.next++, body });
  }

  read(after = 0): Promise<string[]> {
    return this.store.readRows(this.scope, this.name, after);
  }
}

export class SqliteRuntimeStore implements RuntimeStore, StagedPart<SqliteStaged> {
  private rows: StagedRow[] = [];
  private docs = new Map<string, { scope: StoreScope; name: string; body: string | undefined }>();
  private readonly putRow: Statement;
  private readonly putDoc: Statement;
  private readonly deleteDoc: Statement;
  private readonly selectRows: Statement<[string, string, string, number], { body: string }>;
  private readonly selectLast: Statement<[string, string, string], { last: number | null }>;
  private readonly selectDoc: Statement<[string, string, string], { body: string }>;
  private readonly selectNames: Statement<[string, string], { part: string; kind: string; name: string }>;

  constructor(
    db: Database,
    private readonly hooks: SqliteCommitHooks,
    private readonly onClose: () => Promise<void> = () => hooks.commit(),
  ) {
    db.exec(RUNTIME_SCHEMA);
    this.putRow = db.prepare(
      "INSERT OR REPLACE INTO runtime_log_rows (session_id, part, log, seq, body) VALUES (?, ?, ?, ?, ?)",
    );
    this.putDoc = db.prepare(
      "INSERT OR REPLACE INTO runtime_docs (session_id, part, name, body) VALUES (?, ?, ?, ?)",
    );
    this.deleteDoc = db.prepare("DELETE FROM runtime_docs WHERE session_id = ? AND part = ? AND name = ?");
    this.selectRows = db.prepare(
      "SELECT body FROM runtime_log_rows WHERE session_id = ? AND part = ? AND log = ? AND seq > ? ORDER BY seq",
    );
    this.selectLast = db.prepare(
      "SELECT MAX(seq) AS last FROM runtime_log_rows WHERE session_id = ? AND part = ? AND log = ?",
    );
    this.selectDoc = db.prepare(
      "SELECT body FROM runtime_docs WHERE session_id = ? AND part = ? AND name = ?",
    );
    this.selectNames = db.prepare(
      `SELECT DISTINCT part, 'log' AS kind, log AS name FROM runtime_log_rows WHERE session_id = ? UNION
       SELECT part, 'doc' AS kind, name FROM runtime_docs WHERE session_id = ? ORDER BY part, kind, name`,
    );
  }

  // ---- StagedPart: the group commit takes what is staged and writes it ----------

  hasStaged(): boolean {
    return this.rows.length > 0 || this.docs.size > 0;
  }

  take(): SqliteStaged {
    const rows = this.rows;
    const docs = this.docs;
    this.rows = [];
    this.docs = new Map();
    return {
      write: () => {
        for (const r of rows) this.putRow.run(r.scope.sessionId, r.scope.part, r.log, r.seq, r.body);
        for (const d of docs.values()) {
          if (d.body === undefined) this.deleteDoc.run(d.scope.sessionId, d.scope.part, d.name);
          else this.putDoc.run(d.scope.sessionId, d.scope.part, d.name, d.body);
        }
      },
      restage: () => {
        this.rows = rows;
        this.docs = docs;
      },
    };
  }

  // ---- RuntimeStore -----------------------------------------------------------

  /** @internal a log's row, staged. */
  stageRow(row: StagedRow): void {
    this.rows.push(row);
    this.hooks.schedule();
  }

  /** @internal reads see what is staged (it is committed first). */
  readRows(scope: StoreScope, log: string, after: number): Promise<string[]> {
    return settled(() => {
      this.hooks.commitNow();
      return this.selectRows.all(scope.sessionId, scope.part, log, after).map((r) => r.body);
    });
  }

  log(scope: StoreScope, name: string, options: { fresh?: boolean } = {}): Promise<StoreLog> {
    if (options.fresh) return Promise.resolve(new SqliteLog(this, scope, name, 1));
    return settled(() => {
      this.hooks.commitNow();
      const last = this.selectLast.get(scope.sessionId, scope.part, name)?.last ?? 0;
      return new SqliteLog(this, scope, name, last + 1);
    });
  }

  get(scope: StoreScope, name: string): Promise<string | undefined> {
    const staged = this.docs.get(scopeKey(scope, name));
    if (staged) return Promise.resolve(staged.body);
    return settled(() => this.selectDoc.get(scope.sessionId, scope.part, name)?.body);
  }

  put(scope: StoreScope, name: string, value: string | undefined): void {
    this.docs.set(scopeKey(scope, name), { scope, name, body: value });
    this.hooks.schedule();
  }

  commit(): Promise<void> {
    return this.hooks.commit();
  }

  catalog(sessionId: string): Promise<PartCatalog[]> {
    return settled(() => {
      this.hooks.commitNow();
      const parts = new Map<string, PartCatalog>();
      for (const { part, kind, name } of this.selectNames.all(sessionId, sessionId)) {
        let entry = parts.get(part);
        if (!entry) parts.set(part, (entry = { part, logs: [], docs: [] }));
        (kind === "log" ? entry.logs : entry.docs).push(name);
      }
      return [...parts.values()];
    });
  }

  close(): Promise<void> {
    return this.onClose();
  }
}
