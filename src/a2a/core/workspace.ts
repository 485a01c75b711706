// The workspace of a turn (metadata.iac_code.cwd) and the allowed roots it must
// lie in. Symlinks are resolved before every containment check.
import { realpathSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** Roots from IACCODE_A2A_ALLOWED_CWDS (OS path separator), else server cwd + temp dir. */
export function allowedRootsFromEnv(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string[] {
  const raw = env.IACCODE_A2A_ALLOWED_CWDS;
  const candidates =
    raw !== undefined && raw.trim() !== ""
      ? raw.split(path.delimiter).filter((s) => s.trim() !== "")
      : [cwd, os.tmpdir()];
  const roots: string[] = [];
  for (const candidate of candidates) {
    try {
      const real = realpathSync(candidate.trim());
      if (statSync(real).isDirectory() && !roots.includes(real)) roots.push(real);
    } catch {
      // Missing roots simply do not count.
    }
  }
  return roots;
}

export function isInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

export class WorkspaceError extends Error {}

/**
 * Resolves metadata.iac_code.cwd: absent -> defaultCwd; otherwise an absolute,
 * existing directory inside an allowed root. Returns the real path.
 */
export function resolveWorkspace(requested: unknown, defaultCwd: string, roots: readonly string[]): string {
  const logical = requested === undefined || requested === null ? defaultCwd : requested;
  if (typeof logical !== "string" || logical.trim() === "" || !path.isAbsolute(logical)) {
    throw new WorkspaceError("workspace must be an absolute path");
  }
  let real: string;
  try {
    real = realpathSync(path.normalize(logical));
  } catch {
    throw new WorkspaceError("workspace does not exist");
  }
  if (!statSync(real).isDirectory()) throw new WorkspaceError("workspace is not a directory");
  if (!roots.some((root) => isInside(real, root)))
    throw new WorkspaceError("workspace is outside the allowed roots");
  return real;
}
