// Stopping a server process: SIGINT/SIGTERM (or the parent going away, for a
// managed child with an IPC channel) start a graceful stop; a stop that has
// not finished within the shutdown timeout, or a second signal, exits anyway
// after `keep` has saved what the stores must keep (itself bounded).
import type { Logger } from "pino";

/** How long the forced path waits for `keep` before exiting regardless. */
const KEEP_LIMIT_MS = 2000;

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
  let exited = false;
  const finish = (code: number): void => {
    if (exited) return;
    exited = true;
    logger.flush();
    exit(code);
  };
  const force = (why: string): void => {
    logger.warn({ why, keepLimitMs: KEEP_LIMIT_MS }, "stopping without waiting any longer");
    const limit = new Promise<void>((resolve) => setTimeout(resolve, KEEP_LIMIT_MS).unref());
    void Promise.race([options.keep?.().catch(() => undefined), limit]).then(() => finish(1));
  };
  const stop = (reason: string): void => {
    if (stopping) {
      force(`${reason} during shutdown`);
      return;
    }
    stopping = true;
    logger.info({ reason }, "shutting down");
    const deadline = setTimeout(() => force(`shutdown took over ${options.timeoutMs} ms`), options.timeoutMs);
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
