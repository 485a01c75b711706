// Server configuration of `iac-code a2a`: the settings table
// (src/a2a/config/settings-table.ts) merges the command line, the YAML file
// (validated by the config/a2a-server schema) and the environment into one
// config object (command line > file > environment > default), which is then
// turned into the settings the server runs with.
import path from "node:path";
import { schemaIndex, type A2AServerConfig } from "../../contract/index.js";
import {
  A2A_SETTINGS,
  normaliseTransport,
  parseThinkingExposure,
  type ThinkingType,
} from "./settings-table.js";
import { type LogFormat } from "../../server/logger.js";
import { configDir, expandPath } from "../../server/paths.js";
import { ConfigError, type CliValues } from "../../server/settings.js";
import { loadConfigFile as loadFile, mergeSettings } from "../../server/settings-merge.js";
import { resolveTimeouts, type ServerTimeouts } from "../../server/timeouts.js";
import {
  checkTransport,
  resolveTransportSettings,
  type TransportName,
  type TransportSettings,
} from "./transport-settings.js";
import { KEYRING_ENV } from "../push/keyring.js";
import { resolvePushSettings, type PushSettings } from "./push-settings.js";
import { jwtSettingsOf, type JwtSettings } from "../../server/jwt-auth.js";

export { ConfigError } from "../../server/settings.js";
export { normaliseTransport, parseThinkingExposure, type ThinkingType } from "./settings-table.js";

const CONTRACT = schemaIndex["config/a2a-server"];

export interface A2aServerSettings extends TransportSettings {
  host: string;
  port: number;
  /**
   * http: JSON-RPC, REST and gRPC on one port; grpc: the gRPC binding only;
   * the others carry JSON-RPC (src/a2a/transports/).
   */
  transport: TransportName;
  thinkingExposure: ThinkingType[];
  debug: boolean;
  logToStdout: boolean;
  /** --log-format / log-format / IACCODE_A2A_LOG_FORMAT; undefined: pretty on a terminal, else JSON. */
  logFormat?: LogFormat;
  token?: string;
  basicUsername?: string;
  basicPassword?: string;
  apiKey?: string;
  apiKeyHeader: string;
  /** auth-jwks-url, auth-issuer, auth-audience: bearer JWTs of an identity provider. */
  jwt?: JwtSettings;
  persistenceDir: string;
  /** fsync every state commit (synchronous=FULL): commits also survive a power loss. */
  syncEveryCommit: boolean;
  artifactDir: string;
  /** Push notifications: the config methods, the queue and the callback policy. */
  push: PushSettings;
  autoApprovePermissions: boolean;
  idleContextSeconds: number;
  /** Workspace roots; undefined = IACCODE_A2A_ALLOWED_CWDS or the defaults. */
  allowedCwds?: string[];
  /** Any absolute metadata.iac_code.cwd is accepted (the allowed roots are not checked). */
  trustRequestCwd: boolean;
  /** Server paths projected to [PATH] on every wire; the restricted tool set; no MCP. */
  safeMode: boolean;
  requiredExtensions: string[];
  /** Extra media types accepted as text / multimodal parts (undefined: IACCODE_A2A_* of the server's env). */
  textMimeTypes?: string[];
  multimodalMimeTypes?: string[];
  provider?: string;
  model?: string;
  baseUrl?: string;
  script?: string;
  /** The MCP servers file (default: IAC_CODE_MCP_CONFIG, else <config-dir>/mcp.json). */
  mcpConfig?: string;
  /** Run mode of requests that choose none (default: IAC_CODE_MODE, else normal) and their pipeline. */
  mode?: "normal" | "pipeline";
  pipelineName?: string;
  /** HMAC secret: the agent card is signed with JWS HS256 (kid "default"). */
  signingSecret?: string;
  /** PEM certificate and key files; with both, the listeners use TLS. */
  tlsCert?: string;
  tlsKey?: string;
  /** gRPC on its own listener (default: gRPC shares the main port). */
  grpcHost?: string;
  grpcPort?: number;
  /** Headers, request, keep-alive and shutdown limits. */
  timeouts: ServerTimeouts;
  /** sqlite: the embedded store under persistence-dir; redis: the shared store of every replica. */
  store: "sqlite" | "redis";
  /** Redis URL (store: redis); may hold a password: never logged. */
  redisUrl?: string;
  /** store: redis: how long a context's lease outlives a replica that stopped renewing it. */
  contextLeaseMs: number;
}

/** Reads and validates a2a-server.yml; keys may use - or _; errors name the file, line and column. */
export function loadConfigFile(file: string): A2AServerConfig {
  return loadFile(file, CONTRACT);
}

const nonEmpty = (v: string | undefined): string | undefined => (v !== undefined && v !== "" ? v : undefined);

/** Process idle shutdown is not in this version: refused at start-up rather than silently ignored. */
function refuseUnavailable(config: A2AServerConfig): void {
  if ((config["idle-shutdown-seconds"] ?? 0) > 0) {
    throw new ConfigError(
      "Not available in this version of iac-code: idle-shutdown-seconds. Remove this setting from the config file.",
    );
  }
}

