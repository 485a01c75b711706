// The log destination on fd 1 or 2 (stdout, stderr). A log destination must
// never hold the process up, least of all its stop:
// - writes are asynchronous, one at a time, bounded in memory (beyond the
//   bound, lines are dropped);
// - a pipe or FIFO is written through a non-blocking description of its own
//   (see ownNonBlockingPipe), so a stopped reader can hold no write, and with
//   it no thread the process's exit waits for;
// - a full pipe (EAGAIN: a slow or stopped reader) is retried later, off the
//   event loop's back; any other error (EPIPE: the reader has gone) silences the
//   destination for good;
// - at exit, what is still queued gets one non-blocking write attempt and is
//   otherwise dropped.
// pino's own destination (sonic-boom) is not used for this: pino flushes it at
// exit with flushSync(), which retries every failed write, EPIPE included,
// every 100 ms for ever, so a server whose log pipe lost its reader never
// exited (issue 21).
import fs from "node:fs";

/** How long a full pipe is left before the next attempt. */
const RETRY_MS = 100;

/**
 * A pipe or FIFO on `fd` opened again, non-blocking, as a description of its own (Linux:
 * /proc/self/fd), or undefined for anything else or where that fails (the fd is
 * then written as it is). Not `fd` itself: O_NONBLOCK belongs to the description,
 * which every process writing to the pipe shares, and they flip it; a managed
 * A2A child (libuv makes a child's stdio blocking, Node puts back at exit the mode
 * it found) leaves its parent's stderr blocking when it exits.
 */
function ownNonBlockingPipe(fd: number): number | undefined {
  try {
    if (!fs.fstatSync(fd).isFIFO()) return undefined;
    return fs.openSync(`/proc/self/fd/${fd}`, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
}

/** Whether a synchronous write to `fd` cannot wait for a reader (a file, a terminal, /dev/null). */
function neverWaits(fd: number): boolean {
  try {
    const stat = fs.fstatSync(fd);
    return stat.isFile() || stat.isCharacterDevice();
  } catch {
    return false;
  }
}

/** Log bytes kept in memory while the destination is slow; beyond that lines are dropped. */
const MAX_QUEUED_BYTES = 16 * 1024 * 1024;

/** One writer per fd, shared by every logger of the process (one queue keeps their lines in order). */
const writers = new Map<number, FdLogWriter>();

/** The log writer on fd 1 or 2. */
export function stdioLogWriter(fd: 1 | 2): FdLogWriter {
  let writer = writers.get(fd);
  if (!writer) {
    if (writers.size === 0) process.once("exit", () => writers.forEach((w) => w.writeOnceAtExit()));
    writer = new FdLogWriter(fd, MAX_QUEUED_BYTES);
    writers.set(fd, writer);
  }
  return writer;
}

export class FdLogWriter {
  /** Lines waiting for the current write to finish. */
  private queue: string[] = [];
  private queuedBytes = 0;
  /** What is being written (or waits for a retry): taken off the queue, maybe partly written. */
  private current: Buffer | undefined;
  private writing = false;
  private retry: NodeJS.Timeout | undefined;
  private broken = false;
  private drained: Array<() => void> = [];
  /** What is written to: a non-blocking description of the pipe on `fd`, or `fd`. */
  private readonly target: number;
  /** Whether the exit may write what is left synchronously (it cannot block). */
  private readonly exitMayWrite: boolean;

  constructor(
    readonly fd: number,
    private readonly maxQueuedBytes: number,
  ) {
    const own = ownNonBlockingPipe(fd);
    this.target = own ?? fd;
    this.exitMayWrite = own !== undefined || neverWaits(fd);
  }

  /** True once a write failed for good (the destination is silent from then on). */
  get isBroken(): boolean {
    return this.broken;
  }

  write(line: string): void {
    if (this.broken) return;
    const bytes = Buffer.byteLength(line);
    if (this.queuedBytes + bytes > this.maxQueuedBytes) return;
    this.queue.push(line);
    this.queuedBytes += bytes;
    this.pump();
  }

  /** Calls `cb` once everything written so far is out, or the destination broke. */
  flush(cb: () => void = () => undefined): void {
    if (this.broken || this.idle()) {
      cb();
      return;
    }
    this.drained.push(cb);
  }

  private idle(): boolean {
    return !this.writing && !this.current && this.queue.length === 0;
  }

  private pump(): void {
    if (this.broken || this.writing || this.retry) return;
    if (!this.current) {
      if (this.queue.length === 0) return this.settle();
      this.current = Buffer.from(this.queue.join(""));
      this.queue = [];
      this.queuedBytes = 0;
    }
    const chunk = this.current;
    this.writing = true;
    fs.write(this.target, chunk, 0, chunk.length, null, (error, written) => {
      this.writing = false;
      if (error?.code === "EAGAIN") {
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.pump();
        }, RETRY_MS);
        // A full pipe alone does not keep the process alive.
        this.retry.unref();
        return;
      }
      if (error) return this.break();
      this.current = written < chunk.length ? chunk.subarray(written) : undefined;
      this.pump();
    });
  }

  private break(): void {
    this.broken = true;
    this.queue = [];
    this.queuedBytes = 0;
    this.current = undefined;
    clearTimeout(this.retry);
    this.settle();
  }

  private settle(): void {
    const waiting = this.drained;
    this.drained = [];
    for (const cb of waiting) cb();
  }

  /**
   * One attempt, at exit, to write what is queued (not a chunk still in flight:
   * it would be written twice), where that cannot wait: whatever a pipe does not
   * take at once is dropped. (A socket is left alone: the stop already gave it a
   * bounded asynchronous flush.)
   */
  writeOnceAtExit(): void {
    if (this.broken || !this.exitMayWrite) return;
    const rest = [this.writing ? undefined : this.current, Buffer.from(this.queue.join(""))];
    let out = Buffer.concat(rest.filter((b): b is Buffer => b !== undefined));
    try {
      while (out.length > 0) {
        const written = fs.writeSync(this.target, out);
        if (written <= 0) break;
        out = out.subarray(written);
      }
    } catch {
      // EAGAIN, EPIPE, anything: the process is leaving and waits for no reader.
    }
  }
}
