// Workspace containment shared by the A2A server, the AG-UI adapter and the
// runtime's file tools: which directories are allowed roots, whether a
// (resolved) path lies inside one, and the one rule both protocols apply to a
// requested workspace (absolute, inside a root, an existing directory).
import { existsSync, mkdirSync, realpathSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { configDir, expandPath } from "./paths.js";

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

/** The default workspace: <config-dir>/workspace (never the source checkout a demo runs from). */
export function defaultWorkspace(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDir(env), "workspace");
}

/**
 * The server's default roots: the default workspace (created here, as only a
 * server using the defaults needs it), its working directory and the system
 * temp directory.
 */
export function defaultRoots(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): string[] {
  const workspace = defaultWorkspace(env);
  try {
    mkdirSync(workspace, { recursive: true, mode: 0o700 });
  } catch {
    // A workspace that cannot be created is not a root (existingRoots drops it).
  }
  return [workspace, cwd, os.tmpdir()];
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

/** Why a requested workspace was refused (each has a localised text naming the field: workspace.*). */
export type WorkspaceRefusal = "notAbsolute" | "invalid" | "outsideRoots" | "missing" | "notDirectory";

export type WorkspaceCheck = { ok: true; path: string } | { ok: false; reason: WorkspaceRefusal };

/** Resolves the longest existing prefix through symlinks and keeps the rest as written. */
function realpathLoose(p: string): string {
  try {
    // One realpath(3) call for the usual, existing path (the JS realpathSync makes an lstat per component).
    return realpathSync.native(p);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  let existing = p;
  const rest: string[] = [];
  while (!existsSync(existing)) {
    const parent = path.dirname(existing);
    if (parent === existing) break;
    rest.unshift(path.basename(existing));
    existing = parent;
  }
  return path.join(realpathSync(existing), ...rest);
}

/** Workspaces accepted lately (a server checks the same few for every request), trusted for a second. */
const accepted = new Map<string, { roots: readonly string[]; path: string; at: number }>();
const RECHECK_MS = 1000;
const MAX_ACCEPTED = 256;

/**
 * The workspace rule of both protocols: an absolute path whose real path lies
 * inside an allowed root and is an existing directory; nothing is created.
 * Containment is checked before existence, so a refusal says nothing about
 * paths outside the roots. Returns the real path. An accepted path is
 * accepted again without system calls for a second (a removed or replaced
 * directory is seen after that; the runtime's file tools check every path).
 */
export function checkWorkspace(requested: unknown, roots: readonly string[]): WorkspaceCheck {
  if (typeof requested !== "string" || requested.trim() === "" || !path.isAbsolute(requested)) {
    return { ok: false, reason: "notAbsolute" };
  }
  const known = accepted.get(requested);
  if (known && known.roots === roots && Date.now() - known.at < RECHECK_MS)
    return { ok: true, path: known.path };
  const checked = checkOnDisk(requested, roots);
  if (checked.ok) {
    if (accepted.size >= MAX_ACCEPTED) accepted.clear();
    accepted.set(requested, { roots, path: checked.path, at: Date.now() });
  }
  return checked;
}

function checkOnDisk(requested: string, roots: readonly string[]): WorkspaceCheck {
  let real: string;
  try {
    real = realpathLoose(path.normalize(requested));
  } catch {
    return { ok: false, reason: "invalid" };
  }
  if (!roots.some((root) => isInside(real, root))) return { ok: false, reason: "outsideRoots" };
  if (!existsSync(real)) return { ok: false, reason: "missing" };
  try {
    if (!statSync(real).isDirectory()) return { ok: false, reason: "notDirectory" };
  } catch {
    return { ok: false, reason: "invalid" };
  }
  return { ok: true, path: real };
}
