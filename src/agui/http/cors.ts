// CORS for the routes a browser front end calls: POST / (the run), the cancel
// extension and the observer (subscribe) extension. Only the configured origins (cors-origins) are answered
// with CORS headers; any other origin gets none, so the browser blocks the
// response. With no origins configured nothing is added at all.
import type Koa from "koa";

const CORS_ROUTES = /^\/(?:extensions\/iac-code\/v1\/executions\/[^/]+\/(?:cancel|subscribe))?$/;
const ALLOW_METHODS = "POST, OPTIONS";
/** What AG-UI clients send: the body type, the bearer token, SSE, the language. */
const ALLOW_HEADERS = "Content-Type, Authorization, Accept, Accept-Language";
const PREFLIGHT_MAX_AGE_SECONDS = "600";

export function corsMiddleware(origins: readonly string[]): Koa.Middleware {
  const allowed = new Set(origins);
  return async (ctx, next) => {
    if (!CORS_ROUTES.test(ctx.path)) {
      await next();
      return;
    }
    // The answer depends on Origin: caches must keep one per origin.
    ctx.vary("Origin");
    const origin = ctx.get("Origin");
    const permitted = origin !== "" && allowed.has(origin);
    if (permitted) ctx.set("Access-Control-Allow-Origin", origin);
    if (ctx.method !== "OPTIONS") {
      await next();
      return;
    }
    // A preflight: answered here, with the CORS headers only for a permitted origin.
    if (permitted) {
      ctx.set("Access-Control-Allow-Methods", ALLOW_METHODS);
      ctx.set("Access-Control-Allow-Headers", ALLOW_HEADERS);
      ctx.set("Access-Control-Max-Age", PREFLIGHT_MAX_AGE_SECONDS);
    }
    ctx.set("Allow", ALLOW_METHODS);
    ctx.status = 204;
  };
}
