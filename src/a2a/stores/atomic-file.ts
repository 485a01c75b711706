// Durable JSON files: write to a temp file in the same directory, fsync it,
// rename over the target, fsync the directory. Reads skip (and report)
// unreadable or corrupt files instead of failing.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";

/** Directories known to exist (saves a mkdir per write). */
const knownDirs = new Set<string>();
/**
 * Files whose directory entry this process already made durable. Replacing
 * such a file needs no directory fsync: after a crash either the old or the
 * new content is there, both complete.
 */
const durableEntries = new Set<string>();

export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(file);
  if (!knownDirs.has(dir)) {
    await fs.mkdir(dir, { recursive: true });
    knownDirs.add(dir);
  }
  const temp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(temp, "w", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    // The directory went away since we last saw it: create it again.
    await fs.mkdir(dir, { recursive: true });
    handle = await fs.open(temp, "w", 0o600);
  }
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  if (durableEntries.has(file)) return;
  try {
    const dirHandle = await fs.open(dir, "r");
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
    durableEntries.add(file);
  } catch {
    // Directory fsync is not supported everywhere (e.g. Windows); the rename is still atomic.
  }
}

export interface CorruptFileReport {
  file: string;
  reason: string;
}

/** Parses every *.json file of dir; corrupt ones are passed to onCorrupt and skipped. */
export async function readJsonDir(
  dir: string,
  onCorrupt: (report: CorruptFileReport) => void,
): Promise<Array<{ file: string; value: unknown }>> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const out: Array<{ file: string; value: unknown }> = [];
  for (const name of names.sort()) {
    if (!name.endsWith(".json") || name.startsWith(".")) continue;
    const file = path.join(dir, name);
    try {
      out.push({ file, value: JSON.parse(await fs.readFile(file, "utf8")) as unknown });
    } catch (error) {
      onCorrupt({ file, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return out;
}

const WINDOWS_DEVICE = /^(CON|PRN|AUX|NUL|COM[0-9¹²³]|LPT[0-9¹²³])$/i;

/** A file-name stem for an id: the id itself when safe, else a reversible encoding. */
export function fileStem(id: string): string {
  const base = id.split(".")[0] ?? "";
  if (
    /^[A-Za-z0-9_.-]+$/.test(id) &&
    !id.endsWith(".") &&
    !id.startsWith(".") &&
    !WINDOWS_DEVICE.test(base)
  ) {
    return id;
  }
  return `a2aid~${Buffer.from(id, "utf8").toString("base64url")}`;
}

/**
 * Serialises writes per key so that a later snapshot never lands before an
 * earlier one. While a write runs, newer writes of the same key coalesce: only
 * the latest runs next, and every caller waiting on a superseded write is
 * released when that latest one lands. flush() awaits everything pending.
 */
export class WriteQueue {
  private readonly keys = new Map<
    string,
    {
      running: Promise<void>;
      next?: { write: () => Promise<void>; waiters: Array<[() => void, (e: unknown) => void]> };
    }
  >();

  enqueue(key: string, write: () => Promise<void>): Promise<void> {
    const state = this.keys.get(key);
    if (!state) {
      const running = this.run(key, write);
      this.keys.set(key, { running });
      return running;
    }
    return new Promise<void>((resolve, reject) => {
      const waiters = state.next?.waiters ?? [];
      waiters.push([resolve, reject]);
      state.next = { write, waiters };
    });
  }

  private async run(key: string, write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } finally {
      queueMicrotask(() => this.advance(key));
    }
  }

  private advance(key: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    const next = state.next;
    if (!next) {
      this.keys.delete(key);
      return;
    }
    state.next = undefined;
    state.running = this.run(key, next.write);
    state.running.then(
      () => next.waiters.forEach(([resolve]) => resolve()),
      (error: unknown) => next.waiters.forEach(([, reject]) => reject(error)),
    );
  }

  async flush(): Promise<void> {
    while (this.keys.size > 0) {
      await Promise.allSettled([...this.keys.values()].map((s) => s.running));
      await new Promise<void>((resolve) => queueMicrotask(resolve));
    }
  }
}
