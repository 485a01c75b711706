// Starts the A2A server: state store (which takes the persistence dir for
// this process), recovery of tasks a previous process left running, service
// core, Koa app and listener. Returns the URL and a close() that stops
// accepting, cancels running turns, commits and closes the store and destroys
// open sockets.
// JSON-RPC, REST and gRPC share one port (HTTP/2 preface sniffing, or ALPN with
// TLS) unless grpc-port asks for a separate gRPC listener.
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Router } from "@koa/router";
import type { Logger } from "pino";
import type { AgentRuntime } from "../runtime/seam.js";
import type { A2aServerSettings } from "./config/server-settings.js";
import { createLogger } from "../server/logger.js";
import { flushTracing, startTracing } from "../server/tracing/index.js";
import { tracedHttp } from "../server/tracing/http.js";
import { ServerMetrics } from "../server/metrics.js";
import { redactRedisUrl } from "../server/redis-url.js";
import { listenOnePort, splitGrpc, type HttpHandler, type OnePortListener } from "../server/one-port.js";
import { createA2aGrpcHandler } from "./bindings/grpc.js";
import { createRestRouter } from "./bindings/rest.js";
import { runtimeDetails } from "./bindings/runtime-details.js";
import { signCards } from "./signing/sign-cards.js";
import { Authenticator } from "./core/auth.js";
import { buildAgentCards, type AgentCards } from "./core/card.js";
import { mediaTypesFromEnv } from "./core/parts.js";
import { A2AService } from "./core/service.js";
import { defaultRoots, existingRoots, rootList } from "../server/workspace-roots.js";
import { buildHttpApp, type A2aState } from "./http-app.js";
import { meteredService } from "./metered-service.js";
import { projectedService } from "./safe-mode-service.js";
import { PathProjector } from "./core/path-projection.js";
import { configDir } from "../server/paths.js";
import { PACKAGE_ROOT } from "../package-root.js";
import { createPipelineStateRouter } from "./pipeline-state.js";
import { openPush, type Push } from "./push/index.js";
import type { Resolver } from "./push/url-policy.js";
import { FileArtifactStore } from "./stores/artifact-store.js";
import { JsonRpcCore } from "./bindings/jsonrpc-core.js";
import {
  isJsonRpcTransport,
  startJsonRpcTransport,
  usesHttpAuth,
  type RunningTransport,
} from "./transports/index.js";
import type { RedisBackend } from "./replicas/redis-backend.js";
import type { StateStore } from "./stores/state.js";

export interface A2aServerDeps {
  runtime: AgentRuntime;
  logger?: Logger;
  /** Server process cwd stand-in (default workspace and allowed root). */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Extra routers mounted on the same app (REST binding...). */
  routers?: Router<A2aState>[];
  /** Process metrics (CPU, memory, event loop) on /metrics too (the CLI turns them on). */
  processMetrics?: boolean;
  /** DNS lookups of push callback hosts (tests answer without a network). */
  pushResolver?: Resolver;
  /** store: redis, opened already (the runtime's sessions go through it); else opened here. */
  redis?: RedisBackend;
  /**
   * The state store, opened already because the runtime writes its sessions
   * through it (see openStateStore): the caller closes it (and `redis`), after
   * the runtime. Else the server opens and closes its own.
   */
  state?: StateStore;
}

/**
 * The state store of a server's settings: the Redis backend's, or SQLite in
 * persistence-dir (better-sqlite3 is loaded here, on use).
 */
export async function openStateStore(
  settings: A2aServerSettings,
  redis: RedisBackend | undefined,
  logger: Logger,
): Promise<StateStore> {
  if (redis) return redis.state;
  const { SqliteStateStore } = await import("./stores/sqlite-state.js");
  return SqliteStateStore.open({
    dir: settings.persistenceDir,
    syncEveryCommit: settings.syncEveryCommit,
    logger,
  });
}

export interface RunningA2aServer {
  /**
   * JSON-RPC endpoint, e.g. http://127.0.0.1:41242/ (with transport grpc: the
   * gRPC target; with a custom transport: its URL, e.g. unix:///run/a2a.sock).
   */
  url: string;
  /** HTTP+JSON base URL, when served. */
  restUrl?: string;
  /** gRPC target host:port (transports grpc and grpc-jsonrpc, and http's gRPC binding). */
  grpcTarget: string;
  host: string;
  /** The port listened on (0 for stdio, unix and redis-streams). */
  port: number;
  /** stdio: resolves when stdin has ended and its requests are answered (the server should stop). */
  inputEnded?: Promise<void>;
  service: A2AService;
  /** The state store (tests and ops read the permission audit through it). */
  state: StateStore;
  /** What GET /metrics serves. */
  metrics: ServerMetrics;
  cards: AgentCards;
  close(): Promise<void>;
  /** Writes what the stores still hold in memory (a forced exit's last step). */
  flushStores(): Promise<void>;
}

