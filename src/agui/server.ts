// Composition of the AG-UI adapter: the upstream A2A client (a configured
// loopback URL, or a supervised managed A2A child), the thread store, the
// adapter core and its HTTP listener; idle shutdown; one close() that stops
// everything it started.
import type http from "node:http";
import type { Redis } from "ioredis";
import path from "node:path";
import { DirInUseError, lockDir, type DirLock } from "../server/dir-lock.js";
import { listenHttp } from "../server/listener.js";
import { ServerMetrics } from "../server/metrics.js";
import { flushTracing, startTracing } from "../server/tracing/index.js";
import { tracedHttp } from "../server/tracing/http.js";
import { A2aClient, normalizeA2aUrl } from "./upstream/a2a-client.js";
import { DEFAULT_A2A_WAIT_SECONDS } from "./upstream/a2a-wait.js";
import { AguiAdapter } from "./adapter.js";
import type { AdapterLogger } from "./logger.js";
import { createAguiApp } from "./http/app.js";
import { allowedRoots } from "./run/inputs.js";
import { startManagedA2a, type ManagedA2a, type ManagedA2aOptions } from "./upstream/managed-a2a.js";
import { ThreadStore, type ThreadStates } from "./threads/thread-store.js";
import type { AguiSettings } from "./config.js";
import { isObject, type JsonObject } from "./upstream/a2a-items.js";

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
  /** Where the OTEL_* trace settings are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface AguiServer {
  url: string;
  port: number;
  /** Where the browser console is served (undefined when it is off). */
  consoleUrl?: string;
  /** The A2A server's URL (a managed child respawned after a failed start may move to another port). */
  readonly a2aUrl: string;
  adapter: AguiAdapter;
  managed?: ManagedA2a;
  close(): Promise<void>;
}

/** thread-store redis: the client and the store (ioredis is loaded here, only then). */
async function redisThreads(
  url: string,
  logger: AdapterLogger | undefined,
): Promise<{ redis: Redis; store: ThreadStates }> {
  const { connectRedis } = await import("../server/redis.js");
  const { RedisThreadStore } = await import("./threads/redis-thread-store.js");
  const redis = connectRedis(url, logger, "iac-code-agui");
  return { redis, store: new RedisThreadStore(redis) };
}

export async function startAguiServer(
  settings: AguiSettings,
  deps: AguiServerDeps = {},
): Promise<AguiServer> {
  const configuredUrl = settings.a2aUrl ? normalizeA2aUrl(settings.a2aUrl) : undefined;
  // OTLP traces when the standard OTEL_* variables name an endpoint (the SDK is loaded only then).
  await startTracing(deps.env ?? process.env, "agui");
  // One adapter per home: a second one never touches the first one's threads or managed child.
  const home = takeHome(settings.stateDir);
  // Bind first: a port in use fails before the managed child starts or anything is announced.
  // Until the adapter is ready the listener answers 503.
  let handle: http.RequestListener = (_req, res) => {
    res.writeHead(503, { "Retry-After": "1" }).end();
  };
  const listener = await listenHttp(
    tracedHttp("iac-code.agui", (req: http.IncomingMessage, res: http.ServerResponse) => handle(req, res)),
    settings.host,
    settings.port,
    settings.timeouts,
  ).catch((error: unknown) => {
    home.release();
    throw error;
  });
  let started: ManagedA2a | undefined;
  try {
    if (!configuredUrl) {
      started = await startManagedA2a({
        pidFile: path.join(settings.stateDir, "managed-a2a.pid"),
        allowedCwds: settings.allowedCwds,
        logger: deps.logger,
        ...deps.managed,
      });
    }
  } catch (err) {
    await listener.close();
    home.release();
    throw err;
  }
  const managed = started;
  const a2aToken = managed ? managed.token : settings.a2aToken;
  const client = new A2aClient({
    url: managed?.url ?? configuredUrl!,
    token: a2aToken,
    upstream: managed,
    // a2a-wait-seconds: a run waits this long for an unreachable A2A server (a2a-wait.ts).
    wait: { maxMs: (settings.a2aWaitSeconds ?? DEFAULT_A2A_WAIT_SECONDS) * 1000 },
    logger: deps.logger,
  });
  const shared =
    !deps.store && settings.threadStore === "redis" && settings.redisUrl
      ? await redisThreads(settings.redisUrl, deps.logger)
      : undefined;
  const redis = shared?.redis;
  const store: ThreadStates =
    deps.store ??
    shared?.store ??
    new ThreadStore({ root: settings.stateDir, syncEveryWrite: settings.syncEveryCommit });
  const metrics: ServerMetrics = new ServerMetrics({
    server: "agui",
    // Read at scrape time, once the adapter below exists.
    interruptsWaiting: (): number => adapter.interruptsWaiting(),
    managedA2a: managed && (() => managed.status()),
    processMetrics: deps.processMetrics,
  });
  const roots = allowedRoots(settings.allowedCwds);
  const adapter = new AguiAdapter({
    client,
    store,
    allowedRoots: roots,
    interruptTtl: settings.interruptTtl,
    logger: deps.logger,
    metrics,
  });
  const runtimeInfo = async (): Promise<JsonObject | undefined> => {
    // Nothing answers while a managed child is down (and its port may be another process's).
    if (managed?.unavailable()) return undefined;
    const res = await fetch(`${client.url}health`, {
      headers: a2aToken ? { Authorization: `Bearer ${a2aToken}` } : {},
      signal: AbortSignal.timeout(1000),
    });
    const body: unknown = await res.json();
    return isObject(body) && isObject(body.runtime) ? body.runtime : undefined;
  };
  const app = createAguiApp({
    adapter,
    authToken: settings.authToken,
    jwt: settings.jwt,
    heartbeatMs: deps.heartbeatMs,
    runtimeInfo,
    managedA2a: managed && (() => managed.status()),
    logger: deps.logger,
    corsOrigins: settings.corsOrigins,
    console: settings.console
      ? { authRequired: Boolean(settings.authToken || settings.jwt), workspace: roots[0] ?? process.cwd() }
      : undefined,
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
      // First: a child that exits from now on (it may get the same Ctrl-C) is not respawned.
      managed?.stopRespawning();
      adapter.close();
      await listener.close();
      await managed?.stop();
      store.close?.();
      await redis?.quit().catch(() => redis.disconnect());
      await flushTracing();
      home.release();
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

  const url = `http://${host}:${port}/`;
  return {
    url,
    consoleUrl: settings.console ? `${url}console` : undefined,
    port,
    get a2aUrl() {
      return client.url;
    },
    adapter,
    managed,
    close,
  };
}

/**
 * Takes the adapter's state dir for this process (its threads and its managed
 * child's PID file are there); refused, with the holder and the fix, while
 * another adapter runs on it.
 */
function takeHome(stateDir: string): DirLock {
  try {
    return lockDir(stateDir, "adapter");
  } catch (error) {
    if (!(error instanceof DirInUseError)) throw error;
    throw new Error(
      `The state directory ${stateDir} is in use by another iac-code AG-UI adapter (PID ${error.pid ?? "unknown"}). ` +
        "Stop that adapter, or give this one a home of its own (IAC_CODE_CONFIG_DIR=<dir>).",
      { cause: error },
    );
  }
}
