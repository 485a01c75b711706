// JSON-RPC 2.0 binding: decode the envelope and ProtoJSON params, call the
// core, encode the result or the A2AError (`data: [ErrorInfo]`). Streaming
// methods answer with SSE whose every `data:` is one JSON-RPC response.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { DescMessage, JsonValue, MessageShape } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import { pb, decodeProtoJson, ProtoJsonError } from "../../contract/index.js";
import { encodeFast as encodeProtoJson } from "../core/fast-json.js";
import { CONNECTION_CLOSED, type CallContext } from "../core/call-context.js";
import { A2AError } from "../core/errors.js";
import { assertFinite } from "../core/finite.js";
import type { A2AService } from "../core/service.js";
import { checkVersion } from "../core/service-params.js";
import { writeSse } from "./sse.js";
import { invalidParamsOf } from "./wire-errors.js";
import { readJsonBody, type JsonBody } from "../../server/json-body.js";

export const MAX_BODY_BYTES = 16 * 1024 * 1024;

type JsonRpcId = string | number | null;

interface Method<Req extends DescMessage> {
  request: Req;
  /** params may be omitted (GetExtendedAgentCard, ListTasks). */
  paramsOptional?: boolean;
  unary?: (service: A2AService, req: MessageShape<Req>, ctx: CallContext) => Promise<JsonValue>;
  stream?: (
    service: A2AService,
    req: MessageShape<Req>,
    ctx: CallContext,
  ) => Promise<AsyncIterable<pb.StreamResponse>>;
}

function method<Req extends DescMessage>(m: Method<Req>): Method<DescMessage> {
  return m;
}

/** ListTasksResponse fields the spec wants even when empty. */
function encodeListTasks(response: pb.ListTasksResponse): JsonValue {
  const json = encodeProtoJson(pb.ListTasksResponseSchema, response) as Record<string, JsonValue>;
  return {
    tasks: json.tasks ?? [],
    nextPageToken: response.nextPageToken,
    pageSize: response.pageSize,
    totalSize: response.totalSize,
  };
}

/** The configs list is there even when empty. */
export function encodeListPushConfigs(response: pb.ListTaskPushNotificationConfigsResponse): JsonValue {
  const json = encodeProtoJson(pb.ListTaskPushNotificationConfigsResponseSchema, response) as Record<
    string,
    JsonValue
  >;
  return { ...json, configs: json.configs ?? [] };
}

const METHODS: Record<string, Method<DescMessage>> = {
  SendMessage: method({
    request: pb.SendMessageRequestSchema,
    unary: async (s, req, ctx) =>
      encodeProtoJson(pb.SendMessageResponseSchema, await s.sendMessage(req, ctx)),
  }),
  SendStreamingMessage: method({
    request: pb.SendMessageRequestSchema,
    stream: (s, req, ctx) => s.sendStreamingMessage(req, ctx),
  }),
  GetTask: method({
    request: pb.GetTaskRequestSchema,
    unary: async (s, req, ctx) => encodeProtoJson(pb.TaskSchema, await s.getTask(req, ctx)),
  }),
  ListTasks: method({
    request: pb.ListTasksRequestSchema,
    paramsOptional: true,
    unary: async (s, req, ctx) => encodeListTasks(await s.listTasks(req, ctx)),
  }),
  CancelTask: method({
    request: pb.CancelTaskRequestSchema,
    unary: async (s, req, ctx) => encodeProtoJson(pb.TaskSchema, await s.cancelTask(req, ctx)),
  }),
  SubscribeToTask: method({
    request: pb.SubscribeToTaskRequestSchema,
    stream: (s, req, ctx) => s.subscribeToTask(req, ctx),
  }),
  GetExtendedAgentCard: method({
    request: pb.GetExtendedAgentCardRequestSchema,
    paramsOptional: true,
    unary: async (s, req, ctx) => encodeProtoJson(pb.AgentCardSchema, await s.getExtendedAgentCard(req, ctx)),
  }),
  CreateTaskPushNotificationConfig: method({
    request: pb.TaskPushNotificationConfigSchema,
    unary: async (s, req, ctx) =>
      encodeProtoJson(
        pb.TaskPushNotificationConfigSchema,
        await s.createTaskPushNotificationConfig(req, ctx),
      ),
  }),
  GetTaskPushNotificationConfig: method({
    request: pb.GetTaskPushNotificationConfigRequestSchema,
    unary: async (s, req, ctx) =>
      encodeProtoJson(pb.TaskPushNotificationConfigSchema, await s.getTaskPushNotificationConfig(req, ctx)),
  }),
  ListTaskPushNotificationConfigs: method({
    request: pb.ListTaskPushNotificationConfigsRequestSchema,
    unary: async (s, req, ctx) => encodeListPushConfigs(await s.listTaskPushNotificationConfigs(req, ctx)),
  }),
  DeleteTaskPushNotificationConfig: method({
    request: pb.DeleteTaskPushNotificationConfigRequestSchema,
    unary: async (s, req, ctx) => {
      await s.deleteTaskPushNotificationConfig(req, ctx);
      return {};
    },
  }),
};

export interface JsonRpcOptions {
  service: A2AService;
  logger: Logger;
}

/** Everything a request carries that the binding needs besides the body. */
export interface JsonRpcCall {
  req: IncomingMessage;
  res: ServerResponse;
  caller: { owner: string; authenticated: boolean };
  requestedExtensions: string[];
}

function errorBody(id: JsonRpcId, error: A2AError): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    // Every catalogue error a JSON-RPC request can raise has a JSON-RPC code; -32603 guards the rest.
    error: { code: error.spec.jsonrpcCode ?? -32603, message: error.message, data: [error.errorInfo()] },
  });
}

