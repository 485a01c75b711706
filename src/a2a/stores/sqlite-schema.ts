// The SQLite schema of the state database (<persistence-dir>/state.db).
// Tasks are rows with the columns ListTasks filters and sorts on, indexed for
// each filter, and the task itself as protobuf binary (task-codec.ts). A
// counts table, kept by triggers, answers totalSize without counting rows.
import { fromBinary } from "@bufbuild/protobuf";
import type { Database } from "better-sqlite3";
import { pb } from "../../contract/index.js";
import { encodeTask } from "./task-codec.js";

/** 1: a task body is a bare lf.a2a.v1.Task; 2: an iac_code.a2a.state.v1.StoredTask. */
export const SCHEMA_VERSION = 2;
const MIGRATION_BATCH = 1000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tasks (
  id TEXT NOT NULL UNIQUE,
  owner TEXT NOT NULL,
  context_id TEXT NOT NULL,
  state INTEGER NOT NULL,
  status_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  language TEXT NOT NULL,
  credential_names TEXT NOT NULL,
  body BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_by_owner ON tasks (owner, status_ms DESC, id DESC);
CREATE INDEX IF NOT EXISTS tasks_by_context ON tasks (owner, context_id, status_ms DESC, id DESC);
CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks (owner, state, status_ms DESC, id DESC);
-- SUBMITTED (1) and WORKING (2): the tasks a restart must settle.
CREATE INDEX IF NOT EXISTS tasks_unfinished ON tasks (state) WHERE state IN (1, 2);

CREATE TABLE IF NOT EXISTS task_counts (
  owner TEXT NOT NULL,
  state INTEGER NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (owner, state)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS task_counts_insert AFTER INSERT ON tasks BEGIN
  INSERT INTO task_counts (owner, state, n) VALUES (NEW.owner, NEW.state, 1)
    ON CONFLICT (owner, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS task_counts_update AFTER UPDATE OF owner, state ON tasks
WHEN OLD.owner IS NOT NEW.owner OR OLD.state IS NOT NEW.state BEGIN
  UPDATE task_counts SET n = n - 1 WHERE owner = OLD.owner AND state = OLD.state;
  INSERT INTO task_counts (owner, state, n) VALUES (NEW.owner, NEW.state, 1)
    ON CONFLICT (owner, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS task_counts_delete AFTER DELETE ON tasks BEGIN
  UPDATE task_counts SET n = n - 1 WHERE owner = OLD.owner AND state = OLD.state;
END;

-- The artifact index: a task's artifacts in the order they were first announced (rowid).
CREATE TABLE IF NOT EXISTS artifacts (
  task_id TEXT NOT NULL,
  artifact_id TEXT NOT NULL,
  body BLOB NOT NULL,
  UNIQUE (task_id, artifact_id)
);

CREATE TABLE IF NOT EXISTS contexts (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  session_id TEXT NOT NULL,
  cwd TEXT NOT NULL,
  updated_ms INTEGER NOT NULL,
  telemetry_channel TEXT
) WITHOUT ROWID;

-- The permission audit: each line as JSON in the contract shape (schemas/audit/permission-audit-line.json).
CREATE TABLE IF NOT EXISTS permission_audit_lines (
  seq INTEGER PRIMARY KEY,
  line TEXT NOT NULL
);

-- Push notification configs; token and credentials only sealed by the push keyring.
CREATE TABLE IF NOT EXISTS push_configs (
  task_id TEXT NOT NULL,
  id TEXT NOT NULL,
  owner TEXT NOT NULL,
  url TEXT NOT NULL,
  scheme TEXT NOT NULL,
  sealed_secrets TEXT NOT NULL,
  PRIMARY KEY (task_id, id)
) WITHOUT ROWID;

-- The push outbox and local queue: jobs written in the commit of the state change that causes
-- them, claimed in order (seq) once due; a claim is a lease (lease_until_ms), dead letters apart.
CREATE TABLE IF NOT EXISTS push_jobs (
  seq INTEGER PRIMARY KEY,
  job_id TEXT NOT NULL UNIQUE,
  event_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  config_id TEXT NOT NULL,
  url TEXT NOT NULL,
  scheme TEXT NOT NULL,
  sealed_secrets TEXT NOT NULL,
  payload TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  next_attempt_ms INTEGER NOT NULL,
  lease_until_ms INTEGER NOT NULL,
  last_error TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS push_jobs_due ON push_jobs (next_attempt_ms, seq);
CREATE TABLE IF NOT EXISTS push_dead (
  seq INTEGER PRIMARY KEY,
  job_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  config_id TEXT NOT NULL,
  url TEXT NOT NULL,
  scheme TEXT NOT NULL,
  sealed_secrets TEXT NOT NULL,
  payload TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  next_attempt_ms INTEGER NOT NULL,
  last_error TEXT NOT NULL,
  dead_ms INTEGER NOT NULL
);

-- Records that could not be read back, kept for inspection instead of failing every read.
CREATE TABLE IF NOT EXISTS quarantine (
  seq INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  id TEXT NOT NULL,
  reason TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  body BLOB
);
`;

export class SchemaVersionError extends Error {
  override readonly name = "SchemaVersionError";
}

/** Creates the schema (or checks it) inside the caller's write transaction. */
export function applySchema(db: Database, file: string): void {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new SchemaVersionError(
      `The state database ${file} was written by a newer iac-code (schema ${version}; this one reads ${SCHEMA_VERSION}).`,
    );
  }
  db.exec(SCHEMA);
  contextChannels(db);
  if (version === 1) storedTaskBodies(db);
  if (version < SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
}

/**
 * The contexts' telemetry channel (a nullable column added in place: a database
 * of an earlier version gets it, and an earlier version still reads this one).
 */
function contextChannels(db: Database): void {
  const columns = db.prepare<[], { name: string }>("PRAGMA table_info(contexts)").all();
  if (!columns.some((c) => c.name === "telemetry_channel"))
    db.exec("ALTER TABLE contexts ADD COLUMN telemetry_channel TEXT");
}

/** Schema 1 -> 2: every task body rewritten as a StoredTask; a body that does not decode is left for the quarantine. */
function storedTaskBodies(db: Database): void {
  const batch = db.prepare<[number, number], { rowid: number; body: Buffer }>(
    "SELECT rowid, body FROM tasks WHERE rowid > ? ORDER BY rowid LIMIT ?",
  );
  const update = db.prepare("UPDATE tasks SET body = ? WHERE rowid = ?");
  for (let after = 0; ;) {
    const rows = batch.all(after, MIGRATION_BATCH);
    if (rows.length === 0) return;
    for (const { rowid, body } of rows) {
      let task: pb.Task | undefined;
      try {
        task = fromBinary(pb.TaskSchema, body);
      } catch {
        // Unreadable already: the first read quarantines it.
      }
      if (task) update.run(encodeTask(task), rowid);
    }
    after = rows[rows.length - 1].rowid;
  }
}