export async function startA2aServer(
  settings: A2aServerSettings,
  deps: A2aServerDeps,
): Promise<RunningA2aServer> {
  const logger = deps.logger ?? createLogger({ debug: settings.debug, logToStdout: settings.logToStdout });
  // OTLP traces when the standard OTEL_* variables name an endpoint (the SDK is loaded only then).
  await startTracing(deps.env ?? process.env);
  // Each store's module (ioredis, better-sqlite3) is loaded only when the settings choose it.
  const redis =
    settings.store === "redis" ? (deps.redis ?? (await openRedisStore(settings, logger))) : undefined;
  const state: StateStore = deps.state ?? (await openStateStore(settings, redis, logger));
  const env = deps.env ?? process.env;
  const projector = settings.safeMode
    ? safeModeProjector(settings, deps.cwd ?? process.cwd(), env)
    : undefined;
  let push: Push | undefined;
  const closeState = async () => {
    await push?.stop();
    if (deps.state) return;
    await state.close();
    await redis?.close();
  };
  try {
    push = settings.push.enabled
      ? await openPush({
          settings: settings.push,
          state,
          persistenceDir: settings.persistenceDir,
          env,
          logger,
          resolve: deps.pushResolver,
          ...(projector ? { projectPayload: (payload: string) => projectJsonText(projector, payload) } : {}),
        })
      : undefined;
    return await startWithState(settings, deps, logger, state, push, redis, closeState, projector);
  } catch (error) {
    await closeState();
    throw error;
  }
}

/**
 * Safe mode's known roots: the server's cwd, the temp dir, the config, persistence and
 * artifact dirs and the install dir; each context's workspace and the allowed roots join.
 */
function safeModeProjector(settings: A2aServerSettings, cwd: string, env: NodeJS.ProcessEnv): PathProjector {
  const roots = [
    cwd,
    os.tmpdir(),
    configDir(env),
    settings.persistenceDir,
    settings.artifactDir,
    PACKAGE_ROOT,
  ];
  // Both spellings: a symlinked temp dir (macOS /var → /private/var) appears either way.
  return new PathProjector([...roots, ...existingRoots(roots)]);
}

/** A JSON payload with its paths projected (a payload that is not JSON is projected as text). */
function projectJsonText(projector: PathProjector, payload: string): string {
  try {
    return JSON.stringify(projector.project(JSON.parse(payload) as unknown));
  } catch {
    return projector.projectText(payload);
  }
}

/** store: redis (ioredis is loaded here, on use). */
export async function openRedisStore(settings: A2aServerSettings, logger: Logger): Promise<RedisBackend> {
  const { openRedisBackend } = await import("./replicas/redis-backend.js");
  return openRedisBackend(settings.redisUrl ?? "", settings.contextLeaseMs, logger);
}

