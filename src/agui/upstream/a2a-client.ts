// The adapter's upstream: the A2A client library's JSON-RPC channel over
// loopback HTTP (SendStreamingMessage, SubscribeToTask, GetTask, CancelTask)
// and the iac-code pipeline state route, with the A2A-Version header, a bearer
// token and the call's traceparent. Items stay plain JSON: the adapter reads
// them tolerantly (agui-iaccode.md §3.4), not as typed messages. Transport
// failures and HTTP errors become A2aUnavailableError; JSON-RPC errors stay the
// library's A2aCallError. With a managed upstream (a supervised child) the URL
// is read per request, and nothing is sent while the child is not up. A request
// that cannot reach the server waits for it (a2a-wait.ts): sends only when they
// certainly never arrived, reads also when they may have.
import { randomUUID } from "node:crypto";
import type { JsonObject as WireJson } from "@bufbuild/protobuf";
import { failSpan, injectContext, SpanKind, startSpan, withSpan } from "../../server/tracing/index.js";
import { A2aCallError } from "../../a2a/client/errors.js";
import { TransportError, type CallOptions } from "../../a2a/client/bindings/binding.js";
import { bodyText, httpRequest } from "../../a2a/client/bindings/http.js";
import { HttpJsonRpcChannel } from "../../a2a/client/bindings/http-jsonrpc.js";
import { jsonRpcError } from "../../a2a/client/bindings/jsonrpc.js";
import type { AdapterLogger } from "../logger.js";
import { isObject, type JsonObject } from "./a2a-items.js";
import {
  A2aUnavailableError,
  DEFAULT_A2A_WAIT_SECONDS,
  DEFAULT_WAIT_DELAYS,
  reachOf,
  withA2aWait,
  type A2aWaitPolicy,
  type WaitTarget,
} from "./a2a-wait.js";
import { configError } from "../config.js";

export { A2aUnavailableError } from "./a2a-wait.js";

/**
 * A request's signals: `signal` aborts the request itself; `stop` only ends a
 * wait for an unreachable server (the run's client left, or it was cancelled).
 */
export interface RequestSignals {
  signal?: AbortSignal;
  stop?: AbortSignal;
}

/** An upstream that can move (a child respawned on another port) or be down. */
export interface A2aUpstream {
  /** The current base URL, with one trailing slash. */
  readonly url: string;
  /** Why no request may be sent now (the child is down or still starting), else undefined. */
  unavailable(): string | undefined;
}

export interface A2aClientOptions {
  /** Base URL, normalised to one trailing slash. */
  url: string;
  token?: string;
  /** A managed upstream: its URL wins over `url`, and while it is unavailable requests wait for it. */
  upstream?: A2aUpstream;
  /** How long a request waits for an unreachable server (default a2a-wait-seconds' default; maxMs 0: none). */
  wait?: Partial<A2aWaitPolicy>;
  /** Where the start and the end of a wait are logged. */
  logger?: AdapterLogger;
}

/** Only loopback http(s) URLs, with exactly one trailing slash. */
export function normalizeA2aUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw configError("aguiAdapter.cliLoopback");
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!["http:", "https:"].includes(url.protocol) || !["127.0.0.1", "localhost", "::1"].includes(host)) {
    throw configError("aguiAdapter.cliLoopback");
  }
  return url.toString().replace(/\/+$/, "") + "/";
}

/** A JSON-RPC request (its id stays the same on every try). */
function rpcBody(method: string, params: JsonObject): WireJson {
  // params are plain JSON built by the adapter (message parts, ids, metadata).
  return { jsonrpc: "2.0", id: randomUUID(), method, params: params as WireJson };
}

/**
 * What a failure of the library means here: a transport failure says by its
 * cause whether the request can have left; an HTTP error is an answer (never
 * retried); a JSON-RPC error and the caller's abort pass through.
 */
function upstreamError(err: unknown, what: string, signal?: AbortSignal): Error {
  if (signal?.aborted || err instanceof A2aUnavailableError) return err as Error;
  if (err instanceof A2aCallError) {
    const status = err.detail.httpStatus;
    return status === undefined ? err : new A2aUnavailableError(`A2A answered HTTP ${status}`);
  }
  if (err instanceof TransportError)
    return new A2aUnavailableError(`${what}: ${err.message}`, reachOf(err.cause));
  return new A2aUnavailableError(`${what}: ${(err as Error).message}`);
}

export class A2aClient {
  private readonly fixedUrl: string;
  private readonly token?: string;
  private readonly upstream?: A2aUpstream;
  private readonly wait: A2aWaitPolicy;
  private readonly logger?: AdapterLogger;

