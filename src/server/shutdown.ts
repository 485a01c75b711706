// Stopping a server process: SIGINT/SIGTERM (or the parent going away, for a
// managed child with an IPC channel) start a graceful stop. The whole stop,
// from the first signal to the exit, takes at most the shutdown timeout: the
// graceful part gets the timeout less a reserve; past that, or on a second
// signal (not for a managed child: see stop), `keep` saves what the stores must keep (within the reserve) and the
// process exits 1. Log lines still queued get a short, bounded flush: a log
// destination never holds the stop up (see fd-log-writer.ts).
import type { Logger } from "pino";

/** The most a forced stop keeps for `keep` (flush pending store writes) at the end of the timeout. */
const KEEP_LIMIT_MS = 2000;
/** The most the exit waits for queued log lines (a pipe whose reader stopped reading gets no more). */
const LOG_FLUSH_LIMIT_MS = 500;

/** The part of the timeout kept, after the graceful stop's deadline, for `keep` and the last log lines. */
export function forcedReserveMs(timeoutMs: number): number {
  return Math.min(KEEP_LIMIT_MS, Math.floor(timeoutMs / 4));
}

export interface StopOptions {
  logger: Pick<Logger, "info" | "warn" | "error" | "flush">;
  /** The graceful stop: close listeners, end turns, flush. */
  graceful: () => Promise<void>;
  /** What a forced exit still does first (flush pending store writes). */
  keep?: () => Promise<void>;
  timeoutMs: number;
  /** Exit a managed child when its parent's IPC channel closes (the parent died or let go). */
  watchParent?: boolean;
  /** Test seams. */
  exit?: (code: number) => void;
  signals?: NodeJS.EventEmitter;
}

/** Registers the stop handlers; returns the stop function (also for idle shutdown). */
export function handleStopSignals(options: StopOptions): (reason: string) => void {
  const { logger } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const signals = options.signals ?? process;
  let stopping = false;
  let forcing = false;
  let exited = false;
  /** When the process must be gone: the first signal plus the shutdown timeout. */
  let endAt = Infinity;
  const left = (limitMs: number) => Math.max(0, Math.min(limitMs, endAt - Date.now()));
  /** Resolves after `ms` whatever happens (a timer the process stays up for: the exit comes after it). */
  const after = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  const finish = (code: number): void => {
    if (exited) return;
    exited = true;
    const flushed = new Promise<void>((resolve) => logger.flush(() => resolve()));
    void Promise.race([flushed, after(left(LOG_FLUSH_LIMIT_MS))]).then(() => exit(code));
  };
  const force = (why: string): void => {
    if (forcing) return;
    forcing = true;
    const keepMs = left(KEEP_LIMIT_MS);
    logger.warn({ why, keepLimitMs: keepMs }, "stopping without waiting any longer");
    void Promise.race([options.keep?.().catch(() => undefined), after(keepMs)]).then(() => finish(1));
  };
  const stop = (reason: string): void => {
    if (stopping) {
      // A managed child gets a group's Ctrl-C (or systemd's SIGTERM) and then its parent's
      // SIGTERM: the second is not a hurry. Its parent kills it past its own grace period.
      if (options.watchParent) logger.info({ reason }, "already shutting down");
      else force(`${reason} during shutdown`);
      return;
    }
    stopping = true;
    endAt = Date.now() + options.timeoutMs;
    logger.info({ reason }, "shutting down");
    const gracefulMs = options.timeoutMs - forcedReserveMs(options.timeoutMs);
    const deadline = setTimeout(() => force(`shutdown took over ${gracefulMs} ms`), gracefulMs);
    options.graceful().then(
      () => {
        clearTimeout(deadline);
        finish(0);
      },
      (error: unknown) => {
        clearTimeout(deadline);
        logger.error({ err: error }, "shutdown failed");
        finish(1);
      },
    );
  };
  signals.on("SIGINT", () => stop("SIGINT"));
  signals.on("SIGTERM", () => stop("SIGTERM"));
  // Spawned with an IPC channel (process.send exists even once it is closed):
  // its close means the parent is gone, maybe before we got here.
  if (options.watchParent && typeof process.send === "function") {
    if (!process.connected) stop("parent exited");
    else {
      process.channel?.unref();
      process.once("disconnect", () => stop("parent exited"));
    }
  }
  return stop;
}