async function startWithState(
  settings: A2aServerSettings,
  deps: A2aServerDeps,
  logger: Logger,
  state: StateStore,
  push: Push | undefined,
  redis: RedisBackend | undefined,
  closeState: () => Promise<void>,
  projector: PathProjector | undefined,
): Promise<RunningA2aServer> {
  const env = deps.env ?? process.env;
  const cwd = deps.cwd ?? process.cwd();
  const auth = new Authenticator({
    token: settings.token,
    basicUsername: settings.basicUsername,
    basicPassword: settings.basicPassword,
    apiKey: settings.apiKey,
    apiKeyHeader: settings.apiKeyHeader,
  });
  const configuredRoots = existingRoots(
    settings.allowedCwds ?? rootList(env.IACCODE_A2A_ALLOWED_CWDS, defaultRoots(cwd)),
  );
  // trust-request-cwd: every absolute workspace lies under the filesystem root.
  const roots = settings.trustRequestCwd ? [path.parse(cwd).root] : configuredRoots;
  projector?.addRoots(configuredRoots);
  const mediaTypes = mediaTypesFromEnv(env, {
    text: settings.textMimeTypes,
    multimodal: settings.multimodalMimeTypes,
  });
  // eslint-disable-next-line prefer-const -- assigned once the listener knows its port; read lazily before that
  let cards: AgentCards | undefined;
  const getCards = (): AgentCards => {
    if (!cards) throw new Error("agent card requested before the server listens");
    return cards;
  };
  let waiting = 0;
  const metrics = new ServerMetrics({
    server: "a2a",
    interruptsWaiting: () => waiting,
    ...(push ? { pushQueueDepth: () => state.pushJobs.depth() } : {}),
    stateCommits: () => state.commits,
    processMetrics: deps.processMetrics,
  });
  const service = new A2AService({
    runtime: deps.runtime,
    state,
    artifactFiles: new FileArtifactStore(settings.artifactDir),
    logger,
    cards: getCards,
    thinkingExposure: settings.thinkingExposure,
    autoApprovePermissions: settings.autoApprovePermissions,
    requiredExtensions: settings.requiredExtensions,
    push: push?.configs,
    idleContextMs: settings.idleContextSeconds * 1000,
    defaultCwd: cwd,
    allowedRoots: roots,
    mediaTypes,
    turnObserver: {
      ended(turn) {
        metrics.turnSeconds.observe({ outcome: turn.code ?? turn.outcome }, turn.durationMs / 1000);
        metrics.countTokens(turn.usage);
      },
      waiting(delta) {
        waiting += delta;
      },
    },
    cluster: redis?.cluster,
    orphanSweepMs: redis && Math.max(250, Math.floor(redis.leaseMs / 2)),
    ...(projector ? { workspaceSeen: (workspace: string) => projector.addRoot(workspace) } : {}),
  });
  await service.recover();
  // The bindings and transports call the core through its metered (and in safe mode, projected) view.
  const core = meteredService(projector ? projectedService(service, projector) : service, metrics);
  push?.start();
  const served = isJsonRpcTransport(settings.transport)
    ? await startJsonRpcTransport(settings.transport, settings, {
        core: new JsonRpcCore(core, logger),
        auth,
        logger,
      }).then((transport) => servedByTransport(transport))
    : await listenHttp(settings, { deps, logger, state, service: core, metrics, auth, getCards });
  // The stdio, unix and redis-streams channels are guarded by their own means: the card shows no HTTP schemes.
  const cardAuth =
    isJsonRpcTransport(settings.transport) && !usesHttpAuth(settings.transport)
      ? new Authenticator({ apiKeyHeader: settings.apiKeyHeader })
      : auth;
  const { url, restUrl, grpcTarget } = served;
  const runtimeInfo = deps.runtime.info();
  const built = buildAgentCards({
    interfaces: served.interfaces,
    runtimeDetails: runtimeDetails({
      interfaces: served.interfaces,
      tls: served.tls,
      grpcSeparatePort: served.grpcSeparatePort,
      thinkingExposure: settings.thinkingExposure,
      pushNotifications: settings.push.enabled,
      autoApprovePermissions: settings.autoApprovePermissions,
      idleContextSeconds: settings.idleContextSeconds,
    }),
    pushNotifications: settings.push.enabled,
    thinkingExposure: settings.thinkingExposure,
    requiredExtensions: settings.requiredExtensions,
    mediaTypes,
    auth: cardAuth,
    ...(runtimeInfo.pipelines?.length
      ? { pipelines: { mode: runtimeInfo.mode ?? "normal", names: runtimeInfo.pipelines } }
      : {}),
  });
  cards = settings.signingSecret ? await signCards(built, { secret: settings.signingSecret }) : built;
  logger.info(
    {
      url,
      restUrl,
      grpcTarget,
      transport: settings.transport,
      tls: served.tls,
      persistenceDir: settings.persistenceDir,
      store: settings.store,
      ...(redis ? { redis: redactRedisUrl(settings.redisUrl ?? ""), replica: redis.replicaId } : {}),
      auth: auth.enabled,
    },
    "A2A server listening",
  );

  let closing: Promise<void> | undefined;
  return {
    url,
    restUrl,
    grpcTarget,
    host: settings.host,
    port: served.port,
    inputEnded: served.inputEnded,
    service,
    state,
    metrics,
    cards,
    flushStores: () => state.commit(),
    close() {
      closing ??= (async () => {
        // Stop accepting and let idle connections go; streams end when their turns are cancelled.
        const listenersClosed = served.close(2000);
        await service.close();
        await listenersClosed;
        await closeState();
        await flushTracing();
        logger.info("A2A server stopped");
      })();
      return closing;
    },
  };
}

/** What the listening part (HTTP/gRPC, or a custom transport) gives the rest of start-up. */
interface Served {
  url: string;
  restUrl?: string;
  grpcTarget: string;
  port: number;
  interfaces: Array<{ url: string; protocolBinding: string }>;
  tls: boolean;
  grpcSeparatePort: boolean;
  inputEnded?: Promise<void>;
  close(graceMs: number): Promise<void>;
}

