// Workspace containment shared by the A2A server, the AG-UI adapter and the
// runtime's file tools: which directories are allowed roots, and whether a
// (resolved) path lies inside one.
import { realpathSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expandPath } from "./paths.js";

/** True when child is root itself or below it (both absolute; resolve symlinks first). */
export function isInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The entries of an OS-path-separator list (e.g. an *_ALLOWED_CWDS variable), else the defaults. */
export function rootList(raw: string | undefined, defaults: readonly string[]): string[] {
  const entries = (raw ?? "").split(path.delimiter).filter((s) => s.trim() !== "");
  return entries.length > 0 ? entries : [...defaults];
}

/** The server's default roots: its working directory and the system temp directory. */
export function defaultRoots(cwd = process.cwd()): string[] {
  return [cwd, os.tmpdir()];
}

/** The existing directories among the candidates: ~ and $VAR expanded, symlinks resolved, duplicates dropped. */
export function existingRoots(candidates: readonly string[]): string[] {
  const roots: string[] = [];
  for (const candidate of candidates) {
    try {
      const real = realpathSync(expandPath(candidate));
      if (statSync(real).isDirectory() && !roots.includes(real)) roots.push(real);
    } catch {
      // Missing roots simply do not count.
    }
  }
  return roots;
}
