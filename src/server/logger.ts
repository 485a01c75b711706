// Structured logs (pino) with secrets redacted. Logs go to stderr by default so
// that stdout stays free; --log-to-stdout mirrors them to stdout. They are
// JSON lines, or one readable line each on a terminal (--log-format pretty|json
// chooses; the default follows whether the destination is a TTY). A log
// destination that goes away (a closed pipe, a dead parent's socket, a FIFO
// whose reader was killed) never blocks, crashes or keeps alive the server, not
// even while it stops: see fd-log-writer.ts.
import { pino, type DestinationStream, type Logger } from "pino";
import { stdioLogWriter } from "./fd-log-writer.js";

export type { Logger } from "pino";

/** Keys whose values pino must never write. */
const LOG_REDACT_PATHS = [
  ...["token", "apiKey", "api_key", "basicPassword", "basic_password", "password"],
  ...["signingSecret", "signing_secret", "authorization"],
  ...["headers.authorization", "req.headers.authorization", "req.headers.cookie"],
  ...["token", "apiKey", "password", "basicPassword", "authorization"].map((key) => `*.${key}`),
  ...["llmHeaders", "llm_headers", "extraHeaders"].flatMap((key) => [key, `*.${key}`]),
  ...["token", "apiKey", "basicPassword", "signingSecret"].map((key) => `config.${key}`),
];

export type LogFormat = "pretty" | "json";

export interface LoggerOptions {
  debug?: boolean;
  logToStdout?: boolean;
  /** Default: pretty on a terminal, JSON otherwise. */
  format?: LogFormat;
  /** Silence everything (tests). */
  silent?: boolean;
  /** Custom destination (tests capture logs). */
  destination?: NodeJS.WritableStream;
}

/** A destination pino can flush (its logger.flush(cb) calls this). */
type FlushableDestination = DestinationStream & { flush(cb?: () => void): void };

/** A pino destination on fd 1 or 2 that never blocks, not even at exit, and goes quiet after a write error (EPIPE). */
export function safeLogDestination(fd: 1 | 2): FlushableDestination {
  // Makes a pipe or socket on fd 1/2 non-blocking (see guardStdio) before the first write.
  guardStdio();
  return stdioLogWriter(fd);
}

/**
 * Makes direct writes to stdout/stderr (banners, CLI messages) safe when the
 * other end is gone: the stream's error is swallowed instead of crashing the
 * process. Opening process.stdout/stderr also makes a pipe or socket there
 * non-blocking (libuv does), which the log writer relies on: a write to a
 * stopped reader then fails with EAGAIN instead of holding a thread that the
 * process's exit waits for.
 */
let stdioGuarded = false;
export function guardStdio(): void {
  if (stdioGuarded) return;
  stdioGuarded = true;
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
}

/** The format used when none is chosen: pretty on a terminal. */
export function defaultLogFormat(fd: 1 | 2): LogFormat {
  return (fd === 1 ? process.stdout : process.stderr).isTTY ? "pretty" : "json";
}

const LEVEL_NAMES: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO ",
  40: "WARN ",
  50: "ERROR",
  60: "FATAL",
};
/** pino's own keys, not repeated as key=value. */
const PINO_KEYS = new Set(["level", "time", "pid", "hostname", "name", "msg", "v"]);

function prettyValue(value: unknown): string {
  if (typeof value === "string") return /[\s"=]/.test(value) || value === "" ? JSON.stringify(value) : value;
  // A serialised error ({type, message, stack}): its message is what a person reads.
  if (value instanceof Object && "message" in value && "type" in value) return JSON.stringify(value.message);
  return JSON.stringify(value);
}

/** One JSON log line as "12:03:04.567 INFO  message key=value ...". */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith("\n") ? json : `${json}\n`;
  }
  const time = new Date(typeof entry.time === "number" ? entry.time : Date.now()).toISOString().slice(11, 23);
  const level = LEVEL_NAMES[entry.level as number] ?? String(entry.level);
  const fields = Object.entries(entry)
    .filter(([key]) => !PINO_KEYS.has(key))
    .map(([key, value]) => `${key}=${prettyValue(value)}`);
  const msg = typeof entry.msg === "string" ? entry.msg : "";
  return `${[time, level, msg, ...fields].join(" ")}\n`;
}

/** Writes each JSON line to `inner` in the pretty form (and flushes it when asked). */
function prettyDestination(inner: {
  write(line: string): unknown;
  flush?(cb?: () => void): void;
}): FlushableDestination {
  return {
    write(chunk: string) {
      for (const line of chunk.split("\n")) if (line) inner.write(prettyLine(line));
    },
    flush(cb?: () => void) {
      if (inner.flush) inner.flush(cb);
      else cb?.();
    },
  };
}

/** The destination for a format: the given stream or fd 1/2, pretty-printed when asked. */
export function logDestination(options: {
  fd: 1 | 2;
  format?: LogFormat;
  destination?: NodeJS.WritableStream;
}): DestinationStream {
  const inner = options.destination ?? safeLogDestination(options.fd);
  const format = options.format ?? (options.destination ? "json" : defaultLogFormat(options.fd));
  return format === "pretty" ? prettyDestination(inner) : inner;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.silent ? "silent" : options.debug ? "debug" : "info";
  // Silent: no destination on fd 1/2 at all (nothing to flush, nothing held at exit).
  const destination = options.silent
    ? { write: () => undefined }
    : logDestination({
        fd: options.logToStdout ? 1 : 2,
        format: options.format,
        destination: options.destination,
      });
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
