// Runtime configuration: which provider, model, endpoint and key; the
// permission settings; demo mode. Precedence: options (CLI) > environment
// (IAC_CODE_*) > files under the config dir (settings.yml, .credentials.yml)
// > the provider catalogue. Per-turn overrides are applied later, per turn.
import type { RuntimeStore } from "./store/runtime-store.js";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import YAML from "yaml";
import { schemaIndex } from "../contract/index.js";
import { t } from "../i18n/index.js";
import { ConfigError as FileConfigError, loadConfigFile } from "../server/settings-merge.js";
import { ConfigError } from "./errors.js";
import { parsePermissionMode, type PermissionSettings } from "./permissions/policy.js";
import { parseRules } from "./permissions/rules.js";
import {
  AUTO_MODEL,
  DEFAULT_PROVIDER,
  findProvider,
  PROVIDERS,
  providerForBaseUrl,
  providerForModel,
  type ProviderSpec,
} from "./providers/registry.js";
import type { RetryPolicy, ThinkingPolicy } from "./providers/types.js";
import { configDir } from "../server/paths.js";

export interface RuntimeOptions {
  /** Config directory; default IAC_CODE_CONFIG_DIR, then ~/.iac-code. */
  configDir?: string;
  /** Environment to read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** CLI / embedding overrides (beat env and files). */
  provider?: string;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  /** Script for the scripted provider (implies provider scripted when no provider is named). */
  scriptFile?: string;
  /** Approve what would be asked (audited); cloud mutations are denied instead. */
  autoApprovePermissions?: boolean;
  /** A2A safe mode: normal turns get the restricted tool set and no MCP server is started. */
  safeMode?: boolean;
  /** default, accept_edits, bypass, dont_ask (aliases such as bypass_permissions are accepted). */
  permissionMode?: string;
  /** Extra rules, applied before the settings file's. */
  permissionRules?: { allow?: string[]; deny?: string[]; ask?: string[] };
  logger?: Logger;
  /**
   * Where sessions and pipelines persist: the A2A server passes its state
   * store's (one commit with the task state; shared by replicas with store:
   * redis). Default: a database of the runtime's own, <config-dir>/runtime.db,
   * closed with the runtime.
   */
  store?: RuntimeStore;
  /** Loop limits and tuning (defaults in brackets). */
  maxTurns?: number; // [100]
  maxTokens?: number; // [provider default]
  contextWindow?: number; // [from the model table]
  compactThreshold?: number; // [0.93]
  keepTurns?: number; // [3]
  toolTimeoutMs?: number; // [120 000]
  largeResultChars?: number; // [50 000]
  idleTimeoutMs?: number; // [90 000]
  retry?: Partial<RetryPolicy>; // [3 retries, 500 ms .. 32 s]
  /** ROS endpoint (tests point it at a local fixture); default https://ros.aliyuncs.com. */
  rosEndpoint?: string;
  /**
   * aliyun_api endpoints by product code (ecs, vpc, ...), replacing the
   * product table's *.aliyuncs.com host; tests point them at a local fixture.
   */
  cloudEndpoints?: Readonly<Record<string, string>>;
  stackPollIntervalMs?: number; // [5 000]
  stackMaxWaitMs?: number; // [3 600 000]
  /** Home directory for ~/.aliyun/config.json (default the env's HOME). */
  homeDir?: string;
  /** Run mode of requests that choose none: normal or pipeline [env IAC_CODE_MODE, else normal]. */
  mode?: string;
  /** Pipeline of such requests [env IAC_CODE_PIPELINE_NAME, else selling]. */
  pipelineName?: string;
  /** The MCP servers file [env IAC_CODE_MCP_CONFIG, else <config-dir>/mcp.json when it exists]. */
  mcpConfig?: string;
  /** How long an MCP server may take to start and list its tools [30 000]. */
  mcpConnectTimeoutMs?: number;
}

export interface ResolvedRuntimeConfig {
  configDir: string;
  /** True when nothing is configured anywhere: the bundled demo script runs. */
  demo: boolean;
  provider: ProviderSpec;
  model: string;
  baseUrl?: string;
  /** Held in memory only; never written, never logged. */
  apiKey?: string;
  scriptFile?: string;
  thinking?: ThinkingPolicy;
  maxTokens?: number;
  permissions: PermissionSettings;
  /** English start-up hint (demo mode, or a configured provider without key). */
  hint?: string;
  /** Where the provider choice came from: options, env, settings, model, default, demo. */
  providerSource: string;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

export function defaultConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  return configDir(env);
}

