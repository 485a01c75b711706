// POST /extensions/iac-code/v1/executions/{executionId}/subscribe: the
// read-only observer (agui-iaccode.md §9.2). Its refusals keep the reference's
// plain `{"error": "<text>"}` bodies (not the error envelope), with `field`
// naming what was wrong in the body; once admitted it answers an SSE stream
// (run/observe.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import type Router from "@koa/router";
import { DEFAULT_LANGUAGE, parseAcceptLanguage } from "../../i18n/index.js";
import { UnauthorizedError, type AguiAuth } from "./auth.js";
import { readJsonBody } from "../../server/json-body.js";
import type { ServerMetrics } from "../../server/metrics.js";
import type { AguiAdapter } from "../adapter.js";
import { AguiError } from "../errors.js";
import type { AdapterLogger } from "../logger.js";
import { OBSERVE_ERRORS, ObservationRefused, type ObservationIdentity } from "../run/observe.js";
import { isAcceptableThreadId } from "../threads/thread-store.js";
import { isObject } from "../upstream/a2a-items.js";
import { SseWriter } from "./sse-writer.js";

export const SUBSCRIBE_PATH = "/extensions/iac-code/v1/executions/:executionId/subscribe";

/** The body is a few ids: 64 KiB, as the cancel extension's. */
const SUBSCRIBE_BODY_LIMIT = 64 * 1024;

const KEYS = new Set(["threadId", "runId", "rosInvocationId", "afterSequence"]);

export interface ObserveRouteOptions {
  adapter: AguiAdapter;
  /** The static token and/or a bearer JWT whose user must be the thread's. */
  auth: AguiAuth;
  heartbeatMs?: number;
  logger?: AdapterLogger;
  metrics?: ServerMetrics;
}

class BodyRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, string>,
    /** The WWW-Authenticate value of a 401. */
    readonly challenge?: string,
  ) {
    super(body.error);
  }
}

const invalid = (field: string) => new BodyRefused(400, { error: OBSERVE_ERRORS.invalidIdentity, field });

/** The observation identity of a body, or why not (the field named). */
async function identityOf(req: IncomingMessage): Promise<ObservationIdentity> {
  const read = await readJsonBody(req, { maxBytes: SUBSCRIBE_BODY_LIMIT });
  if (!read.ok) {
    if (read.failure === "too-large") throw new BodyRefused(413, { error: "Request body too large" });
    throw invalid("body");
  }
  const body = read.value;
  if (!isObject(body)) throw invalid("body");
  const unknown = Object.keys(body).find((k) => !KEYS.has(k));
  if (unknown !== undefined) throw invalid(unknown);
  for (const field of ["threadId", "runId", "rosInvocationId"] as const) {
    const v = body[field];
    if (typeof v !== "string" || v === "") throw invalid(field);
  }
  if (!isAcceptableThreadId(body.threadId)) throw invalid("threadId");
  // Accepted and not used (the reference's); when given, a sequence number.
  const after = body.afterSequence;
  if (after !== undefined && !(typeof after === "number" && Number.isSafeInteger(after) && after >= 0))
    throw invalid("afterSequence");
  return {
    threadId: body.threadId,
    runId: body.runId as string,
    rosInvocationId: body.rosInvocationId as string,
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, challenge?: string): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...(challenge ? { "WWW-Authenticate": challenge } : {}),
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}

export function addObserveRoute(router: Router, options: ObserveRouteOptions): void {
  const { adapter, logger, metrics } = options;
  const count = (outcome: string) => metrics?.requests.inc({ method: "subscribe", binding: "agui", outcome });

  router.post(SUBSCRIBE_PATH, async (ctx) => {
    ctx.respond = false;
    const { req, res } = ctx;
    const executionId = ctx.params.executionId;
    const language = parseAcceptLanguage(req.headers["accept-language"]) ?? DEFAULT_LANGUAGE;
    try {
      // The static token as exactly `Bearer <token>` (the extension routes' rule), or a JWT
      // of the identity provider, whose user must be the thread's.
      let user: string | undefined;
      try {
        user = (await options.auth.require(req.headers.authorization, { exactScheme: true })).user;
      } catch (err) {
        req.resume();
        throw err instanceof UnauthorizedError
          ? new BodyRefused(401, { error: "Unauthorized" }, err.challenge)
          : err;
      }
      const identity = await identityOf(req);
      const observation = await adapter.admitObservation(executionId, identity, language, user);
      count("observed");
      const writer = new SseWriter(res, options.heartbeatMs);
      writer.open();
      try {
        await adapter.observe(observation, writer);
      } finally {
        writer.end();
      }
    } catch (err) {
      if (res.headersSent) {
        res.end();
        return;
      }
      if (err instanceof BodyRefused || err instanceof ObservationRefused) {
        const body = err instanceof BodyRefused ? err.body : { error: err.error };
        count(String(err.status));
        logger?.info({ executionId, status: err.status, reason: body.error }, "AG-UI subscribe refused");
        return sendJson(res, err.status, body, err instanceof BodyRefused ? err.challenge : undefined);
      }
      if (err instanceof AguiError) {
        count(err.code);
        return sendJson(res, err.status, err.body(language));
      }
      logger?.error({ err: (err as Error).message }, "unexpected error before the observer stream");
      sendJson(res, 500, { error: { code: "INTERNAL", message: "An unexpected error occurred." } });
    }
  });
}
