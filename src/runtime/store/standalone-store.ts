// The runtime store of a runtime that no server hosts (tests, benchmarks, the
// runtime used on its own): one SQLite database of its own, in WAL mode, with
// its own group commit. A server passes its state store's instead (one
// database, one commit for the task state and what the turn wrote).
import { mkdirSync } from "node:fs";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import type { Logger } from "pino";
import type { RuntimeStore } from "./runtime-store.js";
import { sqliteGroupCommit } from "./sqlite-group-commit.js";
import { SqliteRuntimeStore } from "./sqlite-runtime-store.js";

/** The file of a standalone runtime's store under its config dir. */
export const STANDALONE_STORE_FILE = "runtime.db";

export function openStandaloneStore(configDir: string, logger: Logger): RuntimeStore {
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  const db = new BetterSqlite3(path.join(configDir, STANDALONE_STORE_FILE), { timeout: 5000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  // Statement journals in memory, not in temporary files (sqlite-state.ts).
  db.pragma("temp_store = MEMORY");
  const group = sqliteGroupCommit(db, logger);
  const store = new SqliteRuntimeStore(db, group, () => group.close(() => db.close()));
  group.join(store);
  return store;
}
