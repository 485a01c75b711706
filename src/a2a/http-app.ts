// The Koa application of the A2A HTTP surface: health and agent card (public), readiness,
// the JSON-RPC endpoint (authenticated when auth is configured), and a hook to
// mount more routers (the REST binding comes next).
import Koa from "koa";
import { Router } from "@koa/router";
import type { Logger } from "pino";
import type { ServerMetrics } from "../server/metrics.js";
import { VERSION } from "../version.js";
import type { RuntimeInfo, RuntimeReadiness } from "../runtime/seam.js";
import type { Authenticator, AuthResult } from "./core/request/auth.js";
import type { AgentCards } from "./core/card.js";
import { parseExtensions } from "./core/request/service-params.js";
import type { A2AService } from "./core/service.js";
import { JsonRpcBinding } from "./bindings/jsonrpc.js";

export interface A2aState {
  caller: AuthResult;
  requestedExtensions: string[];
}

export interface HttpAppOptions {
  service: A2AService;
  auth: Authenticator;
  cards: () => AgentCards;
  runtimeInfo: () => RuntimeInfo;
  /** GET /iac-code/readiness (404 when the runtime cannot say). */
  readiness?: () => RuntimeReadiness;
  logger: Logger;
  /** Served on GET /metrics, behind the same auth as the A2A methods. */
  metrics?: ServerMetrics;
  /** Extra routers (REST binding, ...) mounted after the built-in routes. */
  routers?: Router<A2aState>[];
}

/** Koa middleware: 401 {"error":"Unauthorized"} (and WWW-Authenticate) unless a configured scheme matches. */
export function requireAuth(auth: Authenticator): Koa.Middleware<A2aState> {
  return async (ctx, next) => {
    const checked = await auth.check((name) => {
      const value = ctx.request.headers[name];
      return Array.isArray(value) ? value[0] : value;
    });
    if (!checked.ok) {
      ctx.status = 401;
      if (checked.challenge) ctx.set("WWW-Authenticate", checked.challenge);
      ctx.body = { error: "Unauthorized" };
      return;
    }
    ctx.state.caller = checked.caller;
    ctx.state.requestedExtensions = parseExtensions(ctx.request.headers["a2a-extensions"]);
    await next();
  };
}

export function buildHttpApp(options: HttpAppOptions): Koa<A2aState> {
  const app = new Koa<A2aState>();
  app.silent = true;
  app.on("error", (error: unknown) => options.logger.warn({ err: error }, "http error"));
  const jsonRpc = new JsonRpcBinding({ service: options.service, logger: options.logger });
  const router = new Router<A2aState>();

  router.get("/health", (ctx) => {
    const info = options.runtimeInfo();
    const runtime: Record<string, unknown> = { demo: info.demo, provider: info.provider, model: info.model };
    if (info.hint) runtime.hint = info.hint;
    ctx.body = { status: "healthy", version: VERSION, mode: info.mode ?? "normal", runtime };
  });

  router.get("/.well-known/agent-card.json", (ctx) => {
    const { json, etag, lastModified } = options.cards().publicCard;
    ctx.set("Cache-Control", "public, max-age=60");
    ctx.set("ETag", etag);
    ctx.set("Last-Modified", lastModified);
    if (ctx.get("If-None-Match") === etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = "application/json";
    ctx.body = json;
  });

  const readiness = options.readiness;
  if (readiness) {
    // Names what is missing, never a value; still the operator's business: behind the auth.
    router.get("/iac-code/readiness", requireAuth(options.auth), (ctx) => {
      ctx.body = readiness();
    });
  }

  const metrics = options.metrics;
  if (metrics) {
    // Same auth as the A2A methods: the numbers describe every caller's traffic.
    router.get("/metrics", requireAuth(options.auth), async (ctx) => {
      const { contentType, body } = await metrics.scrape();
      ctx.set("Content-Type", contentType);
      ctx.body = body;
    });
  }

  router.post("/", requireAuth(options.auth), async (ctx) => {
    ctx.respond = false;
    await jsonRpc.handle({
      req: ctx.req,
      res: ctx.res,
      caller: ctx.state.caller,
      requestedExtensions: ctx.state.requestedExtensions,
    });
  });

  app.use(router.routes()).use(router.allowedMethods());
  for (const extra of options.routers ?? []) app.use(extra.routes()).use(extra.allowedMethods());
  return app;
}
