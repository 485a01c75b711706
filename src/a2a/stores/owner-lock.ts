// One server per persistence dir. The lock itself is SQLite's exclusive
// locking mode on the state database: the OS releases it when the process
// dies, however it dies, so a stale lock never blocks a restart. The PID file
// beside it only lets a refused server name the process that holds the dir.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const PID_FILE = "owner.pid";

export class PersistenceDirInUseError extends Error {
  override readonly name = "PersistenceDirInUseError";

  constructor(
    readonly dir: string,
    readonly pid: number | undefined,
  ) {
    super(
      `The persistence directory ${dir} is in use by another iac-code A2A server ` +
        `(PID ${pid ?? "unknown"}). Stop that server, or give this one another persistence-dir.`,
    );
  }
}

/** The PID recorded by the server that holds the dir, if readable. */
export function ownerPid(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(dir, PID_FILE), "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Records this process as the holder (called once the lock is taken). */
export function recordOwner(dir: string): void {
  writeFileSync(path.join(dir, PID_FILE), `${process.pid}\n`, { mode: 0o600 });
}

/** Removes the record if it still names this process. */
export function releaseOwner(dir: string): void {
  if (ownerPid(dir) === process.pid) rmSync(path.join(dir, PID_FILE), { force: true });
}
