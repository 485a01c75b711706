// Structured logs (pino) with secrets redacted. Logs go to stderr by default so
// that stdout stays free; --log-to-stdout mirrors them to stdout.
import { pino, type Logger } from "pino";
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

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.silent ? "silent" : options.debug ? "debug" : "info";
  const destination =
    options.destination ??
    (options.logToStdout ? pino.destination(1) : pino.destination({ fd: 2, sync: false }));
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
