// The A2A HTTP+JSON (REST) binding: the routes of the A2A 1.0 proto's
// google.api.http rules, each also under a leading /{tenant} segment. Bodies
// and query strings are ProtoJSON of the request message (path fields win);
// responses are ProtoJSON of the response message; streams are SSE whose every
// `data:` is a bare StreamResponse. Errors are google.rpc.Status JSON with the
// ErrorInfo. Decode, call the core, encode: nothing else happens here.
import type { DescMessage, JsonObject, JsonValue, MessageShape } from "@bufbuild/protobuf";
import { Router, type RouterContext } from "@koa/router";
import type { Logger } from "pino";
import { decodeProtoJson, encodeProtoJson, pb } from "../../contract/index.js";
import { encodeStreamResponse } from "../core/fast-json.js";
import type { Authenticator } from "../core/auth.js";
import { CONNECTION_CLOSED, type CallContext } from "../core/call-context.js";
import { A2AError } from "../core/errors.js";
import { checkDecodedRequest } from "../core/decoded-request.js";
import type { A2AService as A2ACore } from "../core/service.js";
import { checkVersion } from "../core/service-params.js";
import { requireAuth, type A2aState } from "../http-app.js";
import { readJsonBody } from "./http-body.js";
import { encodeListPushConfigs } from "./jsonrpc-core.js";
import { queryToProtoJson } from "./rest-query.js";
import { writeSse } from "./sse.js";
import { asA2AError, restErrorOf } from "./wire-errors.js";

/** Largest request body the REST binding reads by default. */
export const REST_MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface RestBindingOptions {
  core: A2ACore;
  auth: Authenticator;
  logger: Logger;
  /** Largest accepted request body (default 16 MiB). */
  maxBodyBytes?: number;
}

type Ctx = RouterContext<A2aState>;

/** What one route needs: its name (for logs) and how to answer. */
type Answer = (call: RestCall) => Promise<void>;

interface RestCall {
  koa: Ctx;
  ctx: CallContext;
  /** The request message from the body (or `{}`) with the path fields laid over it. */
  bodyRequest<D extends DescMessage>(schema: D, fromPath?: JsonObject): Promise<MessageShape<D>>;
  /** The request message from the query string with the path fields laid over it. */
  queryRequest<D extends DescMessage>(schema: D, fromPath?: JsonObject): MessageShape<D>;
  json(body: JsonValue, status?: number): void;
  stream(events: AsyncIterable<pb.StreamResponse>): Promise<void>;
}

const A2A_JSON = "application/a2a+json";

/** application/a2a+json only when the client names it; application/json otherwise (DECISIONS.md). */
function responseType(koa: Ctx): string {
  return (koa.get("Accept") || "").toLowerCase().includes(A2A_JSON) ? A2A_JSON : "application/json";
}

function tenantOf(koa: Ctx): JsonObject {
  const tenant = (koa.params as Record<string, string | undefined>).tenant;
  return tenant ? { tenant } : {};
}

function pathParam(koa: Ctx, name: string): string {
  return (koa.params as Record<string, string | undefined>)[name] ?? "";
}

/** ListTasksResponse always carries its four fields, even when empty (spec §2.1). */
function listTasksJson(response: pb.ListTasksResponse): JsonValue {
  const json = encodeProtoJson(pb.ListTasksResponseSchema, response) as JsonObject;
  return {
    tasks: json.tasks ?? [],
    nextPageToken: response.nextPageToken,
    pageSize: response.pageSize,
    totalSize: response.totalSize,
  };
}

