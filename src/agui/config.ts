// Resolving the adapter's settings: command line > environment > YAML file >
// defaults (the two tokens: environment > file). The file is validated by the
// config/agui-server contract after `_` in keys is rewritten to `-`.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { parseAguiServerConfig } from "../contract/index.js";
import { t, type Language } from "../i18n/index.js";
import { isObject, type JsonObject } from "./a2a-items.js";
import { DEFAULT_INTERRUPT_TTL_SECONDS } from "./adapter-core.js";
import { configDir, expandPath } from "../server/paths.js";
import {
  resolveTimeouts,
  timeoutFlagValues,
  type ServerTimeouts,
  type TimeoutFlags,
} from "../server/timeouts.js";

export interface AguiSettings {
  host: string;
  port: number;
  a2aUrl: string;
  a2aToken?: string;
  authToken?: string;
  stateDir: string;
  /** file: one JSON file per thread under stateDir; redis: shared by the adapter's replicas. */
  threadStore?: "file" | "redis";
  /** Redis URL for threadStore redis; may hold a password: never logged. */
  redisUrl?: string;
  idleShutdown: number;
  interruptTtl: number;
  allowedCwds?: string[];
  debug: boolean;
  logStdout: boolean;
  /** Headers, request, keep-alive and shutdown limits (default DEFAULT_TIMEOUTS). */
  timeouts?: ServerTimeouts;
}

/** Options as commander hands them over (strings unless parsed). */
export interface AguiCliOptions extends TimeoutFlags {
  config?: string;
  host?: string;
  port?: string;
  a2aUrl?: string;
  stateDir?: string;
  threadStore?: string;
  redisUrl?: string;
  idleShutdown?: string;
  interruptTtl?: string;
  debug?: boolean;
  logStdout?: boolean;
}

/** A configuration failure; keyed ones are translated for the CLI's language. */
export class ConfigError extends Error {
  constructor(
    message: string,
    readonly messageKey?: string,
  ) {
    super(message);
  }

  localized(lang: Language): string {
    return this.messageKey ? t(lang, this.messageKey) : this.message;
  }
}

/** A ConfigError whose text is the i18n message `key`. */
export function configError(key: string): ConfigError {
  return new ConfigError(t("en", key), key);
}

function normalizeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalizeKeys);
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) out[k.replace(/_/g, "-")] = normalizeKeys(v);
    return out;
  }
  return value;
}

export function loadConfigFile(file: string): JsonObject {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, "utf8"));
  } catch {
    throw configError("aguiAdapter.cliConfigLoad");
  }
  if (raw === null || raw === undefined) raw = {};
  if (!isObject(raw)) throw configError("aguiAdapter.cliConfigMapping");
  const normalized = normalizeKeys(raw);
  const checked = parseAguiServerConfig(normalized);
  if (!checked.ok) {
    const detail = checked.errors.map((e) => `${e.path} ${e.message}`).join("; ");
    throw new ConfigError(`Invalid AG-UI config file: ${detail}`);
  }
  return normalized as JsonObject;
}

function intOption(value: string, min: number, max: number, messageKey: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw configError(messageKey);
  const n = Number(value);
  if (n < min || n > max) throw configError(messageKey);
  return n;
}

export function resolveSettings(cli: AguiCliOptions, env: NodeJS.ProcessEnv = process.env): AguiSettings {
  const file = cli.config ? loadConfigFile(cli.config) : {};
  const pick = <T>(cliValue: T | undefined, envValue: T | undefined, fileValue: unknown): T | undefined =>
    cliValue ?? envValue ?? (fileValue as T | undefined);

  const host = pick(cli.host, env.IAC_CODE_AGUI_HOST || undefined, file.host) ?? "127.0.0.1";
  const portRaw = pick<string | number>(cli.port, env.IAC_CODE_AGUI_PORT || undefined, file.port);
  const port = portRaw === undefined ? 8000 : intOption(String(portRaw), 0, 65535, "aguiAdapter.cliPort");
  const a2aUrl = pick(cli.a2aUrl, env.IAC_CODE_AGUI_A2A_URL || undefined, file["a2a-url"]) ?? "";
  const stateRaw = pick(cli.stateDir, env.IAC_CODE_AGUI_STATE_DIR || undefined, file["state-dir"]);
  const stateDir = stateRaw ? expandPath(String(stateRaw), env) : path.join(configDir(env), "agui");
  // thread-store and redis-url (issue 15: adapter replicas share thread state in Redis).
  const threadStore = String(
    pick(cli.threadStore, env.IAC_CODE_AGUI_THREAD_STORE || undefined, file["thread-store"]) ?? "file",
  )
    .trim()
    .toLowerCase();
  if (threadStore !== "file" && threadStore !== "redis") {
    throw new ConfigError(
      `Invalid thread-store '${threadStore}' (--thread-store / IAC_CODE_AGUI_THREAD_STORE / thread-store): expected file or redis.`,
    );
  }
  const redisRaw = pick(cli.redisUrl, env.IAC_CODE_AGUI_REDIS_URL || undefined, file["redis-url"]);
  const redisUrl = redisRaw === undefined ? undefined : String(redisRaw);
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError(
      "Invalid redis-url (--redis-url / IAC_CODE_AGUI_REDIS_URL / redis-url): expected a redis:// or rediss:// URL.",
    );
  }
  if (threadStore === "redis" && redisUrl === undefined) {
    throw new ConfigError(
      "thread-store redis needs redis-url (--redis-url, IAC_CODE_AGUI_REDIS_URL or the redis-url key).",
    );
  }
  const idleRaw = cli.idleShutdown ?? file["idle-shutdown"];
  let idleShutdown = 0;
  if (idleRaw !== undefined) {
    idleShutdown = Number(idleRaw);
    if (
      !Number.isFinite(idleShutdown) ||
      idleShutdown < 0 ||
      (typeof idleRaw === "string" && idleRaw.trim() === "")
    ) {
      throw configError("aguiAdapter.cliIdle");
    }
  }
  const ttlRaw = pick<string | number>(
    cli.interruptTtl,
    env.IAC_CODE_AGUI_INTERRUPT_TTL || undefined,
    file["interrupt-ttl"],
  );
  const interruptTtl =
    ttlRaw === undefined
      ? DEFAULT_INTERRUPT_TTL_SECONDS
      : intOption(String(ttlRaw), 1, 2 ** 31, "aguiAdapter.cliTtl");
  const timeoutFlags = timeoutFlagValues(cli);
  let timeouts: ServerTimeouts;
  try {
    timeouts = resolveTimeouts((key, envSuffix) =>
      pick(timeoutFlags[key], env[`IAC_CODE_AGUI_${envSuffix}`] || undefined, file[key]),
    );
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const authToken = env.IAC_CODE_AGUI_AUTH_TOKEN ?? (file["auth-token"] as string | undefined);
  const a2aToken = env.IAC_CODE_AGUI_A2A_TOKEN ?? (file["a2a-token"] as string | undefined);
  return {
    host,
    port,
    a2aUrl,
    a2aToken: a2aToken || undefined,
    authToken: authToken || undefined,
    stateDir,
    threadStore,
    redisUrl,
    idleShutdown,
    interruptTtl,
    allowedCwds: Array.isArray(file["allowed-cwds"]) ? (file["allowed-cwds"] as string[]) : undefined,
    debug: cli.debug ?? (file.debug as boolean | undefined) ?? false,
    logStdout: cli.logStdout ?? (file["log-stdout"] as boolean | undefined) ?? false,
    timeouts,
  };
}
