// The workspace of a turn (metadata.iac_code.cwd) and the allowed roots it must
// lie in. Symlinks are resolved before every containment check.
import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { isInside } from "../../server/workspace-roots.js";

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
    // One realpath(3) call (the JS realpathSync makes an lstat per path component, per request).
    real = realpathSync.native(path.normalize(logical));
  } catch {
    throw new WorkspaceError("workspace does not exist");
  }
  if (!statSync(real).isDirectory()) throw new WorkspaceError("workspace is not a directory");
  if (!roots.some((root) => isInside(real, root)))
    throw new WorkspaceError("workspace is outside the allowed roots");
  return real;
}