export function createRestRouter(options: RestBindingOptions): Router<A2aState> {
  const { core, logger } = options;
  const maxBody = options.maxBodyBytes ?? REST_MAX_BODY_BYTES;
  const router = new Router<A2aState>();
  const auth = requireAuth(options.auth);

  const sendError = (koa: Ctx, error: A2AError): void => {
    const { status, body } = restErrorOf(error);
    koa.status = status;
    koa.type = responseType(koa);
    koa.body = JSON.stringify(body);
  };

  const handle =
    (where: string, answer: Answer) =>
    async (koa: Ctx): Promise<void> => {
      const abort = new AbortController();
      koa.res.once("close", () => abort.abort(CONNECTION_CLOSED));
      const call: RestCall = {
        koa,
        ctx: {
          owner: koa.state.caller.owner,
          authenticated: koa.state.caller.authenticated,
          requestedExtensions: koa.state.requestedExtensions,
          acceptLanguage: koa.get("Accept-Language") || undefined,
          binding: "rest",
          signal: abort.signal,
        },
        async bodyRequest(schema, fromPath = {}) {
          const body = await readJsonBody(koa.req, maxBody);
          if (body !== undefined && (body === null || typeof body !== "object" || Array.isArray(body))) {
            throw new A2AError("InvalidParamsError", "Invalid params: the body must be a JSON object");
          }
          const request = decodeProtoJson(
            schema,
            { ...(body as JsonObject | undefined), ...tenantOf(koa), ...fromPath },
            { strictEnums: true },
          );
          checkDecodedRequest(request);
          return request;
        },
        queryRequest(schema, fromPath = {}) {
          const request = decodeProtoJson(
            schema,
            { ...queryToProtoJson(schema, koa.query), ...tenantOf(koa), ...fromPath },
            { strictEnums: true },
          );
          checkDecodedRequest(request);
          return request;
        },
        json(body, status = 200) {
          koa.status = status;
          koa.type = responseType(koa);
          koa.body = JSON.stringify(body);
        },
        async stream(events) {
          // The first event is pulled before any header, so early failures are plain errors.
          const iterator = events[Symbol.asyncIterator]();
          const first = await iterator.next();
          if (first.done) throw new A2AError("InternalError", "The stream ended before any event");
          koa.respond = false;
          await writeSse(koa.res, first.value, iterator, {
            encode: (event) => JSON.stringify(encodeStreamResponse(event)),
            encodeError: (error) => JSON.stringify(restErrorOf(asA2AError(error, logger, where)).body),
          });
        },
      };
      try {
        // The header, or the A2A-Version query parameter the spec allows on HTTP (first one if repeated).
        const fromQuery = koa.query["A2A-Version"];
        checkVersion(koa.get("A2A-Version") || (Array.isArray(fromQuery) ? fromQuery[0] : fromQuery));
        await answer(call);
      } catch (error) {
        if (koa.respond === false) return; // the stream already reported it
        sendError(koa, asA2AError(error, logger, where));
      }
    };

  type Method = "get" | "post" | "delete";
  const routes: Array<{ methods: Method[]; path: string; handler: ReturnType<typeof handle> }> = [];
  const route = (methods: Method[], path: string, where: string, answer: Answer): void => {
    routes.push({ methods, path, handler: handle(where, answer) });
  };

  // Custom verbs first: GET /tasks/{id}:subscribe must not be read as GetTask.
  route(["post"], "/message\\:send", "SendMessage", async (call) => {
    const request = await call.bodyRequest(pb.SendMessageRequestSchema);
    call.json(encodeProtoJson(pb.SendMessageResponseSchema, await core.sendMessage(request, call.ctx)));
  });
  route(["post"], "/message\\:stream", "SendStreamingMessage", async (call) => {
    const request = await call.bodyRequest(pb.SendMessageRequestSchema);
    await call.stream(await core.sendStreamingMessage(request, call.ctx));
  });
  route(["post"], "/tasks/:id\\:cancel", "CancelTask", async (call) => {
    const request = await call.bodyRequest(pb.CancelTaskRequestSchema, { id: pathParam(call.koa, "id") });
    call.json(encodeProtoJson(pb.TaskSchema, await core.cancelTask(request, call.ctx)));
  });
  // The proto says GET, the spec text and the SDK client say POST: both are served.
  route(["get", "post"], "/tasks/:id\\:subscribe", "SubscribeToTask", async (call) => {
    const request = call.queryRequest(pb.SubscribeToTaskRequestSchema, { id: pathParam(call.koa, "id") });
    await call.stream(await core.subscribeToTask(request, call.ctx));
  });
  route(["get"], "/tasks", "ListTasks", async (call) => {
    const request = call.queryRequest(pb.ListTasksRequestSchema);
    call.json(listTasksJson(await core.listTasks(request, call.ctx)));
  });
  const pushPath = (call: RestCall): JsonObject => ({ taskId: pathParam(call.koa, "taskId") });
  const configPath = (call: RestCall): JsonObject => ({ ...pushPath(call), id: pathParam(call.koa, "id") });
  route(
    ["post"],
    "/tasks/:taskId/pushNotificationConfigs",
    "CreateTaskPushNotificationConfig",
    async (call) => {
      const request = await call.bodyRequest(pb.TaskPushNotificationConfigSchema, pushPath(call));
      const created = await core.createTaskPushNotificationConfig(request, call.ctx);
      call.json(encodeProtoJson(pb.TaskPushNotificationConfigSchema, created), 201);
    },
  );
  route(
    ["get"],
    "/tasks/:taskId/pushNotificationConfigs",
    "ListTaskPushNotificationConfigs",
    async (call) => {
      const request = call.queryRequest(pb.ListTaskPushNotificationConfigsRequestSchema, pushPath(call));
      call.json(encodeListPushConfigs(await core.listTaskPushNotificationConfigs(request, call.ctx)));
    },
  );
  route(
    ["get"],
    "/tasks/:taskId/pushNotificationConfigs/:id",
    "GetTaskPushNotificationConfig",
    async (call) => {
      const request = call.queryRequest(pb.GetTaskPushNotificationConfigRequestSchema, configPath(call));
      const config = await core.getTaskPushNotificationConfig(request, call.ctx);
      call.json(encodeProtoJson(pb.TaskPushNotificationConfigSchema, config));
    },
  );
  route(
    ["delete"],
    "/tasks/:taskId/pushNotificationConfigs/:id",
    "DeleteTaskPushNotificationConfig",
    async (call) => {
      const request = call.queryRequest(pb.DeleteTaskPushNotificationConfigRequestSchema, configPath(call));
      await core.deleteTaskPushNotificationConfig(request, call.ctx);
      call.json({});
    },
  );
  route(["get"], "/tasks/:id", "GetTask", async (call) => {
    const request = call.queryRequest(pb.GetTaskRequestSchema, { id: pathParam(call.koa, "id") });
    call.json(encodeProtoJson(pb.TaskSchema, await core.getTask(request, call.ctx)));
  });
  route(["get"], "/extendedAgentCard", "GetExtendedAgentCard", async (call) => {
    const request = call.queryRequest(pb.GetExtendedAgentCardRequestSchema);
    call.json(encodeProtoJson(pb.AgentCardSchema, await core.getExtendedAgentCard(request, call.ctx)));
  });

  // Every bare route before any /{tenant} twin, so /tasks/tasks is GetTask, not a tenant's ListTasks.
  for (const prefix of ["", "/:tenant"]) {
    for (const { methods, path, handler } of routes) {
      for (const method of methods) router[method](`${prefix}${path}`, auth, handler);
    }
  }
  return router;
}
