// The HTTP channel of the JSON-RPC binding: POST to the endpoint as given,
// JSON replies for unary calls, SSE for streams (an `event: error` record, or a
// plain JSON reply before the stream started, carries the error). The endpoint
// and the headers may be asked for per request: a managed server can come back
// on another port, and each request can carry its own traceparent or token.
import type { JsonObject } from "@bufbuild/protobuf";
import { TransportError, type CallOptions } from "./binding.js";
import {
  bodyText,
  httpError,
  httpRequest,
  isEventStream,
  parseJson,
  sseBatches,
  type HttpAnswer,
} from "./http.js";
import { jsonRpcError, type JsonRpcChannel } from "./jsonrpc.js";

/** A value fixed once, or asked for at each request. */
export type PerRequest<T> = T | (() => T);

const current = <T>(value: PerRequest<T>): T => (typeof value === "function" ? (value as () => T)() : value);

export class HttpJsonRpcChannel implements JsonRpcChannel {
  constructor(
    private readonly target: PerRequest<string>,
    private readonly headers: PerRequest<Record<string, string>>,
  ) {}

  get url(): string {
    return current(this.target);
  }

  async request(body: JsonObject, options: CallOptions): Promise<unknown> {
    const url = this.url;
    const exchange = await this.post(url, body, "application/json", options);
    const text = await bodyText(url, exchange, options);
    return this.reply(url, exchange.response, text);
  }

  async *stream(body: JsonObject, options: CallOptions): AsyncGenerator<unknown> {
    for await (const batch of this.streamBatches(body, options)) yield* batch;
  }

  /** The stream's response objects, a batch per chunk read (a reader behind handles them in one go). */
  async *streamBatches(body: JsonObject, options: CallOptions): AsyncGenerator<unknown[]> {
    const url = this.url;
    const exchange = await this.post(url, body, "text/event-stream", options);
    if (!isEventStream(exchange.response)) {
      // An error answered before the stream started comes as plain JSON.
      const reply = this.reply(url, exchange.response, await bodyText(url, exchange, options));
      throw jsonRpcError(reply) ?? new TransportError(`${url} did not answer with an event stream.`);
    }
    for await (const batch of sseBatches(url, exchange, options)) {
      yield batch.map((record) => parseJson(record.data, `An event from ${url}`));
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private post(url: string, body: JsonObject, accept: string, options: CallOptions) {
    return httpRequest(
      url,
      {
        method: "POST",
        headers: { ...current(this.headers), "Content-Type": "application/json", Accept: accept },
        body: JSON.stringify(body),
      },
      options,
    );
  }

  /** The JSON-RPC response object; an HTTP error without one becomes that HTTP error. */
  private reply(url: string, response: HttpAnswer, text: string): unknown {
    let reply: unknown;
    try {
      reply = JSON.parse(text) as unknown;
    } catch {
      reply = undefined;
    }
    if (jsonRpcError(reply) || (response.ok && reply !== undefined)) return reply;
    if (!response.ok) throw httpError(response.status, text);
    throw new TransportError(`${url} answered HTTP ${response.status}: ${text.slice(0, 200)}`);
  }
}
