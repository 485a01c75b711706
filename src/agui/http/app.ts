// The AG-UI HTTP surface: GET /health, POST / (RunAgentInput -> SSE) and the
// cancel extension. Errors before the stream starts are JSON envelopes with the
// catalogue's HTTP status; after it starts they are RUN_ERROR events.
import type { IncomingMessage, ServerResponse } from "node:http";
import Koa from "koa";
import Router from "@koa/router";
import { parseRunAgentInput, type ContractViolation } from "../../contract/index.js";
import { parseAcceptLanguage, normalizeLanguage, DEFAULT_LANGUAGE, type Language } from "../../i18n/index.js";
import { VERSION } from "../../version.js";
import { isObject, type JsonObject } from "../upstream/a2a-items.js";
import type { AguiAdapter } from "../adapter.js";
import type { AdapterLogger } from "../logger.js";
import type { RunRequest } from "../run/admission.js";
import type { ManagedA2aStatus } from "../upstream/managed-a2a.js";
import { addConsoleRoutes, type ConsolePage } from "./console-route.js";
import { corsMiddleware } from "./cors.js";
import { addObserveRoute } from "./observe-route.js";
import { AguiError, MSG, type MessageKey } from "../errors.js";
import { fieldError } from "./field-errors.js";
import { CANCEL_BODY_LIMIT, lastUserMessage, REQUEST_LIMIT, userParts } from "../run/inputs.js";
import type { ResumeAnswer } from "../threads/execution.js";
import { SseWriter } from "./sse-writer.js";
import { AguiAuth, UnauthorizedError } from "./auth.js";
import type { JwtSettings } from "../../server/jwt-auth.js";
import { readJsonBody } from "../../server/json-body.js";
import type { ServerMetrics } from "../../server/metrics.js";

/** The @ag-ui/core version whose wire this adapter follows. */
export const AGUI_PROTOCOL_PACKAGE_VERSION = "1.0.0";

export interface HttpAppOptions {
  adapter: AguiAdapter;
  authToken?: string;
  /** Bearer JWTs of an identity provider (either this or the token passes). */
  jwt?: JwtSettings;
  heartbeatMs?: number;
  /** Runtime info of the A2A server behind the adapter (shown by /health), if known. */
  runtimeInfo?: () => Promise<JsonObject | undefined>;
  /** The managed A2A child's status (shown by /health as `a2a`); none with a configured A2A URL. */
  managedA2a?: () => ManagedA2aStatus;
  /** Where connection-level errors go (a client that left, a timed-out request). */
  logger?: AdapterLogger;
  /** Browser origins allowed by CORS on POST / and the cancel extension (none: no CORS headers). */
  corsOrigins?: readonly string[];
  /** GET /console (the browser console) with what its page needs to know; none: no route. */
  console?: ConsolePage;
  /** Served on GET /metrics (behind the bearer token when one is configured). */
  metrics?: ServerMetrics;
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  close = false,
  challenge?: string,
): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  };
  if (challenge) headers["WWW-Authenticate"] = challenge;
  if (close) headers.Connection = "close";
  res.writeHead(status, headers);
  res.end(text);
}

/**
 * Answers a failure: before the stream, the AguiError envelope with its status
 * (closing the connection after an oversized body, whose rest is drained) or a
 * bare 500; once the stream started, it just ends.
 */
function sendFailure(
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
  lang: Language,
  logger: AdapterLogger | undefined,
  ids: RequestIds = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (err instanceof AguiError) {
    // In English, with the ids the client sent, so an operator can find the request.
    logger?.info(
      { ...ids, code: err.code, status: err.status, reason: err.message },
      "AG-UI request refused",
    );
    const close = err.code === "REQUEST_TOO_LARGE";
    sendJson(
      res,
      err.status,
      err.body(lang),
      close,
      err instanceof UnauthorizedError ? err.challenge : undefined,
    );
    if (close) req.resume();
    return;
  }
  logger?.error(
    { err: err instanceof Error ? err.message : String(err) },
    "unexpected error before the stream",
  );
  sendJson(res, 500, { error: { code: "INTERNAL", message: "An unexpected error occurred." } });
}

/** The ids a refused request named (logged with the refusal). */
interface RequestIds {
  threadId?: string;
  runId?: string;
  executionId?: string;
}

function idsOf(body: JsonObject): RequestIds {
  const id = (v: unknown) => (typeof v === "string" && v.length <= 256 ? v : undefined);
  return { threadId: id(body.threadId), runId: id(body.runId) };
}

