// Durable JSON files: write to a temp file in the same directory, fsync it,
// rename over the target, fsync the directory. Reads skip (and report)
// unreadable or corrupt files instead of failing.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";

export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true });
  const temp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await fs.open(temp, "w", 0o600);
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
  try {
    const dirHandle = await fs.open(dir, "r");
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
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
 * earlier one, and lets callers await everything pending (flush on shutdown).
 */
export class WriteQueue {
  private readonly chains = new Map<string, Promise<void>>();

  enqueue(key: string, write: () => Promise<void>): Promise<void> {
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous.then(write, write);
    const tracked = next.finally(() => {
      if (this.chains.get(key) === tracked) this.chains.delete(key);
    });
    this.chains.set(key, tracked);
    return next;
  }

  async flush(): Promise<void> {
    while (this.chains.size > 0) await Promise.allSettled([...this.chains.values()]);
  }
}