/** -32700 for what is not JSON (or empty), -32600 for JSON beyond the size, depth or value limits. */
function bodyError(read: JsonBody): A2AError {
  if (read.ok || read.failure === "invalid-json" || read.failure === "not-utf8")
    return new A2AError("JSONParseError", "Invalid JSON payload");
  return new A2AError("InvalidRequestError", read.message);
}

function sendJson(res: ServerResponse, body: string, status = 200): void {
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

export class JsonRpcBinding {
  constructor(private readonly options: JsonRpcOptions) {}

  /** Maps anything thrown to an A2AError; unexpected ones are logged and sanitised. */
  private toA2AError(error: unknown, method?: string): A2AError {
    if (error instanceof A2AError) return error;
    const errorId = randomUUID();
    this.options.logger.error({ err: error, errorId, method }, "unexpected error in A2A call");
    return new A2AError("InternalError", "Internal error", { errorId });
  }

  async handle(call: JsonRpcCall): Promise<void> {
    const { req, res } = call;
    const contentType = String(req.headers["content-type"] ?? "application/json").toLowerCase();
    if (!/^application\/(?:[a-z0-9.+-]*\+)?json\b/.test(contentType)) {
      req.resume();
      return sendJson(
        res,
        errorBody(
          null,
          new A2AError("ContentTypeNotSupportedError", "Content-Type must be application/json"),
        ),
      );
    }
    const read = await readJsonBody(req, { maxBytes: MAX_BODY_BYTES });
    if (!read.ok || read.value === undefined) return sendJson(res, errorBody(null, bodyError(read)));
    const envelope = read.value;
    if (Array.isArray(envelope)) {
      return sendJson(
        res,
        errorBody(null, new A2AError("InvalidRequestError", "Batch requests are not supported")),
      );
    }
    if (!envelope || typeof envelope !== "object") {
      return sendJson(
        res,
        errorBody(null, new A2AError("InvalidRequestError", "Invalid request: expected a JSON object")),
      );
    }
    const body = envelope as Record<string, unknown>;
    const rawId = body.id;
    const idOk =
      rawId === undefined || rawId === null || typeof rawId === "string" || Number.isInteger(rawId);
    const id: JsonRpcId = idOk ? ((rawId ?? null) as JsonRpcId) : null;
    if (!idOk)
      return sendJson(
        res,
        errorBody(
          null,
          new A2AError("InvalidRequestError", "Invalid request: 'id' must be a string, an integer or null"),
        ),
      );
    if (body.jsonrpc !== "2.0") {
      return sendJson(
        res,
        errorBody(
          id,
          new A2AError("InvalidRequestError", "Invalid request: 'jsonrpc' must be exactly '2.0'"),
        ),
      );
    }
    if (typeof body.method !== "string" || body.method === "") {
      return sendJson(res, errorBody(id, new A2AError("InvalidRequestError", "Method is required")));
    }
    const name = body.method;
    const spec = Object.hasOwn(METHODS, name) ? METHODS[name] : undefined;
    if (!spec)
      return sendJson(
        res,
        errorBody(id, new A2AError("MethodNotFoundError", "Method not found", { method: name })),
      );

    let request: MessageShape<DescMessage>;
    try {
      checkVersion(req.headers["a2a-version"] as string | undefined);
      const params = body.params ?? (spec.paramsOptional ? {} : undefined);
      if (params === undefined || params === null || typeof params !== "object" || Array.isArray(params)) {
        throw new A2AError("InvalidParamsError", "Invalid params: 'params' must be an object");
      }
      request = decodeProtoJson(spec.request, params, { strictEnums: true });
      assertFinite(request);
    } catch (error) {
      const a2a = error instanceof ProtoJsonError ? invalidParamsOf(error) : this.toA2AError(error, name);
      return sendJson(res, errorBody(id, a2a));
    }

    const abort = new AbortController();
    // The client went away before the answer was written in full (after it, nobody is left to tell).
    res.on("close", () => {
      if (!res.writableFinished) abort.abort(CONNECTION_CLOSED);
    });
    const ctx: CallContext = {
      owner: call.caller.owner,
      authenticated: call.caller.authenticated,
      requestedExtensions: call.requestedExtensions,
      acceptLanguage: req.headers["accept-language"],
      binding: "jsonrpc",
      signal: abort.signal,
    };
    const service = this.options.service;
    if (spec.unary) {
      try {
        const result = await spec.unary(service, request, ctx);
        return sendJson(res, JSON.stringify({ jsonrpc: "2.0", id, result }));
      } catch (error) {
        return sendJson(res, errorBody(id, this.toA2AError(error, name)));
      }
    }
    // Streaming: errors up to and including the first event are plain JSON-RPC errors.
    let iterator: AsyncIterator<pb.StreamResponse>;
    let first: IteratorResult<pb.StreamResponse>;
    try {
      iterator = (await spec.stream!(service, request, ctx))[Symbol.asyncIterator]();
      first = await iterator.next();
    } catch (error) {
      return sendJson(res, errorBody(id, this.toA2AError(error, name)));
    }
    if (first.done)
      return sendJson(res, errorBody(id, new A2AError("InternalError", "The stream ended before any event")));
    const encode = (event: pb.StreamResponse) =>
      JSON.stringify({ jsonrpc: "2.0", id, result: encodeProtoJson(pb.StreamResponseSchema, event) });
    await writeSse(res, first.value, iterator, {
      encode,
      encodeError: (error) => errorBody(id, this.toA2AError(error, name)),
    });
  }
}
