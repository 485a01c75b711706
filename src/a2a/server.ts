// Starts the A2A server: state store (which takes the persistence dir for
// this process), recovery of tasks a previous process left running, service
// core, Koa app and listener. Returns the URL and a close() that stops
// accepting, cancels running turns, commits and closes the store and destroys
// open sockets.
// JSON-RPC, REST and gRPC share one port (HTTP/2 preface sniffing, or ALPN with
// TLS) unless grpc-port asks for a separate gRPC listener.
import { readFileSync } from "node:fs";
import type { Router } from "@koa/router";
import type { Logger } from "pino";
import type { AgentRuntime } from "../runtime/seam.js";
import type { A2aServerSettings } from "../server/config.js";
import { createLogger } from "../server/logger.js";
import { redactRedisUrl } from "../server/redis.js";
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
import { createPipelineStateRouter } from "./pipeline-state.js";
import { FileArtifactStore } from "./stores/artifact-store.js";
import { openRedisBackend, type RedisBackend } from "./replicas/redis-backend.js";
import { SqliteStateStore } from "./stores/sqlite-state.js";
import type { StateStore } from "./stores/state.js";

export interface A2aServerDeps {
  runtime: AgentRuntime;
  logger?: Logger;
  /** Server process cwd stand-in (default workspace and allowed root). */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Extra routers mounted on the same app (REST binding...). */
  routers?: Router<A2aState>[];
  /** store: redis, opened already (the runtime's sessions go through it); else opened here. */
  redis?: RedisBackend;
}

export interface RunningA2aServer {
  /** JSON-RPC endpoint, e.g. http://127.0.0.1:41242/ (with transport grpc: the gRPC target). */
  url: string;
  /** HTTP+JSON base URL, when served. */
  restUrl?: string;
  /** gRPC target host:port. */
  grpcTarget: string;
  host: string;
  port: number;
  service: A2AService;
  /** The state store (tests and ops read the permission audit through it). */
  state: StateStore;
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
  const redis =
    settings.store === "redis"
      ? (deps.redis ?? (await openRedisBackend(settings.redisUrl ?? "", settings.contextLeaseMs, logger)))
      : undefined;
  const state: StateStore =
    redis?.state ??
    SqliteStateStore.open({
      dir: settings.persistenceDir,
      syncEveryCommit: settings.syncEveryCommit,
      logger,
    });
  const closeState = async () => {
    await state.close();
    await redis?.close();
  };
  try {
    return await startWithState(settings, deps, logger, state, redis, closeState);
  } catch (error) {
    await closeState();
    throw error;
  }
}

async function startWithState(
  settings: A2aServerSettings,
  deps: A2aServerDeps,
  logger: Logger,
  state: StateStore,
  redis: RedisBackend | undefined,
  closeState: () => Promise<void>,
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
  const roots = existingRoots(
    settings.allowedCwds ?? rootList(env.IACCODE_A2A_ALLOWED_CWDS, defaultRoots(cwd)),
  );
  const mediaTypes = mediaTypesFromEnv(env);
  // eslint-disable-next-line prefer-const -- assigned once the listener knows its port; read lazily before that
  let cards: AgentCards | undefined;
  const getCards = (): AgentCards => {
    if (!cards) throw new Error("agent card requested before the server listens");
    return cards;
  };
  const service = new A2AService({
    runtime: deps.runtime,
    state,
    artifactFiles: new FileArtifactStore(settings.artifactDir),
    logger,
    cards: getCards,
    thinkingExposure: settings.thinkingExposure,
    autoApprovePermissions: settings.autoApprovePermissions,
    requiredExtensions: settings.requiredExtensions,
    pushNotifications: settings.pushNotifications,
    idleContextMs: settings.idleContextSeconds * 1000,
    defaultCwd: cwd,
    allowedRoots: roots,
    mediaTypes,
    cluster: redis?.cluster,
    orphanSweepMs: redis && Math.max(250, Math.floor(redis.leaseMs / 2)),
  });
  await service.recover();
  const httpServed = settings.transport === "http";
  const app = buildHttpApp({
    service,
    auth,
    cards: getCards,
    runtimeInfo: () => deps.runtime.info(),
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
  const grpc = createA2aGrpcHandler({ core: service, auth, logger });
  const tls =
    settings.tlsCert && settings.tlsKey
      ? { cert: readFileSync(settings.tlsCert), key: readFileSync(settings.tlsKey) }
      : undefined;
  const grpcHost = settings.grpcHost ?? settings.host;
  const separateGrpc =
    httpServed &&
    ((settings.grpcPort !== undefined && (settings.grpcPort === 0 || settings.grpcPort !== settings.port)) ||
      grpcHost !== settings.host);
  const http = httpServed ? koaHandler : notServed;
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
  const runtimeInfo = deps.runtime.info();
  const built = buildAgentCards({
    jsonRpcUrl: httpServed ? url : undefined,
    extraInterfaces,
    runtimeDetails: runtimeDetails({
      interfaces: [...(httpServed ? [{ url, protocolBinding: "JSONRPC" }] : []), ...extraInterfaces],
      tls: Boolean(tls),
      grpcSeparatePort: Boolean(grpcListener),
      thinkingExposure: settings.thinkingExposure,
      pushNotifications: settings.pushNotifications,
      autoApprovePermissions: settings.autoApprovePermissions,
      idleContextSeconds: settings.idleContextSeconds,
    }),
    pushNotifications: settings.pushNotifications,
    thinkingExposure: settings.thinkingExposure,
    requiredExtensions: settings.requiredExtensions,
    mediaTypes,
    auth,
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
      tls: Boolean(tls),
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
    port: listener.port,
    service,
    state,
    cards,
    flushStores: () => state.commit(),
    close() {
      closing ??= (async () => {
        // Stop accepting and let idle connections go; streams end when their turns are cancelled.
        const listenersClosed = Promise.all([listener.close(2000), grpcListener?.close(2000)]);
        await service.close();
        await listenersClosed;
        await closeState();
        logger.info("A2A server stopped");
      })();
      return closing;
    },
  };
}
