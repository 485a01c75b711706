// One server per persistence dir. The lock itself is SQLite's exclusive
// locking mode on the state database (sqlite-state.ts); the PID file beside it
// (server/dir-lock.ts) only lets a refused server name the process that holds the dir.
import {
  ownerPid as recordedPid,
  recordOwner as record,
  releaseOwner as release,
} from "../../server/dir-lock.js";

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
export const ownerPid = (dir: string): number | undefined => recordedPid(dir, PID_FILE);

/** Records this process as the holder (called once the lock is taken). */
export const recordOwner = (dir: string): void => record(dir, PID_FILE);

/** Removes the record if it still names this process. */
export const releaseOwner = (dir: string): void => release(dir, PID_FILE);