function readYamlFile(file: string): Record<string, unknown> | undefined {
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new ConfigError(`Cannot read ${path.basename(file)} in the config directory.`);
  }
  let data: unknown;
  try {
    data = YAML.parse(raw);
  } catch (error) {
    throw new ConfigError(
      `${path.basename(file)} is not valid YAML: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== "object" || Array.isArray(data))
    throw new ConfigError(`${path.basename(file)} must be a mapping.`);
  return data as Record<string, unknown>;
}

/** settings.yml, checked against its schema (unknown keys refused with line and column); undefined when absent. */
function readSettingsFile(file: string): Record<string, unknown> | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return loadConfigFile(file, schemaIndex["config/settings"], { keys: "top" });
  } catch (error) {
    if (error instanceof FileConfigError) throw new ConfigError(error.message);
    throw error;
  }
}

/** The short form's provider (`provider`, or the reference's `activeProvider`); both must agree. */
function settingsProviderOf(settings: Record<string, unknown> | undefined): string | undefined {
  const short = nonEmpty(settings?.provider);
  const long = nonEmpty(settings?.activeProvider);
  if (short && long && findProvider(short)?.key !== findProvider(long)?.key)
    throw new ConfigError("settings.yml: provider and activeProvider name different providers; keep one.");
  return short ?? long;
}

/** The short form's API key: `api-key`, or the variable `api-key-env` names (which must be set). */
function settingsKeyOf(
  settings: Record<string, unknown> | undefined,
  env: NodeJS.ProcessEnv,
): string | undefined {
  const name = nonEmpty(settings?.["api-key-env"]);
  if (name === undefined) return nonEmpty(settings?.["api-key"]);
  const key = nonEmpty(env[name]);
  if (key === undefined) throw new ConfigError(`settings.yml api-key-env names ${name}, which is not set.`);
  return key;
}

function section(
  data: Record<string, unknown> | undefined,
  key: string,
  where: string,
): Record<string, unknown> {
  const value = data?.[key];
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw new ConfigError(`${where}: ${key} must be a mapping.`);
  return value as Record<string, unknown>;
}

function positiveInt(value: unknown, where: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  throw new ConfigError(`${where} must be a positive integer.`);
}

function bool(value: unknown, where: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "boolean") return value;
  throw new ConfigError(`${where} must be true or false.`);
}

function requireProvider(name: string, where: string): ProviderSpec {
  const spec = findProvider(name);
  if (!spec) {
    throw new ConfigError(
      `${where}: unknown provider ${JSON.stringify(name)}. Known providers: ${PROVIDERS.map((p) => p.key).join(", ")}.`,
    );
  }
  return spec;
}

/** Resolves the configuration; throws ConfigError with a clear message when it cannot work. */
export function resolveRuntimeConfig(options: RuntimeOptions = {}): ResolvedRuntimeConfig {
  const env = options.env ?? process.env;
  const configDir = options.configDir ? path.resolve(options.configDir) : defaultConfigDir(env);
  const settings = readSettingsFile(path.join(configDir, "settings.yml"));
  const credentials = readYamlFile(path.join(configDir, ".credentials.yml")) ?? {};
  const providers = section(settings, "providers", "settings.yml");
  for (const name of Object.keys(providers)) requireProvider(name, "settings.yml providers");

  const explicitProvider = nonEmpty(options.provider) ?? nonEmpty(env.IAC_CODE_PROVIDER);
  const settingsProvider = settingsProviderOf(settings);
  // The file's short form counts as given, below the command line and the environment.
  const explicitModel = nonEmpty(options.model) ?? nonEmpty(env.IAC_CODE_MODEL) ?? nonEmpty(settings?.model);
  const explicitBaseUrl =
    nonEmpty(options.baseUrl) ?? nonEmpty(env.IAC_CODE_BASE_URL) ?? nonEmpty(settings?.["base-url"]);
  const explicitKey =
    nonEmpty(options.apiKey) ?? nonEmpty(env.IAC_CODE_API_KEY) ?? settingsKeyOf(settings, env);
  // IAC_CODE_SCRIPT_FILE: the older documented name.
  const scriptFile =
    nonEmpty(options.scriptFile) ?? nonEmpty(env.IAC_CODE_SCRIPT) ?? nonEmpty(env.IAC_CODE_SCRIPT_FILE);
  const savedProviderEntries = Object.values(providers).some(
    (p) =>
      p &&
      typeof p === "object" &&
      (nonEmpty((p as Record<string, unknown>).model) || nonEmpty((p as Record<string, unknown>).apiBase)),
  );
  const savedKeys = Object.values(credentials).some((v) => nonEmpty(v) !== undefined);

  const permissions = resolvePermissions(options, settings);
  const demo =
    !explicitProvider &&
    !settingsProvider &&
    !explicitModel &&
    !explicitBaseUrl &&
    !explicitKey &&
    !scriptFile &&
    !savedProviderEntries &&
    !savedKeys;
  if (demo) {
    return {
      configDir,
      demo: true,
      provider: requireProvider("scripted", "demo"),
      model: "demo-script",
      permissions,
      hint: t("en", "runtime.demo.hint"),
      providerSource: "demo",
    };
  }

  let provider: ProviderSpec;
  let providerSource: string;
  if (explicitProvider) {
    provider = requireProvider(explicitProvider, options.provider ? "provider option" : "IAC_CODE_PROVIDER");
    providerSource = options.provider ? "options" : "env";
  } else if (scriptFile) {
    provider = requireProvider("scripted", "script");
    providerSource = "options";
  } else if (settingsProvider) {
    provider = requireProvider(settingsProvider, "settings.yml provider");
    providerSource = "settings";
  } else if (explicitBaseUrl) {
    // A known vendor URL keeps its provider (thinking knobs, default model); anything else is generic.
    provider =
      providerForBaseUrl(explicitBaseUrl) ??
      (explicitModel && providerForModel(explicitModel).key === "anthropic"
        ? requireProvider("anthropic_compatible", "base URL")
        : requireProvider("openai_compatible", "base URL"));
    providerSource = "base_url";
  } else if (explicitModel) {
    provider = providerForModel(explicitModel);
    providerSource = "model";
  } else {
    const saved = Object.keys(providers)[0];
    provider = requireProvider(saved ?? DEFAULT_PROVIDER, "settings.yml providers");
    providerSource = saved ? "settings" : "default";
  }

  // Entries may name their provider by key or display name.
  const entry = Object.keys(providers).find((k) => findProvider(k)?.key === provider.key);
  const saved = entry === undefined ? {} : section(providers, entry, "settings.yml providers");
  if (provider.wire === "scripted") {
    const file = scriptFile ?? nonEmpty(saved.scriptFile);
    if (!file)
      throw new ConfigError(
        "The scripted provider needs a script file (--script, script: in a2a-server.yml, or IAC_CODE_SCRIPT).",
      );
    return {
      configDir,
      demo: false,
      provider,
      model: explicitModel ?? "scripted",
      scriptFile: path.resolve(file),
      permissions,
      providerSource,
    };
  }

  // A generic OpenAI-compatible endpoint without a model uses its first listed model.
  const model =
    explicitModel ??
    nonEmpty(saved.model) ??
    provider.defaultModel ??
    (provider.wire === "openai" ? AUTO_MODEL : undefined);
  if (!model) throw new ConfigError(`Provider ${provider.key} needs a model (IAC_CODE_MODEL or --model).`);
  const baseUrl = explicitBaseUrl ?? nonEmpty(saved.apiBase) ?? provider.defaultBaseUrl;
  if (!baseUrl)
    throw new ConfigError(`Provider ${provider.key} needs a base URL (IAC_CODE_BASE_URL or --base-url).`);
  try {
    const url = new URL(baseUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("scheme");
  } catch {
    throw new ConfigError(`The base URL of provider ${provider.key} is not an http(s) URL.`);
  }
  const apiKey = explicitKey ?? nonEmpty(credentials[provider.key]);

  const perModel = section(section(saved, "models", provider.key), model, `${provider.key}.models`);
  const pick = (key: string): unknown => perModel[key] ?? saved[key];
  const thinking: ThinkingPolicy = {};
  const enabled = bool(pick("thinkingEnabled"), `${provider.key}.thinkingEnabled`);
  if (enabled !== undefined) thinking.enabled = enabled;
  const budget = positiveInt(pick("thinkingBudget"), `${provider.key}.thinkingBudget`);
  if (budget !== undefined) thinking.budget = budget;
  const effort = nonEmpty(pick("effort"));
  if (effort !== undefined) thinking.effort = effort;
  const maxTokens =
    options.maxTokens ?? positiveInt(pick("maxCompletionTokens"), `${provider.key}.maxCompletionTokens`);

  return {
    configDir,
    demo: false,
    provider,
    model,
    baseUrl,
    ...(apiKey ? { apiKey } : {}),
    ...(Object.keys(thinking).length > 0 ? { thinking } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    permissions,
    ...(provider.requiresKey && !apiKey
      ? {
          hint: `Provider ${provider.key} has no API key: set IAC_CODE_API_KEY or add it to .credentials.yml.`,
        }
      : {}),
    providerSource,
  };
}

function resolvePermissions(
  options: RuntimeOptions,
  settings: Record<string, unknown> | undefined,
): PermissionSettings {
  const saved = section(settings, "permissions", "settings.yml");
  const mode =
    options.permissionMode !== undefined
      ? parsePermissionMode(options.permissionMode, "permission mode option")
      : saved.mode !== undefined
        ? parsePermissionMode(saved.mode, "settings.yml permissions.mode")
        : "default";
  const extra = options.permissionRules ?? {};
  return {
    mode,
    allow: [
      ...parseRules(extra.allow, "permission allow rules", "allow"),
      ...parseRules(saved.allow, "settings.yml permissions.allow", "allow"),
    ],
    deny: [
      ...parseRules(extra.deny, "permission deny rules", "deny"),
      ...parseRules(saved.deny, "settings.yml permissions.deny", "deny"),
    ],
    ask: [
      ...parseRules(extra.ask, "permission ask rules", "ask"),
      ...parseRules(saved.ask, "settings.yml permissions.ask", "ask"),
    ],
    autoApprove: options.autoApprovePermissions === true,
  };
}
