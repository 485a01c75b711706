// The embedded state store: one SQLite database (WAL) under persistence-dir,
// owned by one server at a time. Changes are staged in memory and written
// together: every change staged during one event-loop turn lands in one
// transaction, committed at the end of the turn (the group commit); the core
// waits for it before telling a client. It holds the A2A state (tasks,
// contexts, artifacts, audit), the push configs and outbox, and the runtime's
// sessions and pipelines, all in the same commits. With synchronous=NORMAL a
// commit survives the process being killed; sync-every-commit
// (synchronous=FULL) also survives a power loss.
import { mkdirSync } from "node:fs";
import { inSpan } from "../../server/tracing/index.js";
import path from "node:path";
import BetterSqlite3, { type Database, type Statement } from "better-sqlite3";
import type { Logger } from "pino";
import type { pb } from "../../contract/index.js";
import { isBusy } from "../../server/dir-lock.js";
import { settled, type GroupCommit, type StagedPart } from "../../server/group-commit.js";
import { sqliteGroupCommit, type SqliteStaged } from "../../runtime/store/sqlite-group-commit.js";
import { SqliteRuntimeStore } from "../../runtime/store/sqlite-runtime-store.js";
import { ownerPid, PersistenceDirInUseError, recordOwner, releaseOwner } from "./owner-lock.js";
import { SqlitePush } from "./sqlite-push.js";
import { applySchema } from "./sqlite-schema.js";
import { SqliteTaskReader } from "./sqlite-tasks.js";
import {
  nothingStaged,
  type ArtifactIndex,
  type AuditEntry,
  type ContextStore,
  type PermissionAudit,
  type PushConfigStore,
  type PushOutbox,
  type StagedState,
  type StateStore,
  type TaskPage,
  type TaskQuery,
  type TaskStore,
} from "./state.js";
import { encodeArtifact, encodeTask, statusMs } from "./task-codec.js";

export const STATE_FILE = "state.db";

export interface SqliteStateOptions {
  /** The persistence dir (created if missing). */
  dir: string;
  /** fsync the WAL at every commit (synchronous=FULL): commits survive a power loss. */
  syncEveryCommit: boolean;
  logger: Logger;
}

type Staged = StagedState<{ taskId: string; artifact: pb.Artifact }>;

interface ContextRow {
  id: string;
  owner: string;
  session_id: string;
  cwd: string;
  updated_ms: number;
  telemetry_channel: string | null;
}

