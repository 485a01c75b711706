// Files a turn consults that rarely change (the workspace's AGENTS.md, the
// cloud credentials file, the aliyun CLI profile): read again only when they
// changed, and looked at (stat) at most once a second. A turn gets the text
// from memory while the file's size, modification time and inode are those it
// had when it was read; a change is seen within a second. A missing file is
// remembered as missing the same way (most of these files do not exist, and
// a failed stat costs an exception).
import { readFileSync, statSync, type Stats } from "node:fs";
import { readFile } from "node:fs/promises";

/** Entries kept at most (one per file; the oldest read goes first). */
const MAX_ENTRIES = 1000;
/** How long a stat is trusted. */
const RECHECK_MS = 1000;

interface Entry {
  /** size, mtime and inode when read ("" for a missing file). */
  key: string;
  /** undefined: the file is missing or unreadable. */
  text: string | undefined;
  checkedAt: number;
}

const entries = new Map<string, Entry>();

function keyOf(stats: Stats | undefined): string {
  return stats ? `${stats.ino}:${stats.size}:${stats.mtimeMs}` : "";
}

function remember(file: string, entry: Entry): string | undefined {
  entries.delete(file);
  entries.set(file, entry);
  if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
  return entry.text;
}

/** What is known of a file, and whether it must be read again (after a stat when the last one is old). */
function look(file: string): { known?: Entry; key: string; fresh: boolean } {
  const known = entries.get(file);
  const now = Date.now();
  if (known && now - known.checkedAt < RECHECK_MS) return { known, key: known.key, fresh: true };
  // A stat syscall, without an exception for a missing file.
  const key = keyOf(statSync(file, { throwIfNoEntry: false }));
  if (known && known.key === key) {
    known.checkedAt = now;
    return { known, key, fresh: true };
  }
  return { ...(known ? { known } : {}), key, fresh: false };
}

/** The file's text (undefined when it cannot be read), read only if it changed. */
export function readFileIfChanged(file: string): string | undefined {
  const { known, key, fresh } = look(file);
  if (fresh) return known?.text;
  let text: string | undefined;
  try {
    text = key === "" ? undefined : readFileSync(file, "utf8");
  } catch {
    text = undefined;
  }
  return remember(file, { key, text, checkedAt: Date.now() });
}

/** The same, its read (when there is one) not blocking the event loop. */
export async function readFileIfChangedAsync(file: string): Promise<string | undefined> {
  const { known, key, fresh } = look(file);
  if (fresh) return known?.text;
  let text: string | undefined;
  try {
    text = key === "" ? undefined : await readFile(file, "utf8");
  } catch {
    text = undefined;
  }
  return remember(file, { key, text, checkedAt: Date.now() });
}
