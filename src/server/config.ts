// Server configuration: the YAML file (validated by the config/a2a-server
// schema), the command line, and the IACCODE_A2A_* environment fallbacks,
// merged into one settings object. Precedence: explicit CLI option > file >
// environment > default.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { parseA2AServerConfig, type A2AServerConfig } from "../contract/index.js";
import { configDir, expandPath } from "./paths.js";
import { resolveTimeouts, type ServerTimeouts, type TimeoutKey } from "./timeouts.js";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export type ThinkingType = "tool_trace" | "raw_thinking";

export interface A2aServerSettings {
  host: string;
  port: number;
  /** http: JSON-RPC, REST and gRPC on one port; grpc: the gRPC binding only. */
  transport: "http" | "grpc";
  thinkingExposure: ThinkingType[];
  debug: boolean;
  logToStdout: boolean;
  token?: string;
  basicUsername?: string;
  basicPassword?: string;
  apiKey?: string;
  apiKeyHeader: string;
  persistenceDir: string;
  /** fsync every state commit (synchronous=FULL): commits also survive a power loss. */
  syncEveryCommit: boolean;
  artifactDir: string;
  pushNotifications: boolean;
  autoApprovePermissions: boolean;
  idleContextSeconds: number;
  /** Workspace roots; undefined = IACCODE_A2A_ALLOWED_CWDS or the defaults. */
  allowedCwds?: string[];
  requiredExtensions: string[];
  provider?: string;
  model?: string;
  baseUrl?: string;
  script?: string;
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

/** Values given on the command line (undefined = not given). */
export interface CliOverrides {
  host?: string;
  port?: number;
  transport?: string;
  thinkingExposure?: string[];
  debug?: boolean;
  logToStdout?: boolean;
  /** --headers-timeout-seconds and the other timeout flags, by config key. */
  timeouts?: Partial<Record<TimeoutKey, string>>;
  syncEveryCommit?: boolean;
  store?: string;
  redisUrl?: string;
  contextLeaseSeconds?: string;
}

function normaliseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normaliseKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        k.replace(/_/g, "-"),
        normaliseKeys(v),
      ]),
    );
  }
  return value;
}

/** Reads and validates a YAML (or JSON) config file; keys may use - or _. */
export function loadConfigFile(file: string): A2AServerConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(
      `Cannot read A2A config file ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  let data: unknown;
  try {
    data = parseYaml(text) as unknown;
  } catch (error) {
    throw new ConfigError(`A2A config file is not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== "object" || Array.isArray(data))
    throw new ConfigError("A2A config file must contain a YAML mapping.");
  return validateConfig(normaliseKeys(data));
}

export function validateConfig(data: unknown): A2AServerConfig {
  const parsed = parseA2AServerConfig(data);
  if (!parsed.ok) {
    const details = parsed.errors.map((e) => `${e.path} ${e.message}`).join("; ");
    throw new ConfigError(`Invalid A2A config: ${details}`);
  }
  return parsed.value;
}

const TRANSPORT_ALIASES: Record<string, string> = {
  jsonrpc: "http",
  "json-rpc": "http",
  "http+jsonrpc": "http",
  "http-jsonrpc": "http",
  https: "http",
  grpcs: "grpc",
  "grpc+jsonrpc": "grpc-jsonrpc",
  ws: "websocket",
  wss: "websocket",
  redis: "redis-streams",
  "redis-stream": "redis-streams",
};
const KNOWN_TRANSPORTS = ["grpc", "grpc-jsonrpc", "http", "redis-streams", "stdio", "unix", "websocket"];

export function normaliseTransport(value: string): "http" | "grpc" {
  const lowered = value.trim().toLowerCase().replace(/_/g, "-");
  const canonical = TRANSPORT_ALIASES[lowered] ?? lowered;
  if (!KNOWN_TRANSPORTS.includes(canonical)) {
    throw new ConfigError(
      `Unsupported transport '${value}'. Supported values: ${KNOWN_TRANSPORTS.join(", ")}`,
    );
  }
  if (canonical !== "http" && canonical !== "grpc") {
    throw new ConfigError(
      `Transport '${canonical}' is not available in this version of iac-code; use --transport http or grpc.`,
    );
  }
  return canonical;
}

