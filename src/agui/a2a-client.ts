// The adapter's upstream: an A2A 1.0 JSON-RPC client over loopback HTTP
// (SendStreamingMessage, GetTask, CancelTask), with the A2A-Version header and
// a bearer token. Transport failures become A2aUnavailableError; JSON-RPC
// errors become A2aRpcError. With a managed upstream (a supervised child) the
// URL is read per request, and nothing is sent while the child is not up.
// A request that cannot reach the server waits for it (a2a-wait.ts): sends only
// when they certainly never arrived, reads also when they may have.
import { randomUUID } from "node:crypto";
import { failSpan, injectContext, SpanKind, startSpan, withSpan } from "../server/tracing/index.js";
import type { AdapterLogger } from "./adapter-core.js";
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
import { configError } from "./config.js";

export { A2aUnavailableError } from "./a2a-wait.js";

export class A2aRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "A2aRpcError";
  }
}

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

function rpcErrorOf(obj: unknown): A2aRpcError | undefined {
  if (!isObject(obj) || !isObject(obj.error)) return undefined;
  const e = obj.error;
  return new A2aRpcError(
    typeof e.code === "number" ? e.code : 0,
    typeof e.message === "string" ? e.message : "error",
    e.data,
  );
}

/** Parses an SSE body into the JSON of each data: record. */
async function* sseRecords(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  let buffer = "";
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const record = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = record
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).replace(/^ /, ""))
          .join("\n");
        if (data) yield JSON.parse(data) as unknown;
      }
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
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
    const h: Record<string, string> = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "A2A-Version": "1.0",
    };
    if (this.token) h.Authorization = `Bearer ${this.token}`;
    // W3C traceparent of the active span (the run's, or the call's client span).
    injectContext(h);
    return h;
  }

  /** Runs one try of a request at the current URL, waiting for the server as the policy says. */
  private withWait<T>(
    method: string,
    safe: boolean,
    signals: RequestSignals,
    attempt: (url: string) => Promise<T>,
    policy: A2aWaitPolicy = this.wait,
  ): Promise<T> {
    const target: WaitTarget = { method, safe, ...signals, unavailable: () => this.upstream?.unavailable() };
    return withA2aWait(() => attempt(this.target()), target, policy, this.logger);
  }

  /**
   * POST of one JSON-RPC request (the same id on every try), until a response.
   * `safe`: a read, sent again even when a try may have reached the server.
   */
  private async post(
    method: string,
    params: JsonObject,
    signals: RequestSignals,
    safe: boolean,
    policy?: A2aWaitPolicy,
  ): Promise<Response> {
    const { signal } = signals;
    // The client span of the call; its traceparent makes the A2A server's spans its children.
    const span = startSpan("iac-code.agui", `A2A ${method}`, {
      kind: SpanKind.CLIENT,
      attributes: { "rpc.system": "a2a", "rpc.method": method, "server.address": new URL(this.url).hostname },
    });
    const headers = withSpan(span, () => this.headers());
    const body = JSON.stringify({ jsonrpc: "2.0", id: randomUUID(), method, params });
    try {
      const res = await this.withWait(
        method,
        safe,
        signals,
        (url) => this.send(url, { method: "POST", headers, body, signal }),
        policy,
      );
      if (!res.ok) {
        await res.body?.cancel().catch(() => undefined);
        throw new A2aUnavailableError(`A2A answered HTTP ${res.status}`);
      }
      span?.setAttribute("http.response.status_code", res.status);
      return res;
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span?.end();
    }
  }

  /** One fetch; a failure before any response says whether the request can have left. */
  private async send(url: string | URL, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, init);
    } catch (err) {
      if (init.signal?.aborted) throw err;
      throw new A2aUnavailableError(`A2A request failed: ${(err as Error).message}`, reachOf(err));
    }
  }

  /** A unary call: the JSON-RPC result, or A2aRpcError. */
  async call(
    method: string,
    params: JsonObject,
    signals: RequestSignals = {},
    options: { safe?: boolean; wait?: A2aWaitPolicy } = {},
  ): Promise<unknown> {
    const res = await this.post(method, params, signals, options.safe ?? false, options.wait);
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      throw new A2aUnavailableError("A2A answered with invalid JSON");
    }
    const err = rpcErrorOf(body);
    if (err) throw err;
    return isObject(body) ? body.result : undefined;
  }

  /**
   * A streaming call: yields each JSON-RPC response of the SSE stream. An error
   * answered before the stream (plain JSON) is thrown; an error event inside
   * the stream is thrown when reached.
   */
  async *stream(method: string, params: JsonObject, signals: RequestSignals = {}): AsyncGenerator<unknown> {
    const { signal } = signals;
    // Never sent twice unless it certainly did not arrive: an answer reaches A2A once (resume.ts).
    const res = await this.post(method, params, signals, false);
    const type = res.headers.get("content-type") ?? "";
    if (!type.includes("text/event-stream")) {
      const body: unknown = await res.json().catch(() => undefined);
      const err = rpcErrorOf(body);
      if (err) throw err;
      throw new A2aUnavailableError("A2A did not answer with an event stream");
    }
    if (!res.body) return;
    try {
      for await (const record of sseRecords(res.body)) {
        const err = rpcErrorOf(record);
        if (err) throw err;
        yield record;
      }
    } catch (err) {
      if (err instanceof A2aRpcError || signal?.aborted) throw err;
      throw new A2aUnavailableError(`A2A stream failed: ${(err as Error).message}`);
    }
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
    const { signal } = signals;
    const res = await this.withWait("GET iac-code/pipeline/state", true, signals, (base) => {
      const url = new URL("iac-code/pipeline/state", base);
      url.searchParams.set("taskId", taskId);
      url.searchParams.set("afterSequence", String(afterSequence));
      return this.send(url, { headers: this.headers(), signal });
    });
    if (res.status === 404) {
      await res.body?.cancel().catch(() => undefined);
      return undefined;
    }
    const body: unknown = res.ok ? await res.json().catch(() => undefined) : undefined;
    if (!isObject(body) || !isObject(body.snapshot) || !Array.isArray(body.events)) {
      throw new A2aUnavailableError(`A2A pipeline state answered HTTP ${res.status}`);
    }
    return { snapshot: body.snapshot, events: body.events };
  }
}
