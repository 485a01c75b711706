// Structured logs (pino) with secrets redacted. Logs go to stderr by default so
// that stdout stays free; --log-to-stdout mirrors them to stdout. A log
// destination that goes away (a closed pipe, a dead parent's socket) never
// blocks or crashes the server: writes are asynchronous and bounded in memory,
// and a write error silences the destination for good.
import { pino, type DestinationStream, type Logger } from "pino";
import { LOG_REDACT_PATHS } from "../a2a/core/sanitize.js";

export type { Logger } from "pino";

export interface LoggerOptions {
  debug?: boolean;
  logToStdout?: boolean;
  /** Silence everything (tests). */
  silent?: boolean;
  /** Custom destination (tests capture logs). */
  destination?: NodeJS.WritableStream;
}

/** Log bytes kept in memory while the destination is slow; beyond that lines are dropped. */
const MAX_BUFFERED_LOG_BYTES = 16 * 1024 * 1024;

/** A pino destination on fd 1 or 2 that never blocks and goes quiet after a write error (EPIPE). */
export function safeLogDestination(fd: 1 | 2): DestinationStream & { flush(cb?: () => void): void } {
  const sonic = pino.destination({ fd, sync: false, maxLength: MAX_BUFFERED_LOG_BYTES });
  let broken = false;
  sonic.on("error", () => {
    broken = true;
  });
  return {
    write(line: string) {
      if (!broken) sonic.write(line);
    },
    flush(cb?: () => void) {
      if (broken) cb?.();
      else sonic.flush(() => cb?.());
    },
  };
}

/**
 * Makes direct writes to stdout/stderr (banners, CLI messages) safe when the
 * other end is gone: the stream's error is swallowed instead of crashing the process.
 */
let stdioGuarded = false;
export function guardStdio(): void {
  if (stdioGuarded) return;
  stdioGuarded = true;
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.silent ? "silent" : options.debug ? "debug" : "info";
  const destination = options.destination ?? safeLogDestination(options.logToStdout ? 1 : 2);
  return pino(
    {
      name: "iac-code",
      level,
      redact: { paths: LOG_REDACT_PATHS, censor: "[REDACTED]" },
      base: { pid: process.pid },
    },
    destination,
  );
}
