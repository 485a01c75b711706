// Starts the A2A server: state store (which takes the persistence dir for
// this process), recovery of tasks a previous process left running, service
// core, Koa app and listener. Returns the URL and a close() that stops
// accepting, cancels running turns, commits and closes the store and destroys
// open sockets.
// Where it listens: listeners.ts; safe mode's path projection: safe-mode-service.ts.
import path from "node:path";
import type { Router } from "@koa/router";
import type { Logger } from "pino";
import type { AgentRuntime } from "../runtime/seam.js";
import type { A2aServerSettings } from "./config/server-settings.js";
import { createLogger } from "../server/logger.js";
import { flushTracing, startTracing } from "../server/tracing/index.js";
import { defaultChannel, ServerMetrics } from "../server/metrics.js";
import { redactRedisUrl } from "../server/redis-url.js";
import { runtimeDetails } from "./bindings/runtime-details.js";
import { signCards } from "./signing/sign-cards.js";
import { Authenticator } from "./core/request/auth.js";
import { buildAgentCards, type AgentCards } from "./core/card.js";
import { mediaTypesFromEnv } from "./core/incoming-message/parts.js";
import { A2AService } from "./core/service.js";
import { defaultRoots, defaultWorkspace, existingRoots, rootList } from "../server/workspace-roots.js";
import type { PathProjector } from "./core/path-projection.js";
import type { A2aState } from "./http-app.js";
import { listenHttp, servedByTransport } from "./listeners.js";
import { meteredService } from "./metered-service.js";
import { projectedService, projectJsonText, safeModeProjector } from "./safe-mode-service.js";
import { openPush, type Push } from "./push/index.js";
import type { Resolver } from "./push/url-policy.js";
import { FileArtifactStore } from "./stores/artifact-store.js";
import { JsonRpcCore } from "./bindings/jsonrpc-core.js";
import { isJsonRpcTransport, startJsonRpcTransport, usesHttpAuth } from "./transports/index.js";
import type { RedisBackend } from "./replicas/redis-backend.js";
import type { StateStore } from "./stores/state.js";
import { backupSettingsFromEnv, SessionBackups } from "./stores/session-backup.js";
import { createSessionRestoreRouter } from "./session-restore.js";

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
  await startTracing(deps.env ?? process.env, "a2a");
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
  // The settings' token, basic-username/-password, api-key and api-key-header.
  const auth = new Authenticator(settings, (error) =>
    logger.warn(
      { err: error instanceof Error ? error.message : String(error), jwksUrl: settings.jwt?.jwksUrl },
      "the identity provider's key set (auth-jwks-url) could not be fetched",
    ),
  );
  const listed = settings.allowedCwds ?? rootList(env.IACCODE_A2A_ALLOWED_CWDS, []);
  const configuredRoots = existingRoots(listed.length > 0 ? listed : defaultRoots(cwd, env));
  // A message without a cwd works in <config-dir>/workspace when that is an allowed root (the
  // default roots), else in the server's working directory; a caller's deps.cwd wins.
  const workspace = existingRoots([defaultWorkspace(env)])[0];
  const defaultCwd =
    deps.cwd === undefined && workspace !== undefined && configuredRoots.includes(workspace)
      ? workspace
      : cwd;
  // trust-request-cwd: every absolute workspace lies under the filesystem root.
  const roots = settings.trustRequestCwd ? [path.parse(cwd).root] : configuredRoots;
  projector?.addRoots(configuredRoots);
  // IAC_CODE_CONFIG_BACKUP_DIR (+ _TMP_DIR): session backups (stores/session-backup.ts).
  const backupSettings = backupSettingsFromEnv(env);
  const backups = backupSettings && new SessionBackups(backupSettings, state, logger);
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
    defaultCwd,
    allowedRoots: roots,
    mediaTypes,
    defaultChannel: defaultChannel(env),
    turnObserver: {
      ended(turn) {
        metrics.observeTurn(turn.code ?? turn.outcome, turn.channel, turn.durationMs / 1000);
        metrics.countTokens(turn.usage, turn.channel);
      },
      waiting(delta) {
        waiting += delta;
      },
    },
    cluster: redis?.cluster,
    orphanSweepMs: redis && Math.max(250, Math.floor(redis.leaseMs / 2)),
    ...(projector ? { workspaceSeen: (workspace: string) => projector.addRoot(workspace) } : {}),
    ...(backups ? { backups } : {}),
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
    : await listenHttp(settings, {
        runtime: deps.runtime,
        routers: [
          createSessionRestoreRouter({ tasks: state.tasks, contexts: state.contexts, auth, backups }),
          ...(deps.routers ?? []),
        ],
        logger,
        state,
        service: core,
        metrics,
        auth,
        getCards,
      });
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
      ...(backupSettings ? { backupDir: backupSettings.dir } : {}),
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
