// One HTTP exchange for the JSON-RPC and HTTP+JSON bindings: fetch under an
// idle deadline, failures turned into TransportError with the URL and reason.
import { A2aCallError, EXIT } from "../errors.js";
import { IdleDeadline, TransportError, networkReason, timeoutError, type CallOptions } from "./binding.js";
import { readSse, type SseEvent } from "../../../server/sse.js";

export interface HttpExchange {
  response: Response;
  deadline: IdleDeadline;
}

export async function httpRequest(
  url: string,
  init: RequestInit,
  options: CallOptions,
): Promise<HttpExchange> {
  const deadline = new IdleDeadline(options.timeoutMs, options.signal);
  try {
    const response = await fetch(url, { ...init, signal: deadline.signal });
    deadline.touch();
    return { response, deadline };
  } catch (error) {
    deadline.clear();
    throw failure(url, error, deadline, options);
  }
}

/** Reads the whole body as text under the deadline. */
export async function bodyText(url: string, exchange: HttpExchange, options: CallOptions): Promise<string> {
  try {
    return await exchange.response.text();
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
  if (!response.body) return;
  try {
    yield* readSse(response.body, () => deadline.touch());
  } catch (error) {
    throw failure(url, error, deadline, options);
  } finally {
    deadline.clear();
    // Leaving early (the caller stopped reading) must close the connection.
    await response.body.cancel().catch(() => undefined);
  }
}

function failure(url: string, error: unknown, deadline: IdleDeadline, options: CallOptions): Error {
  if (deadline.timedOut) return timeoutError(url, options.timeoutMs);
  if (options.signal?.aborted) return error as Error;
  // The cause tells a caller whether the request can have left (refused, or reset after sending).
  return new TransportError(`Cannot reach ${url}: ${networkReason(error)}`, EXIT.error, { cause: error });
}

export function isEventStream(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").toLowerCase().includes("text/event-stream");
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
