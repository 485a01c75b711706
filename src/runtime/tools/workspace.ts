// Confinement of every file tool to the session's workspace. A path is
// accepted only when it stays inside the workspace both lexically (no `..`
// escape, no foreign absolute path) and physically (its real path, after
// symbolic links, is inside the workspace's real path).
import { realpathSync, statSync } from "node:fs";
import { lstat, realpath } from "node:fs/promises";
import path from "node:path";
import { isInside } from "../../server/workspace-roots.js";
import { ToolError } from "../errors.js";

/** Workspaces opened lately, by the path given (see Workspace.open). */
const opened = new Map<string, { workspace: Workspace; at: number }>();
const REOPEN_MS = 1000;
const MAX_OPENED = 256;

export class Workspace {
  private constructor(
    /** The workspace as given (absolute, normalised). */
    readonly cwd: string,
    /** Its real path, symbolic links resolved. */
    readonly root: string,
  ) {}

  /**
   * Opened once per session: one realpath(3) and one stat, synchronous
   * (cheaper than two thread-pool round trips), and remembered for a second
   * (a server opens many sessions in the same few workspaces). Every tool path
   * is still resolved and checked against the root when it is used.
   */
  static open(cwd: string): Promise<Workspace> {
    return new Promise((resolve) => {
      if (!path.isAbsolute(cwd)) throw new Error("The workspace must be an absolute path.");
      const normalised = path.resolve(cwd);
      const known = opened.get(normalised);
      if (known && Date.now() - known.at < REOPEN_MS) return resolve(known.workspace);
      let real: string;
      try {
        real = realpathSync.native(normalised);
      } catch {
        throw new Error("The workspace directory does not exist.");
      }
      if (!statSync(real, { throwIfNoEntry: false })?.isDirectory())
        throw new Error("The workspace is not a directory.");
      const workspace = new Workspace(normalised, real);
      if (opened.size >= MAX_OPENED) opened.clear();
      opened.set(normalised, { workspace, at: Date.now() });
      resolve(workspace);
    });
  }

  /** Workspace-relative form of an absolute path inside the workspace ("." for the root). */
  relative(absolute: string): string {
    const rel = path.relative(this.root, absolute);
    return rel === "" ? "." : rel.split(path.sep).join("/");
  }

  /** The lexical absolute path of a tool argument, or a ToolError when it leaves the workspace. */
  private lexical(input: string): string {
    if (typeof input !== "string" || input.length === 0) throw new ToolError("A path is required.");
    if (input.includes("\0")) throw new ToolError("The path contains a NUL character.");
    let candidate: string;
    if (path.isAbsolute(input)) {
      const normalised = path.resolve(input);
      // Accept absolute paths spelled with the workspace as given (before symlinks).
      if (isInside(normalised, this.cwd))
        candidate = path.join(this.root, path.relative(this.cwd, normalised));
      else candidate = normalised;
    } else {
      candidate = path.resolve(this.root, input);
    }
    if (!isInside(candidate, this.root)) throw new ToolError("The path is outside the workspace.");
    return candidate;
  }

  /** Resolves a path that must exist (reads). */
  async resolveExisting(input: string): Promise<string> {
    const candidate = this.lexical(input);
    let real: string;
    try {
      real = await realpath(candidate);
    } catch {
      throw new ToolError(`No such file or directory: ${this.relative(candidate)}`);
    }
    if (!isInside(real, this.root)) {
      throw new ToolError("The path leaves the workspace through a symbolic link.");
    }
    return real;
  }

  /** Resolves a path that may not exist yet (writes): its nearest existing ancestor must be inside. */
  async resolveForWrite(input: string): Promise<string> {
    const candidate = this.lexical(input);
    if (candidate === this.root) throw new ToolError("The path names the workspace itself, not a file.");
    let existing = candidate;
    const missing: string[] = [];
    for (;;) {
      try {
        await lstat(existing);
        break;
      } catch {
        missing.unshift(path.basename(existing));
        existing = path.dirname(existing);
      }
    }
    const real = await realpath(existing);
    if (!isInside(real, this.root)) {
      throw new ToolError("The path leaves the workspace through a symbolic link.");
    }
    return path.join(real, ...missing);
  }

  /** Whether a real path (e.g. met while walking a tree) is inside the workspace. */
  contains(realPath: string): boolean {
    return isInside(realPath, this.root);
  }
}
