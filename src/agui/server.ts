// Composition of the AG-UI adapter: the upstream A2A client (a configured
// loopback URL, or a managed A2A child), the thread store, the adapter core and
// its HTTP listener; idle shutdown; one close() that stops everything it started.
import type http from "node:http";
import path from "node:path";
import { listenHttp } from "../server/listener.js";
import { ServerMetrics } from "../server/metrics.js";
import { A2aClient, normalizeA2aUrl } from "./a2a-client.js";
import { AguiAdapter } from "./adapter.js";
import type { AdapterLogger } from "./adapter-core.js";
import { createAguiApp } from "./http-app.js";
import { allowedRoots } from "./inputs.js";
import { startManagedA2a, type ManagedA2a, type ManagedA2aOptions } from "./managed-a2a.js";
import { connectRedis } from "../server/redis.js";
import { RedisThreadStore } from "./redis-thread-store.js";
import { ThreadStore, type ThreadStates } from "./thread-store.js";
import type { AguiSettings } from "./config.js";
import { isObject, type JsonObject } from "./a2a-items.js";

export interface AguiServerDeps {
  logger?: AdapterLogger;
  /** Options for the managed A2A child (when no A2A URL is configured). */
  managed?: ManagedA2aOptions;
  heartbeatMs?: number;
  /** Called once when idle shutdown triggers (after the server closed). */
  onIdleShutdown?: () => void;
  /** Test hook: fault injection on thread-state writes. */
  store?: ThreadStore;
  /** Process metrics (CPU, memory, event loop) on /metrics too (the CLI turns them on). */
  processMetrics?: boolean;
}

export interface AguiServer {
  url: string;
  port: number;
  a2aUrl: string;
  adapter: AguiAdapter;
  managed?: ManagedA2a;
  close(): Promise<void>;
}

export async function startAguiServer(
  settings: AguiSettings,
  deps: AguiServerDeps = {},
): Promise<AguiServer> {
  const configuredUrl = settings.a2aUrl ? normalizeA2aUrl(settings.a2aUrl) : undefined;
  // Bind first: a port in use fails before the managed child starts or anything is announced.
  // Until the adapter is ready the listener answers 503.
  let handle: http.RequestListener = (_req, res) => {
    res.writeHead(503, { "Retry-After": "1" }).end();
  };
  const listener = await listenHttp(
    (req, res) => handle(req, res),
    settings.host,
    settings.port,
    settings.timeouts,
  );
  let managed: ManagedA2a | undefined;
  let a2aUrl: string;
  let a2aToken = settings.a2aToken;
  try {
    if (configuredUrl) {
      a2aUrl = configuredUrl;
    } else {
      managed = await startManagedA2a({
        pidFile: path.join(settings.stateDir, "managed-a2a.pid"),
        allowedCwds: settings.allowedCwds,
        ...deps.managed,
      });
      a2aUrl = managed.url;
      a2aToken = managed.token;
    }
  } catch (err) {
    await listener.close();
    throw err;
  }
  const client = new A2aClient({ url: a2aUrl, token: a2aToken });
  const redis =
    !deps.store && settings.threadStore === "redis" && settings.redisUrl
      ? connectRedis(settings.redisUrl, deps.logger, "iac-code-agui")
      : undefined;
  const store: ThreadStates =
    deps.store ?? (redis ? new RedisThreadStore(redis) : new ThreadStore({ root: settings.stateDir }));
  const metrics: ServerMetrics = new ServerMetrics({
    server: "agui",
    // Read at scrape time, once the adapter below exists.
    interruptsWaiting: (): number => adapter.interruptsWaiting(),
    processMetrics: deps.processMetrics,
  });
  const adapter = new AguiAdapter({
    client,
    store,
    allowedRoots: allowedRoots(settings.allowedCwds),
    interruptTtl: settings.interruptTtl,
    logger: deps.logger,
    metrics,
  });
  const runtimeInfo = async (): Promise<JsonObject | undefined> => {
    const res = await fetch(`${a2aUrl}health`, {
      headers: a2aToken ? { Authorization: `Bearer ${a2aToken}` } : {},
      signal: AbortSignal.timeout(1000),
    });
    const body: unknown = await res.json();
    return isObject(body) && isObject(body.runtime) ? body.runtime : undefined;
  };
  const app = createAguiApp({
    adapter,
    authToken: settings.authToken,
    heartbeatMs: deps.heartbeatMs,
    runtimeInfo,
    logger: deps.logger,
    corsOrigins: settings.corsOrigins,
    metrics,
  });
  const handler = app.callback();
  handle = (req, res) => void handler(req, res);
  const port = listener.port;
  const host = settings.host.includes(":") ? `[${settings.host}]` : settings.host;

  let closing: Promise<void> | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (idleTimer) clearInterval(idleTimer);
      adapter.close();
      await listener.close();
      await managed?.stop();
      await redis?.quit().catch(() => redis.disconnect());
    })();
    return closing;
  };

  if (settings.idleShutdown > 0) {
    const idleMs = settings.idleShutdown * 1000;
    const period = Math.min(5000, Math.max(100, idleMs / 4));
    idleTimer = setInterval(() => {
      if (adapter.isIdle() && Date.now() - adapter.lastActivity >= idleMs) {
        clearInterval(idleTimer);
        void close().then(() => deps.onIdleShutdown?.());
      }
    }, period);
    idleTimer.unref();
  }

  return { url: `http://${host}:${port}/`, port, a2aUrl, adapter, managed, close };
}
