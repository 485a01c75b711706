// The transport-independent part of JSON-RPC 2.0: check the envelope, decode
// the ProtoJSON params, call the core, encode the result or the A2AError
// (`data: [ErrorInfo]`). The HTTP binding (jsonrpc.ts) and every custom
// transport (src/a2a/transports/) hand it a parsed request and frame what it
// returns: one response, or a stream whose first event was already pulled.
import type { Message } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import { type pb, decodeProtoJson } from "../../contract/index.js";
import { streamResponseText } from "../core/turn/text-chunks.js";
import type { CallContext } from "../core/request/call-context.js";
import { A2AError } from "../core/request/errors.js";
import { checkDecodedRequest } from "../core/request/decoded-request.js";
import { a2aMethod, callStream, callUnary } from "../core/methods.js";
import type { A2AService } from "../core/service.js";
import { encodeResult, PARAMS_OPTIONAL } from "./method-json.js";
import { checkVersion } from "../core/request/service-params.js";
import { asA2AError } from "./wire-errors.js";
import type { JsonBody } from "../../server/json-body.js";

export type JsonRpcId = string | number | null;

/** Who calls, as the transport established it, and the request's abort signal. */
export interface JsonRpcCaller extends CallContext {
  /** The A2A-Version the request named (HTTP header); the custom transports imply 1.0. */
  version: string | undefined;
}

export type JsonRpcOutcome =
  /** A unary result, or any error raised before a stream's first event (`failure`). */
  | { kind: "response"; id: JsonRpcId; body: string; streaming: boolean; failure?: A2AError }
  /** A notification (a request without `id`): it ran, and nothing is sent back, not even an error. */
  | { kind: "none" }
  | {
      kind: "stream";
      id: JsonRpcId;
      first: pb.StreamResponse;
      rest: AsyncIterator<pb.StreamResponse>;
      /** One event as a JSON-RPC response. */
      encode(event: pb.StreamResponse): string;
      /** A failure after the first event as a JSON-RPC error response. */
      encodeError(error: unknown): string;
    };

export interface DispatchOptions {
  /** Refuse the streaming methods (the gRPC envelope's unary Send). */
  unaryOnly?: boolean;
}

export function errorBody(id: JsonRpcId, error: A2AError): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    // Every catalogue error a JSON-RPC request can raise has a JSON-RPC code; -32603 guards the rest.
    error: { code: error.spec.jsonrpcCode ?? -32603, message: error.message, data: [error.errorInfo()] },
  });
}

/**
 * JSON-RPC 2.0 §4.1: a valid request object without an `id` member (`"id": null`
 * is a request). One that is not a valid request is answered as such, id null.
 */
function isNotification(envelope: unknown): boolean {
  if (!envelope || typeof envelope !== "object" || Array.isArray(envelope)) return false;
  const body = envelope as Record<string, unknown>;
  return (
    !Object.hasOwn(body, "id") &&
    body.jsonrpc === "2.0" &&
    typeof body.method === "string" &&
    body.method !== ""
  );
}

/** -32700 for what is not JSON (or empty), -32600 for JSON beyond the size, depth or value limits. */
export function unreadableBody(read: JsonBody): string {
  const error =
    read.ok || read.failure === "invalid-json" || read.failure === "not-utf8"
      ? new A2AError("JSONParseError", "Invalid JSON payload")
      : new A2AError("InvalidRequestError", read.message);
  return errorBody(null, error);
}

export class JsonRpcCore {
  constructor(
    private readonly service: A2AService,
    private readonly logger: Logger,
  ) {}

