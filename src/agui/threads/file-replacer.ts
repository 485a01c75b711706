// Replacing a small file atomically (agui-iaccode.md §7.1): the new text goes
// to a temp file `.<name>.<random>.tmp` in the same directory, which is renamed
// over the target; with `sync` the temp file and the directory are fsynced too.
//
// Creating a file is most of a write's cost on ext4 (here 0.4-0.7 ms of CPU,
// against ~40 µs to overwrite an existing one), and a run writes its thread
// three times. So a replaced version is not freed: a hard link keeps its inode
// as a spare, and a later write (of any thread) overwrites a spare instead of
// creating a file. A spare is used only while it has that one link (no other
// process kept it); at most SPARES are kept, and close() removes them.
import {
  closeSync,
  constants,
  fstatSync,
  fsync,
  ftruncateSync,
  linkSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { promisify } from "node:util";

const fsyncAsync = promisify(fsync);

/** Spares kept at most: what is left after a crash is bounded by it. */
const SPARES = 16;

export class FileReplacer {
  /** This replacer's random tag and a count: unique temp names without random bytes per write. */
  private readonly tag = randomBytes(6).toString("hex");
  private count = 0;
  private readonly spares: string[] = [];
  private closed = false;

  /** The directory was prepared (ensureDir) by this process. */
  private dirReady = false;

  /**
   * `dir` holds the targets; `ensureDir` prepares it before the first file is
   * made, and again when it has vanished.
   */
  constructor(
    private readonly dir: string,
    private readonly sync: boolean,
    private readonly ensureDir: () => void,
  ) {}

  /**
   * Replaces `target` (a file of `dir`) with `text`. Synchronous calls: tens of
   * microseconds of CPU in the page cache where the thread pool costs hundreds;
   * only the fsyncs of `sync` wait on the disk, off this thread.
   */
  async replace(target: string, text: string): Promise<void> {
    const { fd, temp, spare } = this.openTemp(target);
    let kept: string | undefined;
    try {
      try {
        writeFileSync(fd, text);
        // A spare is overwritten from its start, then cut to length: emptying it first
        // frees its blocks, which costs as much as making a file.
        if (spare) ftruncateSync(fd, Buffer.byteLength(text));
        if (this.sync) await fsyncAsync(fd);
      } finally {
        closeSync(fd);
      }
      kept = this.keepCurrent(target);
      renameSync(temp, target);
    } catch (err) {
      rmSync(temp, { force: true });
      if (kept) rmSync(kept, { force: true });
      throw err;
    }
    if (kept) this.addSpare(kept);
    if (this.sync) await this.syncDir();
  }

  /** Removes the spares (when the store closes). */
  close(): void {
    this.closed = true;
    for (const spare of this.spares.splice(0)) rmSync(spare, { force: true });
  }

  private tempName(target: string): string {
    return path.join(this.dir, `.${path.basename(target)}.${this.tag}${++this.count}.tmp`);
  }

  /** A temp file, 0600: a spare when one is free (opened at its start), else a new empty file. */
  private openTemp(target: string): { fd: number; temp: string; spare: boolean } {
    for (let spare = this.spares.pop(); spare !== undefined; spare = this.spares.pop()) {
      const fd = this.openSpare(spare);
      if (fd !== undefined) return { fd, temp: spare, spare: true };
    }
    const temp = this.tempName(target);
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
    if (!this.dirReady) {
      this.ensureDir();
      this.dirReady = true;
    }
    try {
      return { fd: openSync(temp, flags, 0o600), temp, spare: false };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      this.ensureDir();
      return { fd: openSync(temp, flags, 0o600), temp, spare: false };
    }
  }

  /** The spare opened for writing, or undefined (removed) when it is gone or shared. */
  private openSpare(spare: string): number | undefined {
    let fd: number;
    try {
      fd = openSync(spare, constants.O_WRONLY | constants.O_NOFOLLOW);
    } catch {
      return undefined;
    }
    try {
      const stat = fstatSync(fd);
      if (stat.isFile() && stat.nlink === 1) return fd;
    } catch {
      // Unusable: removed below, a new file is made instead.
    }
    closeSync(fd);
    rmSync(spare, { force: true });
    return undefined;
  }

  /** A second link to the target's current version (a spare once replaced); undefined when there is none. */
  private keepCurrent(target: string): string | undefined {
    const name = this.tempName(target);
    try {
      linkSync(target, name);
      return name;
    } catch {
      return undefined; // no target yet (a new thread), or links unsupported: it is simply freed
    }
  }

  private addSpare(spare: string): void {
    if (!this.closed && this.spares.length < SPARES) this.spares.push(spare);
    else rmSync(spare, { force: true });
  }

  private async syncDir(): Promise<void> {
    const dir = openSync(this.dir, constants.O_RDONLY);
    try {
      await fsyncAsync(dir);
    } finally {
      closeSync(dir);
    }
  }
}
