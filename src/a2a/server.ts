// Starts the A2A server: stores, service core, Koa app and listener. Returns
// the URL and a close() that stops accepting, cancels running turns, flushes
// the stores and destroys open sockets. Later transports plug in here.
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Router } from "@koa/router";
import type { Logger } from "pino";
import type { AgentRuntime } from "../runtime/seam.js";
import type { A2aServerSettings } from "../server/config.js";
import { createLogger } from "../server/logger.js";
import { listenHttp } from "../server/listener.js";
import { Authenticator } from "./core/auth.js";
import { buildAgentCards, type AgentCards } from "./core/card.js";
import { mediaTypesFromEnv } from "./core/parts.js";
import { A2AService } from "./core/service.js";
import { allowedRootsFromEnv } from "./core/workspace.js";
import { buildHttpApp, type A2aState } from "./http-app.js";
import { FileArtifactStore } from "./stores/artifact-store.js";
import { FileContextStore } from "./stores/context-store.js";
import { FileTaskStore } from "./stores/task-store.js";

export interface A2aServerDeps {
  runtime: AgentRuntime;
  logger?: Logger;
  /** Server process cwd stand-in (default workspace and allowed root). */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Extra routers mounted on the same app (REST binding...). */
  routers?: Router<A2aState>[];
}

export interface RunningA2aServer {
  /** JSON-RPC endpoint, e.g. http://127.0.0.1:41242/ */
  url: string;
  host: string;
  port: number;
  service: A2AService;
  cards: AgentCards;
  close(): Promise<void>;
}

export async function startA2aServer(
  settings: A2aServerSettings,
  deps: A2aServerDeps,
): Promise<RunningA2aServer> {
  const logger = deps.logger ?? createLogger({ debug: settings.debug, logToStdout: settings.logToStdout });
  const env = deps.env ?? process.env;
  const cwd = deps.cwd ?? process.cwd();
  mkdirSync(settings.persistenceDir, { recursive: true, mode: 0o700 });
  const onCorrupt = (report: { file: string; reason: string }) =>
    logger.warn({ file: report.file, reason: report.reason }, "corrupt persisted file skipped");
  const tasks = await FileTaskStore.open(settings.persistenceDir, onCorrupt);
  const contexts = await FileContextStore.open(settings.persistenceDir, onCorrupt);
  const artifacts = new FileArtifactStore(settings.artifactDir);
  const auth = new Authenticator({
    token: settings.token,
    basicUsername: settings.basicUsername,
    basicPassword: settings.basicPassword,
    apiKey: settings.apiKey,
    apiKeyHeader: settings.apiKeyHeader,
  });
  const roots = settings.allowedCwds
    ? allowedRootsFromEnv({ IACCODE_A2A_ALLOWED_CWDS: settings.allowedCwds.join(path.delimiter) }, cwd)
    : allowedRootsFromEnv(env, cwd);
  const mediaTypes = mediaTypesFromEnv(env);
  let cards: AgentCards | undefined;
  const getCards = (): AgentCards => {
    if (!cards) throw new Error("agent card requested before the server listens");
    return cards;
  };
  const service = new A2AService({
    runtime: deps.runtime,
    tasks,
    contexts,
    artifacts,
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
    auditFile: path.join(settings.persistenceDir, "permission-audit.jsonl"),
  });
  const app = buildHttpApp({
    service,
    auth,
    cards: getCards,
    runtimeInfo: () => deps.runtime.info(),
    logger,
    routers: deps.routers,
  });
  const listener = await listenHttp(app.callback(), settings.host, settings.port);
  const hostForUrl = settings.host.includes(":") ? `[${settings.host}]` : settings.host;
  const url = `http://${hostForUrl}:${listener.port}/`;
  cards = buildAgentCards({
    jsonRpcUrl: url,
    pushNotifications: settings.pushNotifications,
    thinkingExposure: settings.thinkingExposure,
    requiredExtensions: settings.requiredExtensions,
    mediaTypes,
    auth,
  });
  logger.info({ url, persistenceDir: settings.persistenceDir, auth: auth.enabled }, "A2A server listening");

  let closing: Promise<void> | undefined;
  return {
    url,
    host: settings.host,
    port: listener.port,
    service,
    cards,
    close() {
      closing ??= (async () => {
        listener.server.close();
        await service.close();
        await listener.close();
        logger.info("A2A server stopped");
      })();
      return closing;
    },
  };
}
