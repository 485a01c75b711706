// The HTTP channel of the JSON-RPC binding: POST to the endpoint as given,
// JSON replies for unary calls, SSE for streams (an `event: error` record, or a
// plain JSON reply before the stream started, carries the error).
import type { JsonObject } from "@bufbuild/protobuf";
import { TransportError, type CallOptions } from "./binding.js";
import { bodyText, httpError, httpRequest, isEventStream, parseJson, sseBody } from "./http.js";
import { jsonRpcError, type JsonRpcChannel } from "./jsonrpc.js";

export class HttpJsonRpcChannel implements JsonRpcChannel {
  constructor(
    readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  async request(body: JsonObject, options: CallOptions): Promise<unknown> {
    const exchange = await this.post(body, "application/json", options);
    const text = await bodyText(this.url, exchange, options);
    return this.reply(exchange.response, text);
  }

  async *stream(body: JsonObject, options: CallOptions): AsyncGenerator<unknown> {
    const exchange = await this.post(body, "text/event-stream", options);
    if (!isEventStream(exchange.response)) {
      // An error answered before the stream started comes as plain JSON.
      const reply = this.reply(exchange.response, await bodyText(this.url, exchange, options));
      throw jsonRpcError(reply) ?? new TransportError(`${this.url} did not answer with an event stream.`);
    }
    for await (const record of sseBody(this.url, exchange, options)) {
      yield parseJson(record.data, `An event from ${this.url}`);
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private post(body: JsonObject, accept: string, options: CallOptions) {
    return httpRequest(
      this.url,
      {
        method: "POST",
        headers: { ...this.headers, "Content-Type": "application/json", Accept: accept },
        body: JSON.stringify(body),
      },
      options,
    );
  }

  /** The JSON-RPC response object; an HTTP error without one becomes that HTTP error. */
  private reply(response: Response, text: string): unknown {
    let reply: unknown;
    try {
      reply = JSON.parse(text) as unknown;
    } catch {
      reply = undefined;
    }
    if (jsonRpcError(reply) || (response.ok && reply !== undefined)) return reply;
    if (!response.ok) throw httpError(response.status, text);
    throw new TransportError(`${this.url} answered HTTP ${response.status}: ${text.slice(0, 200)}`);
  }
}
