// The adapter's upstream: an A2A 1.0 JSON-RPC client over loopback HTTP
// (SendStreamingMessage, GetTask, CancelTask), with the A2A-Version header and
// a bearer token. Transport failures become A2aUnavailableError; JSON-RPC
// errors become A2aRpcError. With a managed upstream (a supervised child) the
// URL is read per request, and nothing is sent while the child is not up.
import { randomUUID } from "node:crypto";
import { failSpan, injectContext, SpanKind, startSpan, withSpan } from "../server/tracing/index.js";
import { isObject, type JsonObject } from "./a2a-items.js";
import { configError } from "./config.js";

export class A2aUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "A2aUnavailableError";
  }
}

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
  /** A managed upstream: its URL wins over `url`, and while it is unavailable requests fail fast. */
  upstream?: A2aUpstream;
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

  constructor(options: A2aClientOptions) {
    this.fixedUrl = normalizeA2aUrl(options.url);
    this.token = options.token || undefined;
    this.upstream = options.upstream;
  }

  get url(): string {
    return this.upstream?.url ?? this.fixedUrl;
  }

  /**
   * The URL to send to now. A managed child that is down or starting is not
   * tried: its port may belong to another process meanwhile (the bearer token
   * would go there), and the answer would be the same A2aUnavailableError.
   */
  private target(): string {
    const reason = this.upstream?.unavailable();
    if (reason) throw new A2aUnavailableError(`A2A unavailable: ${reason}`);
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

  private async post(method: string, params: JsonObject, signal?: AbortSignal): Promise<Response> {
    const url = this.target();
    // The client span of the call; its traceparent makes the A2A server's spans its children.
    const span = startSpan("iac-code.agui", `A2A ${method}`, {
      kind: SpanKind.CLIENT,
      attributes: { "rpc.system": "a2a", "rpc.method": method, "server.address": new URL(url).hostname },
    });
    const headers = withSpan(span, () => this.headers());
    try {
      const res = await this.send(url, method, params, headers, signal);
      span?.setAttribute("http.response.status_code", res.status);
      return res;
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span?.end();
    }
  }

  private async send(
    url: string,
    method: string,
    params: JsonObject,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: randomUUID(), method, params }),
        signal,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new A2aUnavailableError(`A2A request failed: ${(err as Error).message}`);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new A2aUnavailableError(`A2A answered HTTP ${res.status}`);
    }
    return res;
  }

  /** A unary call: the JSON-RPC result, or A2aRpcError. */
  async call(method: string, params: JsonObject, signal?: AbortSignal): Promise<unknown> {
    const res = await this.post(method, params, signal);
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
  async *stream(method: string, params: JsonObject, signal?: AbortSignal): AsyncGenerator<unknown> {
    const res = await this.post(method, params, signal);
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

  sendStreamingMessage(params: JsonObject, signal?: AbortSignal): AsyncGenerator<unknown> {
    return this.stream("SendStreamingMessage", params, signal);
  }

  getTask(taskId: string, signal?: AbortSignal): Promise<unknown> {
    return this.call("GetTask", { id: taskId, historyLength: 100 }, signal);
  }

  cancelTask(taskId: string): Promise<unknown> {
    return this.call("CancelTask", { id: taskId });
  }

  /**
   * GET iac-code/pipeline/state: the pipeline snapshot of a task's context and
   * the events after a sequence; undefined when the task has no pipeline (404).
   */
  async pipelineState(
    taskId: string,
    afterSequence: number,
    signal?: AbortSignal,
  ): Promise<{ snapshot: JsonObject; events: unknown[] } | undefined> {
    const url = new URL("iac-code/pipeline/state", this.target());
    url.searchParams.set("taskId", taskId);
    url.searchParams.set("afterSequence", String(afterSequence));
    let res: Response;
    try {
      res = await fetch(url, { headers: this.headers(), signal });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new A2aUnavailableError(`A2A request failed: ${(err as Error).message}`);
    }
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