function acceptLanguage(req: IncomingMessage): Language {
  return parseAcceptLanguage(req.headers["accept-language"]) ?? DEFAULT_LANGUAGE;
}

function isJsonContentType(header: string | undefined): boolean {
  return (header ?? "").split(";")[0].trim().toLowerCase() === "application/json";
}

/** The wire texts of one route's body failures. */
interface BodyMessages {
  tooLarge: MessageKey;
  invalidJson: MessageKey;
  notObject: MessageKey;
}

/**
 * The checks POST / and the cancel extension share after the caller's
 * (AguiAuth.require), in order: JSON media type, body within `limit`,
 * strict UTF-8 JSON within the depth and value limits, a JSON object.
 */
async function readJsonObject(
  req: IncomingMessage,
  limit: number,
  messages: BodyMessages,
): Promise<JsonObject> {
  if (!isJsonContentType(req.headers["content-type"])) {
    throw new AguiError("UNSUPPORTED_MEDIA_TYPE", MSG.unsupportedMediaType);
  }
  const read = await readJsonBody(req, { maxBytes: limit });
  if (!read.ok) {
    if (read.failure === "too-large") throw new AguiError("REQUEST_TOO_LARGE", messages.tooLarge);
    if (read.failure === "too-deep") throw new AguiError("INVALID_JSON", MSG.jsonTooDeep);
    if (read.failure === "too-many-values") throw new AguiError("INVALID_JSON", MSG.jsonTooManyValues);
    throw new AguiError("INVALID_JSON", messages.invalidJson);
  }
  if (read.value === undefined) throw new AguiError("INVALID_JSON", messages.invalidJson);
  if (!isObject(read.value)) throw new AguiError("INVALID_INPUT", messages.notObject);
  return read.value;
}

const RUN_BODY: BodyMessages = {
  tooLarge: MSG.requestTooLarge,
  invalidJson: MSG.invalidJson,
  notObject: MSG.notAnObject,
};

const CANCEL_BODY: BodyMessages = {
  tooLarge: MSG.cancelTooLarge,
  invalidJson: MSG.cancelInvalidJson,
  notObject: MSG.cancelNotObject,
};

/** A clear INVALID_INPUT for a rejected envelope: content, the field and why, or the envelope itself. */
function envelopeError(body: JsonObject, errors: ContractViolation[]): AguiError {
  const contentErr = errors.find((e) => /^\/messages\/\d+\/content/.test(e.path));
  if (contentErr && Array.isArray(body.messages)) {
    const index = Number(/^\/messages\/(\d+)/.exec(contentErr.path)![1]);
    const message: unknown = body.messages[index];
    if (isObject(message)) {
      try {
        userParts(message);
      } catch (err) {
        if (err instanceof AguiError) return err;
      }
    }
  }
  return fieldError(errors) ?? new AguiError("INVALID_INPUT", MSG.invalidEnvelope);
}

/** The `a2a` object of /health: the status without the PID (the route is public). */
function healthOfManaged(status: ManagedA2aStatus): JsonObject {
  const { pid: _pid, lastExit, ...shown } = status;
  const body: JsonObject = { ...shown };
  if (lastExit) body.lastExit = { ...lastExit };
  return body;
}

