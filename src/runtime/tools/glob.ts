// Glob patterns (`**`, `*`, `?`, `[...]`, `{a,b}`) compiled to regular
// expressions over "/"-separated relative paths, and a confined tree walk.
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";

function escapeRegex(ch: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
}

export function globToRegExp(pattern: string): RegExp {
  let out = "";
  let braceDepth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === "*") {
      if (pattern[i + 1] === "*") {
        const atSegmentStart = i === 0 || pattern[i - 1] === "/";
        const next = pattern[i + 2];
        if (atSegmentStart && next === "/") {
          out += "(?:[^/]*/)*";
          i += 2;
        } else {
          out += ".*";
          i += 1;
        }
      } else {
        out += "[^/]*";
      }
    } else if (ch === "?") {
      out += "[^/]";
    } else if (ch === "[") {
      const end = pattern.indexOf("]", i + 1);
      if (end === -1) {
        out += "\\[";
      } else {
        let body = pattern.slice(i + 1, end).replace(/\\/g, "\\\\");
        if (body.startsWith("!")) body = `^${body.slice(1)}`;
        out += `[${body}]`;
        i = end;
      }
    } else if (ch === "{") {
      braceDepth++;
      out += "(?:";
    } else if (ch === "}" && braceDepth > 0) {
      braceDepth--;
      out += ")";
    } else if (ch === "," && braceDepth > 0) {
      out += "|";
    } else {
      out += escapeRegex(ch);
    }
  }
  return new RegExp(`^${out}$`);
}

const SKIPPED_DIRS = new Set([".git", "node_modules", ".hg", ".svn"]);

export interface WalkEntry {
  /** Absolute path. */
  absolute: string;
  /** Relative to the walk's base, "/"-separated. */
  relative: string;
  mtimeMs: number;
  size: number;
}

/**
 * Lists regular files under base without following symbolic links (a link
 * can point outside the workspace), skipping VCS and dependency folders.
 */
export async function walkFiles(base: string, limit: number, signal?: AbortSignal): Promise<WalkEntry[]> {
  const out: WalkEntry[] = [];
  const stack: string[] = [base];
  while (stack.length > 0 && out.length < limit) {
    if (signal?.aborted) break;
    const dir = stack.pop() as string;
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      const absolute = path.join(dir, name);
      let info;
      try {
        info = await lstat(absolute);
      } catch {
        continue;
      }
      if (info.isSymbolicLink()) continue;
      if (info.isDirectory()) {
        if (!SKIPPED_DIRS.has(name)) stack.push(absolute);
      } else if (info.isFile()) {
        out.push({
          absolute,
          relative: path.relative(base, absolute).split(path.sep).join("/"),
          mtimeMs: info.mtimeMs,
          size: info.size,
        });
        if (out.length >= limit) break;
      }
    }
  }
  return out;
}
