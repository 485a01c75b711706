// GET /console: the browser console, a single page bundled at build time into
// dist/console (scripts/build.ts). The page talks only to this adapter (POST /
// and the cancel extension), so its Content-Security-Policy allows nothing but
// its own origin: no CDN, no inline script or style, no framing.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { PACKAGE_ROOT } from "../../package-root.js";
import type Router from "@koa/router";

/** The policy of every console response: its own scripts, styles and API only. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": CONSOLE_CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-cache",
};

/** The bundle's files and their media types (the page names them relative to /console). */
const ASSETS: Record<string, string> = {
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};

/** dist/console of the package, whether this module runs compiled or from the sources. */
export function consoleDir(): string {
  return path.join(PACKAGE_ROOT, "dist", "console");
}

export interface ConsolePage {
  /** Whether the page tells the user to enter the adapter's bearer token. */
  authRequired: boolean;
  /** The workspace the page proposes for new threads (the first allowed root). */
  workspace: string;
}

const escapeAttr = (value: string): string =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Files of a built console, read once; undefined when the console was not built. */
function loadBundle(dir: string): Map<string, Buffer> | undefined {
  const names = ["index.html", ...Object.keys(ASSETS)];
  if (!names.every((name) => existsSync(path.join(dir, name)))) return undefined;
  return new Map(names.map((name) => [name, readFileSync(path.join(dir, name))]));
}

/** Adds GET /console and its assets to `router`, and sends a browser's GET / there. */
export function addConsoleRoutes(router: Router, page: ConsolePage, dir = consoleDir()): void {
  const bundle = loadBundle(dir);
  const html =
    bundle &&
    bundle
      .get("index.html")!
      .toString("utf8")
      // Replacer functions: a `$` in the workspace path is not a replacement pattern.
      .replace("{{AUTH}}", () => (page.authRequired ? "required" : "none"))
      .replace("{{WORKSPACE}}", () => escapeAttr(page.workspace));

  router.get("/console", (ctx) => {
    ctx.set(SECURITY_HEADERS);
    if (html === undefined) {
      ctx.status = 503;
      ctx.type = "text/plain; charset=utf-8";
      ctx.body = "The console is not built: run `npm run build` (npm ci does it).\n";
      return;
    }
    ctx.type = "text/html; charset=utf-8";
    ctx.body = html;
  });
  // A browser opening the adapter's address lands on the console (POST / stays the AG-UI endpoint).
  router.get("/", (ctx) => {
    if (ctx.accepts("json", "html") === "html") return ctx.redirect("/console");
    // For anything else, GET / is what it was without the console: not a method of the endpoint.
    ctx.set("Allow", "POST");
    ctx.status = 405;
  });
  router.get("/console/:asset", (ctx, next) => {
    const asset = ctx.params.asset;
    const type = Object.hasOwn(ASSETS, asset) ? ASSETS[asset] : undefined;
    const body = type ? bundle?.get(asset) : undefined;
    if (!type || !body) return next();
    ctx.set(SECURITY_HEADERS);
    ctx.type = type;
    ctx.body = body;
  });
}
