// File system failures a tool meets in a workspace that changes under it (a
// dangling symbolic link, a permission error, a file removed between two
// calls) become tool errors the model can read and act on; the turn goes on.
// Paths are shown relative to the workspace, never as absolute server paths.
import { ToolError } from "../errors.js";
import type { Workspace } from "./workspace.js";

const REASONS: Record<string, string> = {
  ENOENT: "does not exist (it may have been removed, or be a symbolic link to nothing)",
  EACCES: "cannot be accessed: permission denied",
  EPERM: "cannot be accessed: operation not permitted",
  ELOOP: "is a loop of symbolic links",
  ENOTDIR: "has a part that is not a directory",
  EISDIR: "is a directory",
  ENAMETOOLONG: "has a name that is too long",
  EBUSY: "is busy",
  EMFILE: "cannot be opened now: too many open files",
  ENOSPC: "cannot be written: no space left on the device",
  EROFS: "cannot be written: read-only file system",
};

/** The readable ToolError for a file system error, or undefined for anything else. */
export function fsToolError(error: unknown, workspace: Workspace): ToolError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== "string" || !(code in REASONS)) return undefined;
  const file = (error as NodeJS.ErrnoException).path;
  const where = file && workspace.contains(file) ? workspace.relative(file) : "A path";
  return new ToolError(`${where} ${REASONS[code]}.`);
}
