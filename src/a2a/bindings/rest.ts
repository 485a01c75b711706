// The A2A HTTP+JSON (REST) binding: the routes of the A2A 1.0 proto's
// google.api.http rules, each also under a leading /{tenant} segment. Bodies
// and query strings are ProtoJSON of the request message (path fields win);
// responses are ProtoJSON of the response message; streams are SSE whose every
// `data:` is a bare StreamResponse. Errors are google.rpc.Status JSON with the
// ErrorInfo. Decode, call the core, encode: nothing else happens here.
import type { DescMessage, JsonObject, JsonValue, MessageShape } from "@bufbuild/protobuf";
import { Router, type RouterContext } from "@koa/router";
import type { Logger } from "pino";
import { decodeProtoJson, type pb } from "../../contract/index.js";
import { streamResponseText } from "../core/turn/text-chunks.js";
import type { Authenticator } from "../core/request/auth.js";
import { CONNECTION_CLOSED, type CallContext } from "../core/request/call-context.js";
import { A2AError } from "../core/request/errors.js";
import { checkDecodedRequest } from "../core/request/decoded-request.js";
import { A2A_METHODS, a2aMethodNamed, callStream, callUnary, type A2AMethodName } from "../core/methods.js";
import type { A2AService as A2ACore } from "../core/service.js";
import { checkVersion } from "../core/request/service-params.js";
import { requireAuth, type A2aState } from "../http-app.js";
import { readJsonBody } from "./http-body.js";
import { encodeResult } from "./method-json.js";
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

function sendJson(koa: Ctx, body: unknown, status = 200): void {
  koa.status = status;
  koa.type = responseType(koa);
  koa.body = JSON.stringify(body);
}

function tenantOf(koa: Ctx): JsonObject {
  const tenant = (koa.params as Record<string, string | undefined>).tenant;
  return tenant ? { tenant } : {};
}

function pathParam(koa: Ctx, name: string): string {
  return (koa.params as Record<string, string | undefined>)[name] ?? "";
}

/** A request message from its ProtoJSON, checked as every binding checks it. */
function decode<D extends DescMessage>(schema: D, json: JsonObject): MessageShape<D> {
  const request = decodeProtoJson(schema, json, { strictEnums: true });
  checkDecodedRequest(request);
  return request;
}

type Verb = "get" | "post" | "delete";

/** Where a method's route is and where its request message comes from. */
interface RestRoute {
  verbs: Verb[];
  path: string;
  /** The JSON body (or `{}`), or the query string. */
  from: "body" | "query";
  /** Request fields read from path parameters: [field, parameter]. */
  pathFields?: Array<[string, string]>;
  /** The success status (200 unless named). */
  status?: number;
}

const ID: Array<[string, string]> = [["id", "id"]];
const TASK_ID: Array<[string, string]> = [["taskId", "taskId"]];
const CONFIG_ID: Array<[string, string]> = [...TASK_ID, ["id", "id"]];

/** The proto's google.api.http rules, one per method of the table (the type makes it total). */
const ROUTES: Record<A2AMethodName, RestRoute> = {
  SendMessage: { verbs: ["post"], path: "/message\\:send", from: "body" },
  SendStreamingMessage: { verbs: ["post"], path: "/message\\:stream", from: "body" },
  CancelTask: { verbs: ["post"], path: "/tasks/:id\\:cancel", from: "body", pathFields: ID },
  // The proto says GET, the spec text and the SDK client say POST: both are served.
  SubscribeToTask: { verbs: ["get", "post"], path: "/tasks/:id\\:subscribe", from: "query", pathFields: ID },
  ListTasks: { verbs: ["get"], path: "/tasks", from: "query" },
  CreateTaskPushNotificationConfig: {
    verbs: ["post"],
    path: "/tasks/:taskId/pushNotificationConfigs",
    from: "body",
    pathFields: TASK_ID,
    status: 201,
  },
  ListTaskPushNotificationConfigs: {
    verbs: ["get"],
    path: "/tasks/:taskId/pushNotificationConfigs",
    from: "query",
    pathFields: TASK_ID,
  },
  GetTaskPushNotificationConfig: {
    verbs: ["get"],
    path: "/tasks/:taskId/pushNotificationConfigs/:id",
    from: "query",
    pathFields: CONFIG_ID,
  },
  DeleteTaskPushNotificationConfig: {
    verbs: ["delete"],
    path: "/tasks/:taskId/pushNotificationConfigs/:id",
    from: "query",
    pathFields: CONFIG_ID,
  },
  GetTask: { verbs: ["get"], path: "/tasks/:id", from: "query", pathFields: ID },
  GetExtendedAgentCard: { verbs: ["get"], path: "/extendedAgentCard", from: "query" },
};

/**
 * Registration order: custom verbs first (GET /tasks/{id}:subscribe must not be
 * read as GetTask), the catch-all /tasks/:id last.
 */
const ROUTE_ORDER: A2AMethodName[] = [
  "SendMessage",
  "SendStreamingMessage",
  "CancelTask",
  "SubscribeToTask",
  "ListTasks",
  "CreateTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "GetTaskPushNotificationConfig",
  "DeleteTaskPushNotificationConfig",
  "GetTask",
  "GetExtendedAgentCard",
];
for (const method of A2A_METHODS)
  if (!ROUTE_ORDER.includes(method.name)) throw new Error(`REST: no route order for ${method.name}`);

export function createRestRouter(options: RestBindingOptions): Router<A2aState> {
  const { core, logger } = options;
  const maxBody = options.maxBodyBytes ?? REST_MAX_BODY_BYTES;
  const router = new Router<A2aState>();
  const auth = requireAuth(options.auth);

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
          return decode(schema, { ...(body as JsonObject | undefined), ...tenantOf(koa), ...fromPath });
        },
        queryRequest(schema, fromPath = {}) {
          return decode(schema, { ...queryToProtoJson(schema, koa.query), ...tenantOf(koa), ...fromPath });
        },
        json: (body, status) => sendJson(koa, body, status),
        async stream(events) {
          // The first event is pulled before any header, so early failures are plain errors.
          const iterator = events[Symbol.asyncIterator]();
          const first = await iterator.next();
          if (first.done) throw new A2AError("InternalError", "The stream ended before any event");
          koa.respond = false;
          await writeSse(koa.res, first.value, iterator, {
            encode: streamResponseText,
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
        const { status, body } = restErrorOf(asA2AError(error, logger, where));
        sendJson(koa, body, status);
      }
    };

  // One route per method of the table, in the order ROUTE_ORDER gives.
  const routes = ROUTE_ORDER.map((name) => {
    const method = a2aMethodNamed(name);
    const spec = ROUTES[name];
    return {
      verbs: spec.verbs,
      path: spec.path,
      handler: handle(name, async (call) => {
        const fromPath = Object.fromEntries(
          (spec.pathFields ?? []).map(([field, param]) => [field, pathParam(call.koa, param)]),
        );
        const request =
          spec.from === "body"
            ? await call.bodyRequest(method.input, fromPath)
            : call.queryRequest(method.input, fromPath);
        if (method.streaming) await call.stream(await callStream(core, method, request, call.ctx));
        else call.json(encodeResult(method, await callUnary(core, method, request, call.ctx)), spec.status);
      }),
    };
  });

  // Every bare route before any /{tenant} twin, so /tasks/tasks is GetTask, not a tenant's ListTasks.
  for (const prefix of ["", "/:tenant"]) {
    for (const { verbs, path, handler } of routes) {
      for (const verb of verbs) router[verb](`${prefix}${path}`, auth, handler);
    }
  }
  return router;
}
