// Timeouts both servers share: how long a client may take to send its headers
// and its whole request, how long an idle keep-alive connection stays open,
// and how long a graceful shutdown may take before the process exits anyway.
// Defaults are a reverse proxy's (nginx: 60 s headers, 75 s keep-alive; Node:
// 300 s for a whole request). A request timeout ends once the request is
// received, so SSE responses (with their heartbeat) are never cut by it.
import type http from "node:http";
import type { Http2SecureServer } from "node:http2";

export interface ServerTimeouts {
  /** Receiving the request line and headers; 0 = no limit. */
  headersMs: number;
  /** Receiving the whole request, body included; 0 = no limit. */
  requestMs: number;
  /** An idle keep-alive connection between requests; 0 = no limit. */
  keepAliveMs: number;
  /** A graceful stop that takes longer ends the process anyway. */
  shutdownMs: number;
}

/** The settings: their config key (also the CLI flag), env var suffix and help text (in both settings tables). */
export const TIMEOUT_SETTINGS = [
  {
    field: "headersMs",
    key: "headers-timeout-seconds",
    env: "HEADERS_TIMEOUT_SECONDS",
    help: "seconds to receive a request's headers (default 60; 0 = none)",
  },
  {
    field: "requestMs",
    key: "request-timeout-seconds",
    env: "REQUEST_TIMEOUT_SECONDS",
    help: "seconds to receive a whole request (default 300; 0 = none)",
  },
  {
    field: "keepAliveMs",
    key: "keep-alive-timeout-seconds",
    env: "KEEP_ALIVE_TIMEOUT_SECONDS",
    help: "seconds an idle keep-alive connection stays open (default 75; 0 = none)",
  },
  {
    field: "shutdownMs",
    key: "shutdown-timeout-seconds",
    env: "SHUTDOWN_TIMEOUT_SECONDS",
    help: "longest a stop takes, from the signal to the exit (default 10)",
  },
] as const;

export type TimeoutKey = (typeof TIMEOUT_SETTINGS)[number]["key"];

export const DEFAULT_TIMEOUTS: ServerTimeouts = {
  headersMs: 60_000,
  requestMs: 300_000,
  keepAliveMs: 75_000,
  shutdownMs: 10_000,
};

/**
 * Resolves the four timeouts; `pick(key, envSuffix)` returns the merged raw
 * value (command line, file or environment) or undefined.
 * Throws an Error with a one-line reason for a value that is not a number of
 * seconds >= 0, or a headers timeout longer than the request timeout.
 */
export function resolveTimeouts(pick: (key: TimeoutKey, envSuffix: string) => unknown): ServerTimeouts {
  const out = { ...DEFAULT_TIMEOUTS };
  for (const setting of TIMEOUT_SETTINGS) {
    const raw = pick(setting.key, setting.env);
    if (raw === undefined || raw === "") continue;
    const seconds = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw.trim()) : NaN;
    if (!Number.isFinite(seconds) || seconds < 0 || (typeof raw === "string" && raw.trim() === "")) {
      throw new Error(
        `Invalid ${setting.key} '${typeof raw === "string" ? raw : JSON.stringify(raw)}': expected a number of seconds, 0 or more.`,
      );
    }
    out[setting.field] = Math.round(seconds * 1000);
  }
  if (out.requestMs > 0 && out.headersMs > out.requestMs) {
    throw new Error("headers-timeout-seconds must be at most request-timeout-seconds.");
  }
  if (out.shutdownMs === 0) throw new Error("shutdown-timeout-seconds must be more than 0.");
  return out;
}

/** How often Node checks for expired headers/requests: often enough for the shortest limit. */
export function checkingIntervalMs(t: ServerTimeouts): number {
  const limits = [t.headersMs, t.requestMs].filter((ms) => ms > 0);
  if (limits.length === 0) return 30_000;
  return Math.min(30_000, Math.max(50, Math.floor(Math.min(...limits) / 4)));
}

/** Applies the HTTP/1.1 timeouts to a server (plain http, or the TLS server serving HTTP/1.1 too). */
export function applyHttp1Timeouts(server: http.Server | Http2SecureServer, t: ServerTimeouts): void {
  // Under allowHTTP1 the TLS server serves HTTP/1.1 with http.Server's own
  // connection handling and reads these same fields (its types omit them).
  const h1 = server as http.Server;
  h1.headersTimeout = t.headersMs;
  h1.requestTimeout = t.requestMs;
  h1.keepAliveTimeout = t.keepAliveMs;
}