  /**
   * Answers one parsed JSON-RPC request; never throws for what the client sent.
   * A notification runs as far as a request would before its answer (a unary
   * method to its end, a stream to its first event, after which the stream is
   * left: the turn goes on, as when a client leaves), and its outcome is none.
   */
  async dispatch(
    envelope: unknown,
    caller: JsonRpcCaller,
    options: DispatchOptions = {},
  ): Promise<JsonRpcOutcome> {
    const outcome = await this.answer(envelope, caller, options);
    if (!isNotification(envelope)) return outcome;
    const method = (envelope as { method: string }).method;
    if (outcome.kind === "stream") await outcome.rest.return?.();
    else if (outcome.kind === "response" && outcome.failure)
      this.logger.debug(
        { method, reason: outcome.failure.spec.reason },
        "JSON-RPC notification failed (no reply)",
      );
    return { kind: "none" };
  }

  private async answer(
    envelope: unknown,
    caller: JsonRpcCaller,
    options: DispatchOptions,
  ): Promise<JsonRpcOutcome> {
    const fail = (id: JsonRpcId, error: A2AError, streaming = false): JsonRpcOutcome => ({
      kind: "response",
      id,
      body: errorBody(id, error),
      streaming,
      failure: error,
    });
    const invalid = (id: JsonRpcId, message: string) =>
      fail(id, new A2AError("InvalidRequestError", message));
    if (Array.isArray(envelope)) return invalid(null, "Batch requests are not supported");
    if (!envelope || typeof envelope !== "object")
      return invalid(null, "Invalid request: expected a JSON object");
    const body = envelope as Record<string, unknown>;
    const rawId = body.id;
    if (!(rawId === undefined || rawId === null || typeof rawId === "string" || Number.isInteger(rawId)))
      return invalid(null, "Invalid request: 'id' must be a string, an integer or null");
    const id = (rawId ?? null) as JsonRpcId;
    if (body.jsonrpc !== "2.0") return invalid(id, "Invalid request: 'jsonrpc' must be exactly '2.0'");
    if (typeof body.method !== "string" || body.method === "") return invalid(id, "Method is required");
    const name = body.method;
    const spec = a2aMethod(name);
    if (!spec) return fail(id, new A2AError("MethodNotFoundError", "Method not found", { method: name }));
    const streaming = spec.streaming;
    if (streaming && options.unaryOnly)
      return invalid(id, `Invalid request: ${name} is a streaming method; call Stream`);

    let request: Message;
    try {
      checkVersion(caller.version);
      const params = body.params ?? (PARAMS_OPTIONAL.has(spec.name) ? {} : undefined);
      if (params === undefined || params === null || typeof params !== "object" || Array.isArray(params)) {
        throw new A2AError("InvalidParamsError", "Invalid params: 'params' must be an object");
      }
      request = decodeProtoJson(spec.input, params, { strictEnums: true });
      checkDecodedRequest(request);
    } catch (error) {
      return fail(id, asA2AError(error, this.logger, name), streaming);
    }

    const ctx: CallContext = caller;
    if (!streaming) {
      try {
        const result = encodeResult(spec, await callUnary(this.service, spec, request, ctx));
        return { kind: "response", id, body: JSON.stringify({ jsonrpc: "2.0", id, result }), streaming };
      } catch (error) {
        return fail(id, asA2AError(error, this.logger, name));
      }
    }
    // Streaming: errors up to and including the first event are plain JSON-RPC errors.
    let rest: AsyncIterator<pb.StreamResponse>;
    let first: IteratorResult<pb.StreamResponse>;
    try {
      rest = (await callStream(this.service, spec, request, ctx))[Symbol.asyncIterator]();
      first = await rest.next();
    } catch (error) {
      return fail(id, asA2AError(error, this.logger, name), streaming);
    }
    if (first.done)
      return fail(id, new A2AError("InternalError", "The stream ended before any event"), streaming);
    return {
      kind: "stream",
      id,
      first: first.value,
      rest,
      // The envelope around the event's JSON text: JSON.stringify({ jsonrpc, id, result }) without the object.
      encode: (event) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${streamResponseText(event)}}`,
      encodeError: (error) => errorBody(id, asA2AError(error, this.logger, name)),
    };
  }
}