/**
 * The custom transports' settings, and what the chosen transport needs. Auth
 * given in the file or on the command line is refused where the channel has its
 * own guard (stdio, unix, redis-streams); the IACCODE_A2A_* auth variables are
 * ignored there, since the client reads the same variables.
 */
function transportSettingsOf(
  transport: TransportName,
  config: A2AServerConfig,
  given: { file: A2AServerConfig; cli: CliValues },
): TransportSettings {
  try {
    const settings = resolveTransportSettings(config);
    const authKeys = [
      "token",
      "basic-username",
      "basic-password",
      "api-key",
      "auth-jwks-url",
      "auth-issuer",
      "auth-audience",
    ] as const;
    checkTransport(transport, settings, {
      logToStdout: config["log-to-stdout"] ?? false,
      authInFile: authKeys.filter(
        (key) => nonEmpty(given.file[key]) !== undefined || given.cli[key] !== undefined,
      ),
    });
    return settings;
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

function pushOf(config: A2AServerConfig): PushSettings {
  try {
    return resolvePushSettings(config);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

function timeoutsOf(config: A2AServerConfig): ServerTimeouts {
  try {
    return resolveTimeouts((key) => config[key]);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

/** store, redis-url and context-lease-seconds (several replicas on one Redis: docs/deploy.md). */
function storeSettings(
  config: A2AServerConfig,
  env: NodeJS.ProcessEnv,
): Pick<A2aServerSettings, "store" | "contextLeaseMs"> {
  const store = config.store ?? "sqlite";
  if (store === "redis" && config["redis-url"] === undefined) {
    throw new ConfigError(
      "store: redis needs redis-url (--redis-url, the redis-url key or IACCODE_A2A_REDIS_URL).",
    );
  }
  // Any replica delivers any job: a keyring file of one replica would leave the others unable to open it.
  if (store === "redis" && config["push-notifications"] && !env[KEYRING_ENV]?.trim()) {
    throw new ConfigError(
      `push-notifications with store: redis needs ${KEYRING_ENV}, the same keyring on every replica (any replica delivers the jobs of the others).`,
    );
  }
  return { store, contextLeaseMs: Math.round((config["context-lease-seconds"] ?? 15) * 1000) };
}

const pathList = (list: string[] | undefined, env: NodeJS.ProcessEnv) => list?.map((p) => expandPath(p, env));

/**
 * The settings from a loaded config file, the command line (values by config
 * key) and the environment: command line > file > environment > default.
 */
export function resolveSettings(
  file: A2AServerConfig,
  cli: CliValues = {},
  env: NodeJS.ProcessEnv = process.env,
): A2aServerSettings {
  const config = mergeSettings(A2A_SETTINGS, { cli, file, env, contract: CONTRACT }) as A2AServerConfig;
  refuseUnavailable(config);
  const persistenceDir = path.resolve(
    expandPath(config["persistence-dir"] ?? path.join(configDir(env), "a2a"), env),
  );
  const transport = normaliseTransport(config.transport ?? "http");
  return {
    host: config.host ?? "127.0.0.1",
    port: config.port ?? 41242,
    transport,
    ...transportSettingsOf(transport, config, { file, cli }),
    thinkingExposure: parseThinkingExposure(config["thinking-exposure"]),
    debug: config.debug ?? false,
    logToStdout: config["log-to-stdout"] ?? false,
    logFormat: config["log-format"],
    token: nonEmpty(config.token),
    basicUsername: nonEmpty(config["basic-username"]),
    basicPassword: nonEmpty(config["basic-password"]),
    apiKey: nonEmpty(config["api-key"]),
    apiKeyHeader: nonEmpty(config["api-key-header"]) ?? "X-API-Key",
    jwt: jwtSettingsOf(config),
    persistenceDir,
    syncEveryCommit: config["sync-every-commit"] ?? false,
    artifactDir: path.resolve(
      expandPath(config["artifact-dir"] ?? path.join(persistenceDir, "artifacts"), env),
    ),
    push: pushOf(config),
    autoApprovePermissions: config["auto-approve-permissions"] ?? false,
    idleContextSeconds: config["idle-context-seconds"] ?? 3600,
    allowedCwds: pathList(config["allowed-cwds"], env),
    trustRequestCwd: config["trust-request-cwd"] ?? false,
    safeMode: config["safe-mode"] ?? false,
    requiredExtensions: config["required-extensions"] ?? [],
    textMimeTypes: config["text-mime-types"],
    multimodalMimeTypes: config["multimodal-mime-types"],
    provider: config.provider,
    model: config.model,
    baseUrl: config["base-url"],
    script: config.script,
    mcpConfig: config["mcp-config"],
    mode: config.mode,
    pipelineName: config["pipeline-name"],
    signingSecret: nonEmpty(config["signing-secret"]),
    tlsCert: config["tls-cert"] ? path.resolve(expandPath(config["tls-cert"], env)) : undefined,
    tlsKey: config["tls-key"] ? path.resolve(expandPath(config["tls-key"], env)) : undefined,
    grpcHost: config["grpc-host"],
    grpcPort: config["grpc-port"],
    ...storeSettings(config, env),
    timeouts: timeoutsOf(config),
  };
}
