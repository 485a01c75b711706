// The adapter's upstream: an A2A 1.0 JSON-RPC client over loopback HTTP
// (SendStreamingMessage, GetTask, CancelTask), with the A2A-Version header and
// a bearer token. Transport failures become A2aUnavailableError; JSON-RPC
// errors become A2aRpcError. With a managed upstream (a supervised child) the
// URL is read per request, and nothing is sent while the child is not up.
// A request that cannot reach the server waits for it (a2a-wait.ts): sends only
// when they certainly never arrived, reads also when they may have.
import { randomUUID } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { failSpan, injectContext, SpanKind, startSpan, withSpan } from "../../server/tracing/index.js";
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

/** An answer of node:http: fetch's web streams cost the adapter about 10 µs per streamed event. */
type Answer = http.IncomingMessage;

const isEventStream = (res: Answer): boolean =>
  (res.headers["content-type"] ?? "").includes("text/event-stream");

/** Reads a whole answer body as JSON (a parse failure throws). */
async function readJson(res: Answer): Promise<unknown> {
  res.setEncoding("utf8");
  let text = "";
  for await (const chunk of res) text += chunk as string;
  return JSON.parse(text) as unknown;
}

/**
 * Parses an SSE body into the JSON of each data: record. The data of a record
 * is its `data:` lines joined by LF; CR, LF and CRLF all end a line.
 */
async function* sseRecords(res: Answer): AsyncGenerator<unknown> {
  res.setEncoding("utf8");
  let buffer = "";
  try {
    for await (const chunk of res) {
      buffer = buffer ? buffer + (chunk as string) : (chunk as string);
      if (buffer.includes("\r")) buffer = buffer.replace(/\r\n?/g, "\n");
      let start = 0;
      let cut: number;
      while ((cut = buffer.indexOf("\n\n", start)) >= 0) {
        const record = buffer.slice(start, cut);
        start = cut + 2;
        // The common record is one `data: <json>` line.
        const data =
          record.startsWith("data: ") && !record.includes("\n")
            ? record.slice(6)
            : record
                .split("\n")
                .filter((l) => l.startsWith("data:"))
                .map((l) => l.slice(l.startsWith("data: ") ? 6 : 5))
                .join("\n");
        if (data) yield JSON.parse(data) as unknown;
      }
      buffer = start ? buffer.slice(start) : buffer;
    }
  } finally {
    res.destroy();
  }
}

export class A2aClient {
  private readonly fixedUrl: string;
  private readonly token?: string;
  private readonly upstream?: A2aUpstream;
  private readonly wait: A2aWaitPolicy;
  private readonly logger?: AdapterLogger;
  private readonly httpAgent = new http.Agent({ keepAlive: true });
  private readonly httpsAgent = new https.Agent({ keepAlive: true });

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
  ): Promise<Answer> {
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
        (url) => this.send(url, "POST", headers, body, signal),
        policy,
      );
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) {
        res.destroy();
        throw new A2aUnavailableError(`A2A answered HTTP ${status}`);
      }
      span?.setAttribute("http.response.status_code", status);
      return res;
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span?.end();
    }
  }

  /** One request; a failure before any response says whether the request can have left. */
  private send(
    url: string | URL,
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Answer> {
    const target = typeof url === "string" ? new URL(url) : url;
    const lib = target.protocol === "https:" ? https : http;
    return new Promise<Answer>((resolve, reject) => {
      const req = lib.request(target, { method, headers, signal, agent: this.agentFor(target) }, resolve);
      req.on("error", (err) => {
        if (signal?.aborted) reject(err);
        else reject(new A2aUnavailableError(`A2A request failed: ${err.message}`, reachOf(err)));
      });
      req.end(body);
    });
  }

  private agentFor(url: URL): http.Agent {
    return url.protocol === "https:" ? this.httpsAgent : this.httpAgent;
  }

  /** Closes the idle keep-alive connections to the server. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
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
      body = await readJson(res);
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
    if (!isEventStream(res)) {
      const body: unknown = await readJson(res).catch(() => undefined);
      const err = rpcErrorOf(body);
      if (err) throw err;
      throw new A2aUnavailableError("A2A did not answer with an event stream");
    }
    try {
      for await (const record of sseRecords(res)) {
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
      return this.send(url, "GET", this.headers(), undefined, signal);
    });
    const status = res.statusCode ?? 0;
    if (status === 404) {
      res.destroy();
      return undefined;
    }
    const ok = status >= 200 && status <= 299;
    const body: unknown = ok ? await readJson(res).catch(() => undefined) : (res.destroy(), undefined);
    if (!isObject(body) || !isObject(body.snapshot) || !Array.isArray(body.events)) {
      throw new A2aUnavailableError(`A2A pipeline state answered HTTP ${status}`);
    }
    return { snapshot: body.snapshot, events: body.events };
  }
}
