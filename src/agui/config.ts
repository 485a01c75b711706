// Resolving the adapter's settings: the settings table (src/agui/settings.ts)
// merges the command line, the YAML file (validated by the config/agui-server
// contract after `_` in keys is rewritten to `-`) and the environment:
// command line > file > environment > defaults.
import path from "node:path";
import { schemaIndex, type AguiServerConfig } from "../contract/index.js";
import { t } from "../i18n/index.js";
import { DEFAULT_A2A_WAIT_SECONDS } from "./upstream/a2a-wait.js";
import { AGUI_SETTINGS } from "./settings.js";
import { type LogFormat } from "../server/logger.js";
import { isLoopbackHost } from "../server/exposure.js";
import { configDir, expandPath } from "../server/paths.js";
import { ConfigError, cliValues } from "../server/settings.js";
import { loadConfigFile, mergeSettings } from "../server/settings-merge.js";
import { resolveTimeouts, type ServerTimeouts } from "../server/timeouts.js";
import { jwtSettingsOf, type JwtSettings } from "../server/jwt-auth.js";

/** Seconds an interrupt stays answerable by default. */
export const DEFAULT_INTERRUPT_TTL_SECONDS = 540;

export { ConfigError } from "../server/settings.js";

export interface AguiSettings {
  host: string;
  port: number;
  a2aUrl: string;
  a2aToken?: string;
  /**
   * a2a-wait-seconds: how long a request waits for an unreachable A2A server
   * (refused connection, managed child not up) before the run fails; 0 fails
   * at once. Default DEFAULT_A2A_WAIT_SECONDS.
   */
  a2aWaitSeconds?: number;
  /** Config file of the managed A2A server. */
  a2aConfig?: string;
  /** --provider, --model, --base-url for the managed A2A server (flags or file keys; their env vars it reads itself). */
  a2aModelArgs?: string[];
  authToken?: string;
  /** auth-jwks-url, auth-issuer, auth-audience: bearer JWTs of an identity provider. */
  jwt?: JwtSettings;
  /** Browser origins allowed by CORS (exact `scheme://host[:port]`); none by default. */
  corsOrigins?: string[];
  /** Serve the browser console at GET /console (default: on when host is loopback). */
  console?: boolean;
  stateDir: string;
  /** sync-every-commit: thread files (and the managed A2A server's commits) are fsynced. */
  syncEveryCommit?: boolean;
  /** file: one JSON file per thread under stateDir; redis: shared by the adapter's replicas. */
  threadStore?: "file" | "redis";
  /** Redis URL for threadStore redis; may hold a password: never logged. */
  redisUrl?: string;
  idleShutdown: number;
  interruptTtl: number;
  allowedCwds?: string[];
  debug: boolean;
  /** log-to-stdout. */
  logStdout: boolean;
  /** --log-format / log-format / IAC_CODE_AGUI_LOG_FORMAT; undefined: pretty on a terminal, else JSON. */
  logFormat?: LogFormat;
  /** Headers, request, keep-alive and shutdown limits (default DEFAULT_TIMEOUTS). */
  timeouts?: ServerTimeouts;
}

/** A ConfigError whose text is the i18n message `key` (in English: start-up errors are for operators). */
export function configError(key: string): ConfigError {
  return new ConfigError(t("en", key));
}

/** A CORS origin as browsers send it: scheme://host[:port], lower-case, no path. */
function normaliseOrigin(raw: string): string {
  const bad = new ConfigError(
    `Invalid CORS origin '${raw}': expected http(s)://host[:port], without a path.`,
  );
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad;
  }
  if (
    !["http:", "https:"].includes(url.protocol) ||
    url.pathname !== "/" ||
    url.search ||
    url.hash ||
    url.username
  )
    throw bad;
  return url.origin;
}

/** The settings of `command` (agui or serve) from commander's options and the environment. */
export function resolveSettings(
  options: object,
  env: NodeJS.ProcessEnv = process.env,
  command = "agui",
): AguiSettings {
  const cli = cliValues(AGUI_SETTINGS, options);
  const configFile = (cli.config as string | undefined) ?? (env.IAC_CODE_AGUI_CONFIG || undefined);
  const contract = schemaIndex["config/agui-server"];
  const file = configFile ? loadConfigFile(configFile, contract) : {};
  const config = mergeSettings(AGUI_SETTINGS, {
    cli,
    file,
    fileName: configFile,
    env,
    contract,
  }) as AguiServerConfig;
  // serve always manages its own A2A server.
  const a2aUrl = command === "serve" ? "" : (config["a2a-url"] ?? "");
  for (const key of ["a2a-config", "provider", "model", "base-url"] as const) {
    if (a2aUrl && config[key]) {
      throw new ConfigError(
        `${key} configures the managed A2A server, which is not started when a2a-url is set.`,
      );
    }
  }
  const threadStore = config["thread-store"] ?? "file";
  if (threadStore === "redis" && config["redis-url"] === undefined) {
    throw new ConfigError(
      "thread-store redis needs redis-url (--redis-url, IAC_CODE_AGUI_REDIS_URL or the redis-url key).",
    );
  }
  let timeouts: ServerTimeouts;
  try {
    timeouts = resolveTimeouts((key) => config[key]);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const host = config.host ?? "127.0.0.1";
  return {
    host,
    port: config.port ?? 8000,
    a2aUrl,
    a2aToken: (command === "serve" ? undefined : config["a2a-token"]) || undefined,
    a2aWaitSeconds: config["a2a-wait-seconds"] ?? DEFAULT_A2A_WAIT_SECONDS,
    a2aConfig: config["a2a-config"] ? expandPath(config["a2a-config"], env) : undefined,
    a2aModelArgs: [
      ...(config.provider ? ["--provider", config.provider] : []),
      ...(config.model ? ["--model", config.model] : []),
      ...(config["base-url"] ? ["--base-url", config["base-url"]] : []),
    ],
    authToken: config["auth-token"] || undefined,
    jwt: jwtSettingsOf(config),
    corsOrigins: [...new Set((config["cors-origins"] ?? []).map(normaliseOrigin))],
    console: config.console ?? isLoopbackHost(host),
    stateDir: config["state-dir"] ? expandPath(config["state-dir"], env) : path.join(configDir(env), "agui"),
    syncEveryCommit: config["sync-every-commit"] ?? false,
    threadStore,
    redisUrl: config["redis-url"],
    idleShutdown: config["idle-shutdown"] ?? 0,
    interruptTtl: config["interrupt-ttl"] ?? DEFAULT_INTERRUPT_TTL_SECONDS,
    allowedCwds: config["allowed-cwds"]?.map((p) => expandPath(p, env)),
    debug: config.debug ?? false,
    logStdout: config["log-to-stdout"] ?? false,
    logFormat: config["log-format"],
    timeouts,
  };
}
