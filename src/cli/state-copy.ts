// The work of `iac-code state backup|restore` (state-command.ts): the server's
// settings resolved as the server resolves them, the database copied page by
// page with better-sqlite3's backup() (SQLite's online backup API) into a
// staging file, synced, and renamed into place.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, openSync, closeSync, fsyncSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { ConfigError, loadConfigFile, resolveSettings } from "../a2a/config/server-settings.js";
import { ownerPid } from "../a2a/stores/owner-lock.js";
import { STATE_FILE } from "../a2a/stores/sqlite-state.js";
import type { CliValues } from "../server/settings.js";

/** The options of `iac-code state backup|restore`. */
export interface StateCopyOptions {
  config?: string;
  persistenceDir?: string;
  store?: string;
  force?: boolean;
}

const REDIS_PROCEDURE =
  'store: redis keeps the state in Redis: back it up with Redis itself (docs/operations.md, "Backups").';

const fail = (message: string): number => {
  process.stderr.write(`${message}\n`);
  return 1;
};

function persistenceDirOf(options: StateCopyOptions): string {
  if (options.store === "redis") throw new ConfigError(REDIS_PROCEDURE);
  const env = process.env;
  const configFile = options.config ?? (env.IACCODE_A2A_CONFIG || undefined);
  const cli: CliValues = {};
  if (options.persistenceDir !== undefined) cli["persistence-dir"] = options.persistenceDir;
  if (options.store !== undefined) cli.store = options.store;
  const settings = resolveSettings(configFile ? loadConfigFile(configFile) : {}, cli, env);
  if (settings.store === "redis") throw new ConfigError(REDIS_PROCEDURE);
  return settings.persistenceDir;
}

function syncFile(file: string): void {
  const fd = openSync(file, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Copies `from` into `to` (replaced) through a staging file beside it. */
async function copyDatabase(from: string, to: string): Promise<void> {
  const staged = `${to}.${randomBytes(6).toString("hex")}.partial`;
  // Not read-only: a database left with its WAL (a server killed) is recovered on open.
  const source = new BetterSqlite3(from, { fileMustExist: true, timeout: 0 });
  try {
    await source.backup(staged);
    // The copy stands alone: one file, no WAL beside it.
    const copy = new BetterSqlite3(staged);
    copy.pragma("journal_mode = DELETE");
    const check = copy.pragma("quick_check", { simple: true }) as string;
    copy.close();
    if (check !== "ok") throw new Error(`the copy does not check: ${check}`);
    syncFile(staged);
    for (const suffix of ["-wal", "-shm"]) rmSync(`${to}${suffix}`, { force: true });
    renameSync(staged, to);
    syncFile(path.dirname(to));
  } finally {
    source.close();
    rmSync(staged, { force: true });
  }
}

function busyText(error: unknown, dir: string): string | undefined {
  const code = (error as { code?: string } | null)?.code;
  if (code !== "SQLITE_BUSY" && code !== "SQLITE_LOCKED") return undefined;
  return `The state database in ${dir} is held by a running iac-code A2A server (PID ${ownerPid(dir) ?? "unknown"}): stop it first.`;
}

export async function stateBackup(dir: string, options: StateCopyOptions): Promise<number> {
  let persist: string;
  try {
    persist = persistenceDirOf(options);
  } catch (error) {
    return fail(error instanceof ConfigError ? error.message : String(error));
  }
  const source = path.join(persist, STATE_FILE);
  if (!existsSync(source)) return fail(`No state database in ${persist} (${STATE_FILE}).`);
  try {
    // A server's exclusive lock lets a reader in but hides what its WAL holds: refuse while it runs.
    if (inUse(source))
      return fail(busyText({ code: "SQLITE_BUSY" }, persist) ?? "The state database is in use.");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const target = path.join(path.resolve(dir), STATE_FILE);
    await copyDatabase(source, target);
    process.stdout.write(`State of ${persist} backed up to ${target}\n`);
    return 0;
  } catch (error) {
    return fail(busyText(error, persist) ?? `Cannot back up the state: ${(error as Error).message}`);
  }
}

/** True when a server holds the database (its exclusive lock refuses a write transaction). */
function inUse(file: string): boolean {
  if (!existsSync(file)) return false;
  const db = new BetterSqlite3(file, { timeout: 0 });
  try {
    db.exec("BEGIN IMMEDIATE; COMMIT;");
    return false;
  } catch (error) {
    if (busyText(error, path.dirname(file))) return true;
    throw error;
  } finally {
    db.close();
  }
}

export async function stateRestore(dir: string, options: StateCopyOptions): Promise<number> {
  let persist: string;
  try {
    persist = persistenceDirOf(options);
  } catch (error) {
    return fail(error instanceof ConfigError ? error.message : String(error));
  }
  const source = path.join(path.resolve(dir), STATE_FILE);
  if (!existsSync(source)) return fail(`No backup in ${dir} (${STATE_FILE}).`);
  const target = path.join(persist, STATE_FILE);
  try {
    if (inUse(target))
      return fail(busyText({ code: "SQLITE_BUSY" }, persist) ?? "The state database is in use.");
    if (existsSync(target) && !options.force)
      return fail(`${target} exists: give --force to replace it with the backup.`);
    mkdirSync(persist, { recursive: true, mode: 0o700 });
    await copyDatabase(source, target);
    process.stdout.write(`State of ${persist} restored from ${source}\n`);
    return 0;
  } catch (error) {
    return fail(`Cannot restore the state: ${(error as Error).message}`);
  }
}
