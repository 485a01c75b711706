// One HTTP exchange for the JSON-RPC and HTTP+JSON bindings: node:http on
// keep-alive connections under an idle deadline (fetch's web streams cost a
// streamed event about 10 µs), failures turned into TransportError with the URL
// and reason, the network error kept as its cause.
import http from "node:http";
import https from "node:https";
import { A2aCallError, EXIT } from "../errors.js";
import { IdleDeadline, TransportError, networkReason, timeoutError, type CallOptions } from "./binding.js";
import { readSse, type SseEvent } from "../../../server/sse.js";

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
}

export interface HttpInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** One request; resolves with the answer's head, the body still to read. */
function send(url: URL, init: HttpInit, signal: AbortSignal): Promise<HttpAnswer> {
  const lib = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(url, { method: init.method, headers: init.headers, signal }, (res) => {
      const status = res.statusCode ?? 0;
      resolve({
        status,
        ok: status >= 200 && status <= 299,
        contentType: res.headers["content-type"] ?? "",
        body: res,
      });
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

export async function httpRequest(url: string, init: HttpInit, options: CallOptions): Promise<HttpExchange> {
  const deadline = new IdleDeadline(options.timeoutMs, options.signal);
  try {
    const response = await send(new URL(url), init, deadline.signal);
    deadline.touch();
    return { response, deadline };
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

/** The SSE records of the body; the deadline restarts with every chunk (keep-alives included). */
export async function* sseBody(
  url: string,
  exchange: HttpExchange,
  options: CallOptions,
): AsyncGenerator<SseEvent> {
  const { response, deadline } = exchange;
  try {
    yield* readSse(response.body as AsyncIterable<Uint8Array>, () => deadline.touch());
  } catch (error) {
    throw failure(url, error, deadline, options);
  } finally {
    deadline.clear();
    // Leaving early (the caller stopped reading) must close the connection.
    response.body.destroy();
  }
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