/** Opens the database and takes the dir for this process (refused while another server holds it). */
function openDatabase(options: SqliteStateOptions): Database {
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const file = path.join(options.dir, STATE_FILE);
  const db = new BetterSqlite3(file, { timeout: 0 });
  try {
    // Exclusive locking: the first write takes the file lock and keeps it until close or process death.
    db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${options.syncEveryCommit ? "FULL" : "NORMAL"}`);
    // 16 MiB of page cache: the indexes' hot pages stay in memory at 100,000 tasks.
    db.pragma("cache_size = -16384");
    // Statement journals in memory: a task upsert (its triggers keep task_counts) runs inside a
    // statement journal, a temporary file by default, which cost ~45 of a task write's ~65 us.
    db.pragma("temp_store = MEMORY");
    // Checkpoint every 10,000 WAL pages (~40 MiB), not SQLite's 1,000: a page rewritten by many
    // commits (index edges, counts) is copied back once, and the checkpoint's two syncs, which
    // block the event loop, come ten times less often.
    db.pragma("wal_autocheckpoint = 10000");
    db.transaction(() => applySchema(db, file)).immediate();
  } catch (error) {
    db.close();
    if (isBusy(error)) throw new PersistenceDirInUseError(options.dir, ownerPid(options.dir));
    throw error;
  }
  recordOwner(options.dir);
  return db;
}

export class SqliteStateStore implements StateStore, StagedPart<SqliteStaged> {
  readonly tasks: TaskStore;
  readonly contexts: ContextStore;
  readonly artifacts: ArtifactIndex;
  readonly audit: PermissionAudit;
  readonly pushConfigs: PushConfigStore;
  readonly pushJobs: PushOutbox;
  readonly runtime: SqliteRuntimeStore;

  private readonly group: GroupCommit<SqliteStaged>;
  private readonly push: SqlitePush;
  private staged: Staged = nothingStaged();
  private readonly reader: SqliteTaskReader;
  private readonly writeStaged: (staged: Staged) => void;

  private constructor(
    private readonly db: Database,
    private readonly options: SqliteStateOptions,
  ) {
    this.group = sqliteGroupCommit(db, options.logger);
    this.reader = new SqliteTaskReader(db, options.logger);
    this.push = new SqlitePush(db, this.group);
    this.runtime = new SqliteRuntimeStore(db, this.group);
    // One transaction per commit: the A2A state, then the push outbox (jobs for the events
    // just staged), then what the runtime wrote.
    this.group.join(this);
    this.group.join(this.push);
    this.group.join(this.runtime);
    this.pushConfigs = this.push.configs;
    this.pushJobs = this.push.jobs;
    const putTask = db.prepare(
      `INSERT INTO tasks (id, owner, context_id, state, status_ms, updated_ms, language, credential_names, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, context_id = excluded.context_id,
         state = excluded.state, status_ms = excluded.status_ms, updated_ms = excluded.updated_ms,
         language = excluded.language, credential_names = excluded.credential_names, body = excluded.body`,
    );
    const putArtifact = db.prepare(
      `INSERT INTO artifacts (task_id, artifact_id, body) VALUES (?, ?, ?)
       ON CONFLICT (task_id, artifact_id) DO UPDATE SET body = excluded.body`,
    );
    const putContext = db.prepare(
      `INSERT INTO contexts (id, owner, session_id, cwd, updated_ms, telemetry_channel) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, session_id = excluded.session_id,
         cwd = excluded.cwd, updated_ms = excluded.updated_ms, telemetry_channel = excluded.telemetry_channel`,
    );
    const putAudit = db.prepare("INSERT INTO permission_audit_lines (line) VALUES (?)");
    this.writeStaged = ({ tasks, artifacts, contexts, audit }) => {
      for (const { task, owner, updatedAt, language, credentialNames } of tasks.values()) {
        const s = task.status?.state ?? 0;
        const body = encodeTask(task);
        putTask.run(
          task.id,
          owner,
          task.contextId,
          s,
          statusMs(task),
          updatedAt,
          language,
          credentialNames.join(","),
          body,
        );
      }
      for (const { taskId, artifact } of artifacts.values()) {
        putArtifact.run(taskId, artifact.artifactId, encodeArtifact(artifact));
      }
      for (const c of contexts.values()) {
        putContext.run(c.contextId, c.owner, c.sessionId, c.cwd, c.updatedAt, c.channel ?? null);
      }
      for (const entry of audit) putAudit.run(JSON.stringify(entry));
    };
    this.tasks = this.taskStore();
    this.contexts = this.contextStore(db.prepare("SELECT * FROM contexts WHERE id = ?"));
    this.artifacts = {
      save: (taskId, artifact) => {
        this.staged.artifacts.set(`${taskId}\u0000${artifact.artifactId}`, { taskId, artifact });
        this.group.schedule();
      },
    };
    this.audit = this.auditLog(db.prepare("SELECT line FROM permission_audit_lines ORDER BY seq"));
  }

  /** Opens (creating if needed) the state of a persistence dir; throws PersistenceDirInUseError when taken. */
  static open(options: SqliteStateOptions): SqliteStateStore {
    return new SqliteStateStore(openDatabase(options), options);
  }

  /** Transactions written so far (each one a group commit). */
  get commits(): number {
    return this.group.commits;
  }

  /**
   * Resolves once what is staged is committed. The commit itself runs at the
   * end of this event-loop turn, so the changes of every request handled in
   * the same turn share one transaction.
   */
  commit(): Promise<void> {
    return inSpan("iac-code.a2a", "store commit", { attributes: { "db.system.name": "sqlite" } }, () =>
      this.group.commit(),
    );
  }

  /** What a commit survives, as SQLite applies it: FULL syncs the WAL at each commit. */
  get synchronous(): "NORMAL" | "FULL" | "OTHER" {
    const level = this.db.pragma("synchronous", { simple: true });
    return level === 1 ? "NORMAL" : level === 2 ? "FULL" : "OTHER";
  }

  close(): Promise<void> {
    return this.group.close(() => {
      this.db.close();
      releaseOwner(this.options.dir);
    });
  }

  // ---- StagedPart: the A2A state's part of each commit ------------------------

  hasStaged(): boolean {
    const { tasks, contexts, artifacts, audit } = this.staged;
    return tasks.size > 0 || contexts.size > 0 || artifacts.size > 0 || audit.length > 0;
  }

  take(): SqliteStaged {
    const staged = this.staged;
    this.staged = nothingStaged();
    return {
      write: () => this.writeStaged(staged),
      restage: () => (this.staged = staged),
      // A record whose commit failed (record() rejects: the decision fails closed) never lands
      // later; after a read's failed commit the records stay staged, their waiters still waiting.
      dropFailed: () => void staged.audit.splice(0),
    };
  }

  private taskStore(): TaskStore {
    // Reads see staged changes: they are committed first.
    const read = <T>(query: () => T): Promise<T> =>
      settled(() => {
        this.group.commitNow();
        return query();
      });
    return {
      get: (id) => read(() => this.reader.get(id)),
      save: (task) => {
        this.staged.tasks.set(task.task.id, task);
        this.group.schedule();
      },
      list: (query: TaskQuery) => read((): TaskPage | undefined => this.reader.list(query)),
      unfinished: () => read(() => this.reader.unfinished()),
    };
  }

  private contextStore(byId: Statement<[string], ContextRow>): ContextStore {
    return {
      get: (contextId) => {
        const staged = this.staged.contexts.get(contextId);
        if (staged) return Promise.resolve({ ...staged });
        const row = byId.get(contextId);
        return Promise.resolve(
          row && {
            contextId: row.id,
            owner: row.owner,
            sessionId: row.session_id,
            cwd: row.cwd,
            updatedAt: row.updated_ms,
            ...(row.telemetry_channel ? { channel: row.telemetry_channel } : {}),
          },
        );
      },
      save: (record) => {
        this.staged.contexts.set(record.contextId, { ...record });
        this.group.schedule();
      },
    };
  }

  private auditLog(all: Statement<[], { line: string }>): PermissionAudit {
    return {
      record: (entry) => {
        this.staged.audit.push({ ...entry });
        return this.commit();
      },
      entries: () => Promise.resolve(all.all().map((r) => JSON.parse(r.line) as AuditEntry)),
    };
  }
}
