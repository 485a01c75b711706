// The JSON-RPC 2.0 binding: A2A 1.0 method names, ProtoJSON params and
// results, a fresh UUID id per call. It runs over any JsonRpcChannel: HTTP with
// SSE streams here; other transports (unix socket, WebSocket, gRPC JSON-RPC
// envelope, Redis Streams, stdio) only need to move the same objects.
import { randomUUID } from "node:crypto";
import type {
  DescMessage,
  DescMethodServerStreaming,
  DescMethodUnary,
  JsonObject,
  MessageShape,
} from "@bufbuild/protobuf";
import { decodeProtoJson, encodeProtoJson, ProtoJsonError } from "../../../contract/index.js";
import { A2aCallError } from "../errors.js";
import { TransportError, type A2aBinding, type CallOptions } from "./binding.js";
import { isObject, reasonOf } from "./http.js";

/** Moves JSON-RPC request objects to a server and its response objects back. */
export interface JsonRpcChannel {
  readonly url: string;
  /** One request, its one response object. */
  request(body: JsonObject, options: CallOptions): Promise<unknown>;
  /** One request, its stream of response objects. */
  stream(body: JsonObject, options: CallOptions): AsyncIterable<unknown>;
  close(): Promise<void>;
}

export class JsonRpcBinding implements A2aBinding {
  readonly name = "jsonrpc";

  constructor(private readonly channel: JsonRpcChannel) {}

  get url(): string {
    return this.channel.url;
  }

  async unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    input: MessageShape<I>,
    options: CallOptions,
  ): Promise<MessageShape<O>> {
    const reply = await this.channel.request(requestBody(method.name, method.input, input), options);
    return decodeResult(method.name, method.output, reply);
  }

  async *stream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodServerStreaming<I, O>,
    input: MessageShape<I>,
    options: CallOptions,
  ): AsyncGenerator<MessageShape<O>> {
    for await (const reply of this.channel.stream(requestBody(method.name, method.input, input), options)) {
      yield decodeResult(method.name, method.output, reply);
    }
  }

  close(): Promise<void> {
    return this.channel.close();
  }
}

function requestBody<I extends DescMessage>(name: string, schema: I, input: MessageShape<I>): JsonObject {
  return { jsonrpc: "2.0", id: randomUUID(), method: name, params: encodeProtoJson(schema, input) };
}

/** A JSON-RPC error response as an A2aCallError, or undefined when `reply` is not one. */
export function jsonRpcError(reply: unknown): A2aCallError | undefined {
  if (!isObject(reply) || !isObject(reply.error)) return undefined;
  const { code, message, data } = reply.error;
  return new A2aCallError(typeof message === "string" ? message : "error", {
    code: typeof code === "number" ? code : undefined,
    reason: reasonOf(data),
    ...(data !== undefined ? { data } : {}),
  });
}

function decodeResult<O extends DescMessage>(name: string, schema: O, reply: unknown): MessageShape<O> {
  const error = jsonRpcError(reply);
  if (error) throw error;
  if (!isObject(reply) || !("result" in reply)) {
    throw new TransportError(
      `The ${name} reply is not a JSON-RPC response: ${JSON.stringify(reply).slice(0, 200)}`,
    );
  }
  try {
    // google.protobuf.Empty results come back as null.
    return decodeProtoJson(schema, reply.result ?? {});
  } catch (error) {
    if (error instanceof ProtoJsonError) {
      throw new TransportError(`The ${name} result is not a valid ${schema.name}: ${error.message}`);
    }
    throw error;
  }
}
