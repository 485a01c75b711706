// Durable file writes: a write that a resume depends on, or a file a
// cancelled turn must not leave half-written, goes to a temporary file in the
// same directory, is flushed, and is renamed over the target in one step.
import { randomBytes } from "node:crypto";
import { open, rename, unlink, mkdir, appendFile } from "node:fs/promises";
import path from "node:path";
import { abortError } from "./abort.js";

export interface AtomicWriteOptions {
  mode?: number;
  /** Checked before the rename: an aborted write leaves the target untouched. */
  signal?: AbortSignal;
  /** Called between writing and renaming (tests use it to abort at that point). */
  beforeRename?: () => Promise<void> | void;
}

export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temp, "wx", options.mode ?? 0o644);
  let renamed = false;
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await options.beforeRename?.();
    if (options.signal?.aborted) throw abortError();
    await rename(temp, target);
    renamed = true;
  } finally {
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
}

export async function ensureDir(dir: string, mode = 0o700): Promise<void> {
  await mkdir(dir, { recursive: true, mode });
}

/** Appends one JSON line; files are private to the user (0600). */
export async function appendJsonLine(file: string, record: unknown): Promise<void> {
  await appendFile(file, `${JSON.stringify(record)}\n`, { encoding: "utf8", mode: 0o600 });
}

/** Runs async jobs one after the other (ordered appends to one file). */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const next = this.tail.then(job, job);
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** Resolves when every job queued so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