export function createAguiApp(options: HttpAppOptions): Koa {
  const { adapter } = options;
  const authToken = options.authToken || undefined;
  const auth = new AguiAuth(authToken, options.jwt, (err) =>
    options.logger?.warn(
      { err: err instanceof Error ? err.message : String(err) },
      "the identity provider's key set (auth-jwks-url) could not be fetched",
    ),
  );
  const app = new Koa();
  // Koa would print connection errors (a dropped stalled request) to stderr.
  app.silent = true;
  app.on("error", (err: Error) => options.logger?.warn({ err: err.message }, "http connection error"));
  if (options.corsOrigins?.length) app.use(corsMiddleware(options.corsOrigins));
  const router = new Router();

  router.get("/health", async (ctx) => {
    const body: JsonObject = {
      status: "healthy",
      protocol: "ag-ui",
      protocolPackageVersion: AGUI_PROTOCOL_PACKAGE_VERSION,
      executionKernel: "a2a-1.0",
      serverVersion: VERSION,
    };
    const runtime = await options.runtimeInfo?.().catch(() => undefined);
    if (runtime) body.runtime = runtime;
    // Still 200 while the child is down: the adapter is alive and respawning it (a liveness
    // probe that restarted the adapter would only add a second outage); `a2a.state` says it.
    if (options.managedA2a) body.a2a = healthOfManaged(options.managedA2a());
    ctx.body = body;
  });

  if (options.console) addConsoleRoutes(router, options.console);

  const metrics = options.metrics;
  if (metrics) {
    // The same auth as POST /: the numbers describe every caller's traffic.
    router.get("/metrics", async (ctx) => {
      try {
        await auth.require(ctx.get("Authorization") || undefined);
      } catch (err) {
        const refused = err as UnauthorizedError;
        ctx.status = refused.status;
        ctx.set("WWW-Authenticate", refused.challenge);
        ctx.body = refused.body(acceptLanguage(ctx.req));
        return;
      }
      const { contentType, body } = await metrics.scrape();
      ctx.set("Content-Type", contentType);
      ctx.body = body;
    });
  }

  router.post("/", async (ctx) => {
    ctx.respond = false;
    await handleRun(ctx.req, ctx.res);
  });

  router.post("/extensions/iac-code/v1/executions/:executionId/cancel", async (ctx) => {
    ctx.respond = false;
    await handleCancel(ctx.req, ctx.res, ctx.params.executionId);
  });

  addObserveRoute(router, {
    adapter,
    auth,
    heartbeatMs: options.heartbeatMs,
    logger: options.logger,
    metrics,
  });

  async function handleRun(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let lang = acceptLanguage(req);
    let ids: RequestIds = {};
    try {
      const caller = await auth.require(req.headers.authorization);
      const body = await readJsonObject(req, REQUEST_LIMIT, RUN_BODY);
      ids = idsOf(body);
      const fp = isObject(body.forwardedProps) ? body.forwardedProps : undefined;
      const iac = fp && isObject(fp.iacCode) ? fp.iacCode : undefined;
      if (iac && typeof iac.preferredLanguage === "string")
        lang = normalizeLanguage(iac.preferredLanguage) ?? lang;
      const checked = parseRunAgentInput(body);
      if (!checked.ok) throw envelopeError(body, checked.errors);
      if (body.resume === undefined) {
        // Content limits (images) are checked before the stream starts.
        const user = lastUserMessage(body.messages as unknown[]);
        if (user) userParts(user);
      }
      const request: RunRequest = {
        threadId: body.threadId as string,
        runId: body.runId as string,
        parentRunId: typeof body.parentRunId === "string" ? body.parentRunId : undefined,
        messages: body.messages as unknown[],
        resume: body.resume as ResumeAnswer[] | undefined,
        // A JWT's identity is the run's user, whatever userId the body names.
        iacCode: caller.user
          ? { ...checked.value.forwardedProps.iacCode, userId: caller.user }
          : checked.value.forwardedProps.iacCode,
        raw: body,
      };
      const admission = await adapter.admit(request, lang);
      const writer = new SseWriter(res, options.heartbeatMs);
      writer.open();
      try {
        await adapter.run(admission, writer);
      } finally {
        writer.end();
      }
    } catch (err) {
      // Admitted runs are counted when they end; this counts the refused ones.
      if (err instanceof AguiError)
        metrics?.requests.inc({ method: "run", binding: "agui", outcome: err.code });
      sendFailure(req, res, err, lang, options.logger, ids);
    }
  }

  async function handleCancel(req: IncomingMessage, res: ServerResponse, executionId: string): Promise<void> {
    const lang = acceptLanguage(req);
    try {
      const caller = await auth.require(req.headers.authorization);
      const body = await readJsonObject(req, CANCEL_BODY_LIMIT, CANCEL_BODY);
      const { threadId, rosInvocationId } = body;
      if (
        typeof threadId !== "string" ||
        !threadId ||
        typeof rosInvocationId !== "string" ||
        !rosInvocationId
      ) {
        throw new AguiError("INVALID_INPUT", MSG.cancelFieldsRequired);
      }
      const status = await adapter.cancelExecution(executionId, threadId, rosInvocationId, caller.user);
      metrics?.requests.inc({ method: "cancel", binding: "agui", outcome: status });
      sendJson(res, 200, { executionId, status });
    } catch (err) {
      if (err instanceof AguiError)
        metrics?.requests.inc({ method: "cancel", binding: "agui", outcome: err.code });
      sendFailure(req, res, err, lang, options.logger, { executionId });
    }
  }

  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