/** tool-trace / raw-thinking tokens; all/* = both; none/off/false/0 = nothing; unset = tool-trace. */
export function parseThinkingExposure(value: string | string[] | undefined): ThinkingType[] {
  if (value === undefined) return ["tool_trace"];
  const tokens = (Array.isArray(value) ? value : [value])
    .flatMap((v) => v.split(/[,;]/))
    .map((t) => t.trim().toLowerCase().replace(/-/g, "_"));
  const enabled = new Set<ThinkingType>();
  for (const token of tokens) {
    if (["", "none", "off", "false", "0"].includes(token)) continue;
    if (token === "all" || token === "*") {
      enabled.add("raw_thinking").add("tool_trace");
    } else if (token === "tool_trace" || token === "raw_thinking") {
      enabled.add(token);
    } else {
      throw new ConfigError(
        `Unsupported A2A thinking exposure type '${token}'. Supported values: raw-thinking, tool-trace.`,
      );
    }
  }
  return (["raw_thinking", "tool_trace"] as const).filter((t) => enabled.has(t));
}

const nonEmpty = (v: string | undefined): string | undefined => (v !== undefined && v !== "" ? v : undefined);

/** A boolean environment variable (1/true/yes/on, 0/false/no/off); undefined when unset or empty. */
function envFlag(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const value = env[name]?.trim().toLowerCase();
  if (!value) return undefined;
  if (["1", "true", "yes", "on"].includes(value)) return true;
  if (["0", "false", "no", "off"].includes(value)) return false;
  throw new ConfigError(`Invalid ${name} '${env[name]}': expected true or false.`);
}

/**
 * Config keys of features this version does not have (push delivery, the
 * custom transports, process idle shutdown). Setting one is
 * refused at start-up rather than silently ignored or half-advertised.
 */
const UNAVAILABLE_KEYS = [
  "push-queue",
  "push-redis-url",
  "push-stream",
  "push-retry-key",
  "push-dead-stream",
  "push-consumer-group",
  "push-consumer-name",
  "push-lease-timeout-ms",
  "socket-path",
  "ws-path",
  "request-stream",
  "response-stream",
  "consumer-group",
] as const;

function refuseUnavailable(file: A2AServerConfig): void {
  const unavailable: string[] = UNAVAILABLE_KEYS.filter((key) => file[key] !== undefined);
  if (file["push-notifications"] === true) unavailable.unshift("push-notifications: true");
  if ((file["idle-shutdown-seconds"] ?? 0) > 0) unavailable.push("idle-shutdown-seconds");
  if (unavailable.length > 0) {
    throw new ConfigError(
      `Not available in this version of iac-code: ${unavailable.join(", ")}. Remove ${
        unavailable.length > 1 ? "these settings" : "this setting"
      } from the config file.`,
    );
  }
}