function servedByTransport(transport: RunningTransport): Served {
  return {
    url: transport.url,
    grpcTarget:
      transport.interfaces[0].protocolBinding === "grpc-jsonrpc"
        ? transport.url.slice("grpc-jsonrpc://".length)
        : "",
    port: transport.port ?? 0,
    interfaces: transport.interfaces,
    tls: transport.tls,
    grpcSeparatePort: false,
    inputEnded: transport.inputEnded,
    close: (graceMs) => transport.close(graceMs),
  };
}

/** JSON-RPC, REST and gRPC on one port (transport http), or gRPC alone (transport grpc). */
async function listenHttp(
  settings: A2aServerSettings,
  parts: {
    deps: A2aServerDeps;
    logger: Logger;
    state: StateStore;
    service: A2AService;
    metrics: ServerMetrics;
    auth: Authenticator;
    getCards: () => AgentCards;
  },
): Promise<Served> {
  const { deps, logger, state, service, metrics, auth, getCards } = parts;
  const httpServed = settings.transport === "http";
  const app = buildHttpApp({
    service,
    metrics,
    auth,
    cards: getCards,
    runtimeInfo: () => deps.runtime.info(),
    ...(deps.runtime.readiness ? { readiness: () => deps.runtime.readiness!() } : {}),
    logger,
    routers: [
      createRestRouter({ core: service, auth, logger }),
      createPipelineStateRouter({
        runtime: deps.runtime,
        tasks: state.tasks,
        contexts: state.contexts,
        auth,
        exposure: { toolTrace: false, rawThinking: settings.thinkingExposure.includes("raw_thinking") },
      }),
      ...(deps.routers ?? []),
    ],
  });
  const koa = app.callback();
  const koaHandler: HttpHandler = (req, res) => void koa(req, res);
  // With transport grpc, and on a separate gRPC port, nothing but gRPC is answered.
  const notServed: HttpHandler = (_req, res) => {
    res.statusCode = 404;
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify({ error: "Not found: this listener only serves the A2A gRPC binding." }));
  };
  const grpc = tracedHttp("iac-code.a2a", createA2aGrpcHandler({ core: service, auth, logger }));
  const tls =
    settings.tlsCert && settings.tlsKey
      ? { cert: readFileSync(settings.tlsCert), key: readFileSync(settings.tlsKey) }
      : undefined;
  const grpcHost = settings.grpcHost ?? settings.host;
  const separateGrpc =
    httpServed &&
    ((settings.grpcPort !== undefined && (settings.grpcPort === 0 || settings.grpcPort !== settings.port)) ||
      grpcHost !== settings.host);
  const http = tracedHttp("iac-code.a2a", httpServed ? koaHandler : notServed);
  const listener = await listenOnePort({
    host: httpServed ? settings.host : grpcHost,
    port: httpServed ? settings.port : (settings.grpcPort ?? settings.port),
    http1: http,
    http2: separateGrpc ? http : splitGrpc(grpc, http),
    tls,
    timeouts: settings.timeouts,
  });
  let grpcListener: OnePortListener | undefined;
  if (separateGrpc) {
    try {
      grpcListener = await listenOnePort({
        host: grpcHost,
        port: settings.grpcPort ?? 0,
        http1: notServed,
        http2: splitGrpc(grpc, notServed),
        tls,
        timeouts: settings.timeouts,
      });
    } catch (error) {
      await listener.close(0);
      throw error;
    }
  }
  const urlHost = (host: string): string => (host.includes(":") ? `[${host}]` : host);
  const scheme = tls ? "https" : "http";
  const base = `${scheme}://${urlHost(settings.host)}:${listener.port}`;
  const grpcTarget = grpcListener
    ? `${urlHost(grpcHost)}:${grpcListener.port}`
    : `${urlHost(listener.host)}:${listener.port}`;
  const restUrl = httpServed ? base : undefined;
  const url = httpServed ? `${base}/` : grpcTarget;
  const extraInterfaces = [
    ...(restUrl ? [{ url: restUrl, protocolBinding: "HTTP+JSON" }] : []),
    { url: grpcTarget, protocolBinding: "GRPC" },
  ];
  return {
    url,
    restUrl,
    grpcTarget,
    port: listener.port,
    interfaces: [...(httpServed ? [{ url, protocolBinding: "JSONRPC" }] : []), ...extraInterfaces],
    tls: Boolean(tls),
    grpcSeparatePort: Boolean(grpcListener),
    close: async (graceMs) => {
      await Promise.all([listener.close(graceMs), grpcListener?.close(graceMs)]);
    },
  };
}
