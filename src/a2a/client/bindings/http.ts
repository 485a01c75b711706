// One HTTP exchange for the JSON-RPC and HTTP+JSON bindings: node:http on
// keep-alive connections under an idle deadline (fetch's web streams cost a
// streamed event about 10 µs), failures turned into TransportError with the URL
// and reason, the network error kept as its cause. A stream the caller leaves
// at its last event keeps its connection: the rest of the body (its end) is
// read for a moment instead of the socket being destroyed, and an abort after
// the answer ended touches nothing (a new connection per call costs both ends
// a connect, an accept and an AbortError).
import http from "node:http";
import https from "node:https";
import { A2aCallError, EXIT } from "../errors.js";
import { IdleDeadline, TransportError, networkReason, timeoutError, type CallOptions } from "./binding.js";
import { readSseBatches, type SseEvent } from "../../../server/sse.js";

/** An answer's status line, content type and body. */
export interface HttpAnswer {
  status: number;
  ok: boolean;
  contentType: string;
  body: http.IncomingMessage;
}

export interface HttpExchange {
  response: HttpAnswer;
  deadline: IdleDeadline;
  /** Stops the caller's signal from cutting this exchange (the caller left its stream). */
  detach: () => void;
}

const ignore = (): void => undefined;

/** How long a stream left before its end may take to end before its connection is closed. */
const RELEASE_GRACE_MS = 250;

export interface HttpInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * One request; resolves with the answer's head, the body still to read. The
 * signal aborts the request (node's own abort handling, through a signal of the
 * request's) until the answer has ended or detach() is called.
 */
function send(
  url: URL,
  init: HttpInit,
  signal: AbortSignal,
): Promise<{ answer: HttpAnswer; detach: () => void }> {
  const lib = url.protocol === "https:" ? https : http;
  const own = new AbortController();
  const onAbort = () => own.abort(signal.reason);
  const detach = () => signal.removeEventListener("abort", onAbort);
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return new Promise((resolve, reject) => {
    const req = lib.request(url, { method: init.method, headers: init.headers, signal: own.signal }, (res) => {
      const status = res.statusCode ?? 0;
      res.once("end", detach);
      const answer = { status, ok: status >= 200 && status <= 299, contentType: res.headers["content-type"] ?? "", body: res };
      resolve({ answer, detach });
    }); // prettier-ignore
    req.on("error", (error) => {
      detach();
      reject(error);
    });
    // An abort while the answer is complete but not read to its end makes node destroy the
    // socket with the abort error and no listener (an uncaught exception); req has the error.
    req.once("socket", (socket) => {
      socket.on("error", ignore);
      req.once("close", () => socket.off("error", ignore));
    });
    req.end(init.body);
  });
}

export async function httpRequest(url: string, init: HttpInit, options: CallOptions): Promise<HttpExchange> {
  const deadline = new IdleDeadline(options.timeoutMs, options.signal);
  try {
    const { answer, detach } = await send(new URL(url), init, deadline.signal);
    deadline.touch();
    return { response: answer, deadline, detach };
  } catch (error) {
    deadline.clear();
    throw failure(url, error, deadline, options);
  }
}

/** Reads the whole body as text under the deadline. */
export async function bodyText(url: string, exchange: HttpExchange, options: CallOptions): Promise<string> {
  const { body } = exchange.response;
  try {
    body.setEncoding("utf8");
    let text = "";
    for await (const chunk of body) text += chunk as string;
    return text;
  } catch (error) {
    throw failure(url, error, exchange.deadline, options);
  } finally {
    exchange.deadline.clear();
  }
}

/**
 * The SSE records of the body, a batch per chunk read (what arrived together);
 * the deadline restarts with every chunk (keep-alives included).
 */
export async function* sseBatches(
  url: string,
  exchange: HttpExchange,
  options: CallOptions,
): AsyncGenerator<SseEvent[]> {
  const { response, deadline } = exchange;
  try {
    yield* readSseBatches(response.body.iterator({ destroyOnReturn: false }), () => deadline.touch());
  } catch (error) {
    response.body.destroy();
    throw failure(url, error, deadline, options);
  } finally {
    deadline.clear();
    // Left early (the caller stopped reading): the connection is closed unless the body ends at once.
    if (!response.body.readableEnded) {
      exchange.detach();
      release(response.body);
    }
  }
}

/** Reads what is left of a body for RELEASE_GRACE_MS: ended, its connection is reused; else closed. */
function release(body: http.IncomingMessage): void {
  if (body.destroyed) return;
  const timer = setTimeout(() => body.destroy(), RELEASE_GRACE_MS);
  timer.unref();
  body.once("end", () => clearTimeout(timer));
  body.once("error", () => clearTimeout(timer));
  body.resume();
}

function failure(url: string, error: unknown, deadline: IdleDeadline, options: CallOptions): Error {
  if (deadline.timedOut) return timeoutError(url, options.timeoutMs);
  // The caller's own abort surfaces as its reason (an AbortError), as fetch did.
  if (options.signal?.aborted)
    return options.signal.reason instanceof Error ? options.signal.reason : (error as Error);
  // The cause tells a caller whether the request can have left (refused, or reset after sending).
  return new TransportError(`Cannot reach ${url}: ${networkReason(error)}`, EXIT.error, { cause: error });
}

export function isEventStream(response: HttpAnswer): boolean {
  return response.contentType.toLowerCase().includes("text/event-stream");
}

export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new TransportError(`${what} is not JSON: ${text.slice(0, 200)}`);
  }
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The ErrorInfo reason among typed error details (a list, or one object). */
export function reasonOf(details: unknown): string | undefined {
  for (const detail of Array.isArray(details) ? (details as unknown[]) : [details]) {
    if (isObject(detail) && typeof detail.reason === "string") return detail.reason;
  }
  return undefined;
}

/**
 * The error an HTTP error reply carries: a google.rpc.Status body
 * ({"error":{code,status,message,details}}, the HTTP+JSON binding), a bare
 * {"error":"text"} (e.g. a 401 before any binding), or the body text.
 */
export function httpError(status: number, text: string): A2aCallError {
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    body = undefined;
  }
  const error = isObject(body) ? body.error : undefined;
  if (isObject(error)) {
    const message = typeof error.message === "string" ? error.message : `HTTP ${status}`;
    return new A2aCallError(message, { httpStatus: status, reason: reasonOf(error.details) });
  }
  const message = typeof error === "string" ? error : text.trim().slice(0, 200) || `HTTP ${status}`;
  return new A2aCallError(message, { httpStatus: status });
}