  constructor(options: A2aClientOptions) {
    this.fixedUrl = normalizeA2aUrl(options.url);
    this.token = options.token || undefined;
    this.upstream = options.upstream;
    this.wait = { maxMs: DEFAULT_A2A_WAIT_SECONDS * 1000, ...DEFAULT_WAIT_DELAYS, ...options.wait };
    this.logger = options.logger;
  }

  get url(): string {
    return this.upstream?.url ?? this.fixedUrl;
  }

  /**
   * The URL to send to now. A managed child that is down or starting is not
   * tried: its port may belong to another process meanwhile (the bearer token
   * would go there); the request has certainly not been sent.
   */
  private target(): string {
    const reason = this.upstream?.unavailable();
    if (reason) throw new A2aUnavailableError(`A2A unavailable: ${reason}`, "not-sent");
    return this.url;
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = { "A2A-Version": "1.0" };
    if (this.token) h.Authorization = `Bearer ${this.token}`;
    // W3C traceparent of the active span (the run's, or the call's client span).
    injectContext(h);
    return h;
  }

  /**
   * One call under its client span (its traceparent makes the A2A server's
   * spans its children), tried at the current URL until it has an answer or
   * the wait policy gives up. `safe`: a read, sent again even when a try may
   * have reached the server.
   */
  private async traced<T>(
    method: string,
    safe: boolean,
    signals: RequestSignals,
    attempt: (url: string, headers: Record<string, string>) => Promise<T>,
    policy: A2aWaitPolicy = this.wait,
  ): Promise<T> {
    const span = startSpan("iac-code.agui", `A2A ${method}`, {
      kind: SpanKind.CLIENT,
      attributes: { "rpc.system": "a2a", "rpc.method": method, "server.address": new URL(this.url).hostname },
    });
    const headers = withSpan(span, () => this.headers());
    const target: WaitTarget = { method, safe, ...signals, unavailable: () => this.upstream?.unavailable() };
    try {
      return await withA2aWait(() => attempt(this.target(), headers), target, policy, this.logger);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span?.end();
    }
  }

  private options(signals: RequestSignals): CallOptions {
    // No idle deadline: a stream may be quiet for long (keep-alives come every 15 s).
    return { timeoutMs: 0, signal: signals.signal };
  }

  /** A unary call: the JSON-RPC result, or A2aCallError. */
  async call(
    method: string,
    params: JsonObject,
    signals: RequestSignals = {},
    options: { safe?: boolean; wait?: A2aWaitPolicy } = {},
  ): Promise<unknown> {
    const body = rpcBody(method, params);
    const reply = await this.traced(
      method,
      options.safe ?? false,
      signals,
      (url, headers) =>
        new HttpJsonRpcChannel(url, headers).request(body, this.options(signals)).catch((err: unknown) => {
          throw upstreamError(err, "A2A request failed", signals.signal);
        }),
      options.wait,
    );
    const err = jsonRpcError(reply);
    if (err) throw err;
    return isObject(reply) ? reply.result : undefined;
  }

  /**
   * A streaming call: yields each JSON-RPC response of the SSE stream. An error
   * answered before the stream (plain JSON) is thrown; an error event inside
   * the stream is thrown when reached. Opening the stream (up to its first
   * record) waits for an unreachable server; it is never sent twice unless it
   * certainly did not arrive: an answer reaches A2A once (resume.ts).
   */
  async *stream(method: string, params: JsonObject, signals: RequestSignals = {}): AsyncGenerator<unknown> {
    for await (const batch of this.streamBatches(method, params, signals)) yield* batch;
  }

  /**
   * The same stream, a batch of responses per chunk read: a run behind its
   * stream handles what piled up in one go (one write to its client, not one
   * per event). A batch holding an error event yields what precedes it, then throws.
   */
  async *streamBatches(
    method: string,
    params: JsonObject,
    signals: RequestSignals = {},
  ): AsyncGenerator<unknown[]> {
    const { signal } = signals;
    const body = rpcBody(method, params);
    const [batches, first] = await this.traced(method, false, signals, async (url, headers) => {
      const stream = new HttpJsonRpcChannel(url, headers).streamBatches(body, this.options(signals));
      const it = stream[Symbol.asyncIterator]();
      try {
        return [it, await it.next()] as const;
      } catch (err) {
        throw upstreamError(err, "A2A request failed", signal);
      }
    });
    let next = first;
    try {
      for (; !next.done; next = await batches.next()) {
        const batch = next.value;
        for (let i = 0; i < batch.length; i++) {
          const err = jsonRpcError(batch[i]);
          if (!err) continue;
          if (i > 0) yield batch.slice(0, i);
          throw err;
        }
        yield batch;
      }
    } catch (err) {
      throw upstreamError(err, "A2A stream failed", signal);
    } finally {
      await batches.return?.(undefined);
    }
  }

