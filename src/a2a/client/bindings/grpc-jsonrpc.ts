// grpc-jsonrpc://host:port: JSON-RPC in the iac_code.a2a.transports.proto
// A2AJsonRpc envelopes (`iac-code a2a --transport grpc-jsonrpc`), through
// Connect's gRPC transport and the generated descriptor. Unary methods go
// through Send, streaming ones through Stream; auth travels as metadata.
import { create, type JsonObject } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import {
  A2AJsonRpc,
  JsonRpcEnvelopeSchema,
  type JsonRpcEnvelope,
} from "../../../../generated/proto/iac_code/a2a/transports/proto/a2a_jsonrpc_pb.js";
import { IdleDeadline, TransportError, type CallOptions } from "./binding.js";
import { grpcFailure, once } from "./grpc.js";
import type { JsonRpcChannel } from "./jsonrpc.js";
import { isEndOfStream } from "../../transports/frames.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function envelope(body: JsonObject): JsonRpcEnvelope {
  return create(JsonRpcEnvelopeSchema, { payload: encoder.encode(JSON.stringify(body)) });
}

export class GrpcJsonRpcChannel implements JsonRpcChannel {
  private readonly baseUrl: string;
  private readonly sessions: Http2SessionManager;
  private readonly transport: Transport;

  constructor(
    readonly url: string,
    private readonly headers: Record<string, string>,
  ) {
    this.baseUrl = url.replace(/^grpc-jsonrpc:/i, "http:").replace(/\/+$/, "");
    this.sessions = new Http2SessionManager(this.baseUrl);
    this.transport = createGrpcTransport({ baseUrl: this.baseUrl, sessionManager: this.sessions });
  }

  private payloadOf(message: JsonRpcEnvelope): unknown {
    const text = decoder.decode(message.payload);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new TransportError(`An envelope from ${this.url} is not JSON: ${text.slice(0, 200)}`);
    }
  }

  async request(body: JsonObject, options: CallOptions): Promise<unknown> {
    const deadline = new IdleDeadline(options.timeoutMs, options.signal);
    try {
      const response = await this.transport.unary(
        A2AJsonRpc.method.send,
        deadline.signal,
        undefined,
        this.headers,
        envelope(body),
      );
      return this.payloadOf(response.message);
    } catch (error) {
      if (error instanceof TransportError) throw error;
      throw grpcFailure(this.url, error, deadline, options);
    } finally {
      deadline.clear();
    }
  }

  async *stream(body: JsonObject, options: CallOptions): AsyncGenerator<unknown> {
    const deadline = new IdleDeadline(options.timeoutMs, options.signal);
    // Leaving the loop early must end the call, not just stop reading it.
    const stop = new AbortController();
    const signal = AbortSignal.any([deadline.signal, stop.signal]);
    try {
      const response = await this.transport.stream(
        A2AJsonRpc.method.stream,
        signal,
        undefined,
        this.headers,
        once(envelope(body)),
      );
      for await (const message of response.message) {
        deadline.touch();
        const payload = this.payloadOf(message);
        // The final envelope after a stream's events is {"jsonrpc":"2.0","id":…}: nothing to decode.
        if (!(message.final && isEndOfStream(payload))) yield payload;
        if (message.final) return;
      }
    } catch (error) {
      if (error instanceof TransportError) throw error;
      throw grpcFailure(this.url, error, deadline, options);
    } finally {
      deadline.clear();
      stop.abort();
    }
  }

  close(): Promise<void> {
    this.sessions.abort();
    return Promise.resolve();
  }
}
