// One process per directory. The lock is SQLite's exclusive locking mode on a
// small file in the directory: the OS releases it when the process dies,
// however it dies, so a stale lock never blocks a restart. A PID file beside it
// only lets a refused process name the one that holds the directory.
import BetterSqlite3 from "better-sqlite3";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

export class DirInUseError extends Error {
  override readonly name = "DirInUseError";

  constructor(
    readonly dir: string,
    readonly pid: number | undefined,
  ) {
    super(`The directory ${dir} is in use by PID ${pid ?? "unknown"}.`);
  }
}

export interface DirLock {
  /** Gives the directory back (the process exiting does as much). */
  release(): void;
}

/** Whether a better-sqlite3 error says another connection holds the lock. */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED";
}

/** The PID recorded in `pidFile` under `dir` by the process that holds it, if readable. */
export function ownerPid(dir: string, pidFile: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(dir, pidFile), "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Records this process as the holder (called once the lock is taken). */
export function recordOwner(dir: string, pidFile: string): void {
  writeFileSync(path.join(dir, pidFile), `${process.pid}\n`, { mode: 0o600 });
}

/** Removes the record if it still names this process. */
export function releaseOwner(dir: string, pidFile: string): void {
  if (ownerPid(dir, pidFile) === process.pid) rmSync(path.join(dir, pidFile), { force: true });
}

/**
 * Takes `dir` for this process under `name` (`<name>.lock` and `<name>.pid`);
 * throws DirInUseError while another process holds it.
 */
export function lockDir(dir: string, name: string): DirLock {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pidFile = `${name}.pid`;
  const db = new BetterSqlite3(path.join(dir, `${name}.lock`), { timeout: 0 });
  try {
    // The first write takes the file lock; exclusive mode keeps it until close or process death.
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("CREATE TABLE IF NOT EXISTS holder (pid INTEGER); DELETE FROM holder");
  } catch (error) {
    db.close();
    if (isBusy(error)) throw new DirInUseError(dir, ownerPid(dir, pidFile));
    throw error;
  }
  recordOwner(dir, pidFile);
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      releaseOwner(dir, pidFile);
      db.close();
    },
  };
}