  sendStreamingBatches(params: JsonObject, signals?: RequestSignals): AsyncGenerator<unknown[]> {
    return this.streamBatches("SendStreamingMessage", params, signals);
  }

  sendStreamingMessage(params: JsonObject, signals?: RequestSignals): AsyncGenerator<unknown> {
    return this.stream("SendStreamingMessage", params, signals);
  }

  getTask(taskId: string, signals?: RequestSignals): Promise<unknown> {
    return this.call("GetTask", { id: taskId, historyLength: 100 }, signals, { safe: true });
  }

  /**
   * Never waits: it runs under the adapter's lock and on failure paths (a
   * failure is logged there), and a cancel that waited would hold every other
   * admission.
   */
  cancelTask(taskId: string): Promise<unknown> {
    return this.call("CancelTask", { id: taskId }, {}, { wait: { ...this.wait, maxMs: 0 } });
  }

  /**
   * GET iac-code/pipeline/state: the pipeline snapshot of a task's context and
   * the events after a sequence; undefined when the task has no pipeline (404).
   */
  async pipelineState(
    taskId: string,
    afterSequence: number,
    signals: RequestSignals = {},
  ): Promise<{ snapshot: JsonObject; events: unknown[] } | undefined> {
    const route = "GET iac-code/pipeline/state";
    const options = this.options(signals);
    const { status, text } = await this.traced(route, true, signals, async (base, headers) => {
      const url = new URL("iac-code/pipeline/state", base);
      url.searchParams.set("taskId", taskId);
      url.searchParams.set("afterSequence", String(afterSequence));
      try {
        const exchange = await httpRequest(url.toString(), { method: "GET", headers }, options);
        return { status: exchange.response.status, text: await bodyText(url.toString(), exchange, options) };
      } catch (err) {
        throw upstreamError(err, "A2A request failed", signals.signal);
      }
    });
    if (status === 404) return undefined;
    let body: unknown;
    try {
      body = status >= 200 && status <= 299 ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (!isObject(body) || !isObject(body.snapshot) || !Array.isArray(body.events)) {
      throw new A2aUnavailableError(`A2A pipeline state answered HTTP ${status}`);
    }
    return { snapshot: body.snapshot, events: body.events };
  }

  /**
   * POST iac-code/session/ensure-restored (agui-iaccode.md §3.1): the A2A
   * server restores the session from its backup when its primary store lost
   * it. "available" (status current or restored), "unavailable" (404), or
   * "not_ready" (409 with error.code SESSION_BACKUP_NOT_READY and retryable,
   * `message` the server's text); anything else is A2aUnavailableError.
   */
  async ensureRestored(
    body: { cwd: string; sessionId: string; taskId: string },
    signals: RequestSignals = {},
  ): Promise<{ outcome: "available" | "unavailable" | "not_ready"; message?: string }> {
    const route = "POST iac-code/session/ensure-restored";
    const options = this.options(signals);
    const { status, text } = await this.traced(route, true, signals, async (base, headers) => {
      const url = new URL("iac-code/session/ensure-restored", base);
      const init = {
        method: "POST",
        headers: { ...headers, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      };
      try {
        const exchange = await httpRequest(url.toString(), init, options);
        return { status: exchange.response.status, text: await bodyText(url.toString(), exchange, options) };
      } catch (err) {
        throw upstreamError(err, "A2A request failed", signals.signal);
      }
    });
    if (status === 404) return { outcome: "unavailable" };
    let reply: unknown;
    try {
      reply = JSON.parse(text);
    } catch {
      reply = undefined;
    }
    if (status === 409 && isObject(reply) && isObject(reply.error)) {
      const { code, retryable, message } = reply.error;
      if (code === "SESSION_BACKUP_NOT_READY" && retryable === true)
        return { outcome: "not_ready", ...(typeof message === "string" ? { message } : {}) };
    }
    if (
      status >= 200 &&
      status <= 299 &&
      isObject(reply) &&
      ["current", "restored"].includes(String(reply.status))
    )
      return { outcome: "available" };
    throw new A2aUnavailableError(`A2A session restore answered HTTP ${status}`);
  }
}
