// Files a turn consults that rarely change (the workspace's AGENTS.md, the
// cloud credentials file, the aliyun CLI profile): read again only when they
// changed. A turn stats the file; its text comes from memory while its size,
// modification time and inode are the same as when it was read.
import { readFileSync, statSync, type Stats } from "node:fs";
import { readFile, stat } from "node:fs/promises";

/** Entries kept at most (one per file; the oldest read goes first). */
const MAX_ENTRIES = 1000;

interface Entry {
  key: string;
  text: string;
}

const entries = new Map<string, Entry>();

function keyOf(stats: Stats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}

function remember(file: string, entry: Entry): string {
  entries.delete(file);
  entries.set(file, entry);
  if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
  return entry.text;
}

/** The file's text (undefined when it cannot be read), read only if it changed since the last call. */
export function readFileIfChanged(file: string): string | undefined {
  let stats: Stats;
  try {
    stats = statSync(file);
  } catch {
    entries.delete(file);
    return undefined;
  }
  const key = keyOf(stats);
  const known = entries.get(file);
  if (known?.key === key) return known.text;
  try {
    return remember(file, { key, text: readFileSync(file, "utf8") });
  } catch {
    return undefined;
  }
}

/** The same, without blocking the event loop. */
export async function readFileIfChangedAsync(file: string): Promise<string | undefined> {
  let stats: Stats;
  try {
    stats = await stat(file);
  } catch {
    entries.delete(file);
    return undefined;
  }
  const key = keyOf(stats);
  const known = entries.get(file);
  if (known?.key === key) return known.text;
  try {
    return remember(file, { key, text: await readFile(file, "utf8") });
  } catch {
    return undefined;
  }
}