function timeoutsOf(file: A2AServerConfig, cli: CliOverrides, env: NodeJS.ProcessEnv): ServerTimeouts {
  try {
    return resolveTimeouts(
      (key, envSuffix) => cli.timeouts?.[key] ?? file[key] ?? nonEmpty(env[`IACCODE_A2A_${envSuffix}`]),
    );
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

// ---- store, redis-url, context-lease-seconds (issue 15: replicas on one Redis) ----

function storeSettings(
  file: A2AServerConfig,
  cli: CliOverrides,
  env: NodeJS.ProcessEnv,
): Pick<A2aServerSettings, "store" | "redisUrl" | "contextLeaseMs"> {
  const store = (cli.store ?? file.store ?? nonEmpty(env.IACCODE_A2A_STORE) ?? "sqlite").trim().toLowerCase();
  if (store !== "sqlite" && store !== "redis") {
    throw new ConfigError(
      `Invalid store '${store}' (--store / store / IACCODE_A2A_STORE): expected sqlite or redis.`,
    );
  }
  const redisUrl =
    nonEmpty(cli.redisUrl) ?? nonEmpty(file["redis-url"]) ?? nonEmpty(env.IACCODE_A2A_REDIS_URL);
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError(
      "Invalid redis-url (--redis-url / redis-url / IACCODE_A2A_REDIS_URL): expected a redis:// or rediss:// URL.",
    );
  }
  if (store === "redis" && redisUrl === undefined) {
    throw new ConfigError(
      "store: redis needs redis-url (--redis-url, the redis-url key or IACCODE_A2A_REDIS_URL).",
    );
  }
  const leaseRaw =
    cli.contextLeaseSeconds ??
    file["context-lease-seconds"] ??
    nonEmpty(env.IACCODE_A2A_CONTEXT_LEASE_SECONDS);
  const lease = leaseRaw === undefined ? 15 : Number(leaseRaw);
  if (!Number.isFinite(lease) || lease < 1 || lease > 3600 || String(leaseRaw).trim() === "") {
    throw new ConfigError(
      `Invalid context-lease-seconds '${String(leaseRaw)}' (--context-lease-seconds / context-lease-seconds / IACCODE_A2A_CONTEXT_LEASE_SECONDS): expected a number of seconds from 1 to 3600.`,
    );
  }
  return { store, redisUrl, contextLeaseMs: Math.round(lease * 1000) };
}

export function resolveSettings(
  file: A2AServerConfig,
  cli: CliOverrides = {},
  env: NodeJS.ProcessEnv = process.env,
): A2aServerSettings {
  refuseUnavailable(file);
  const persistenceDir = path.resolve(
    expandPath(file["persistence-dir"] ?? path.join(configDir(env), "a2a")),
  );
  const settings: A2aServerSettings = {
    host: cli.host ?? file.host ?? "127.0.0.1",
    port: cli.port ?? file.port ?? 41242,
    transport: normaliseTransport(cli.transport ?? file.transport ?? "http"),
    thinkingExposure: parseThinkingExposure(cli.thinkingExposure ?? file["thinking-exposure"]),
    debug: cli.debug ?? file.debug ?? false,
    logToStdout: cli.logToStdout ?? file["log-to-stdout"] ?? false,
    token: nonEmpty(file.token) ?? nonEmpty(env.IACCODE_A2A_HTTP_TOKEN),
    basicUsername: nonEmpty(file["basic-username"]) ?? nonEmpty(env.IACCODE_A2A_BASIC_USERNAME),
    basicPassword: nonEmpty(file["basic-password"]) ?? nonEmpty(env.IACCODE_A2A_BASIC_PASSWORD),
    apiKey: nonEmpty(file["api-key"]) ?? nonEmpty(env.IACCODE_A2A_API_KEY),
    apiKeyHeader: nonEmpty(file["api-key-header"]) ?? nonEmpty(env.IACCODE_A2A_API_KEY_HEADER) ?? "X-API-Key",
    persistenceDir,
    syncEveryCommit:
      cli.syncEveryCommit ??
      file["sync-every-commit"] ??
      envFlag(env, "IACCODE_A2A_SYNC_EVERY_COMMIT") ??
      false,
    artifactDir: path.resolve(expandPath(file["artifact-dir"] ?? path.join(persistenceDir, "artifacts"))),
    pushNotifications: file["push-notifications"] ?? false,
    autoApprovePermissions: file["auto-approve-permissions"] ?? false,
    idleContextSeconds: file["idle-context-seconds"] ?? 3600,
    allowedCwds: file["allowed-cwds"]?.map((p) => expandPath(p, env)),
    requiredExtensions: file["required-extensions"] ?? [],
    provider: file.provider,
    model: file.model,
    baseUrl: file["base-url"],
    script: file.script,
    mode: file.mode,
    pipelineName: file["pipeline-name"],
    signingSecret: nonEmpty(file["signing-secret"]),
    tlsCert: file["tls-cert"] ? path.resolve(expandPath(file["tls-cert"])) : undefined,
    tlsKey: file["tls-key"] ? path.resolve(expandPath(file["tls-key"])) : undefined,
    grpcHost: file["grpc-host"],
    grpcPort: file["grpc-port"],
    timeouts: timeoutsOf(file, cli, env),
    ...storeSettings(file, cli, env),
  };
  if (!Number.isInteger(settings.port) || settings.port < 0 || settings.port > 65535) {
    throw new ConfigError(`Invalid port ${String(settings.port)}: expected an integer from 0 to 65535.`);
  }
  return settings;
}
