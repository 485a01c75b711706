// The AgentRuntime: resolves the configuration once, then opens and caches
// sessions (one per A2A context) that share it.
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino, { type Logger } from "pino";
import { resolveRuntimeConfig, type ResolvedRuntimeConfig, type RuntimeOptions } from "./config.js";
import { safeLogDestination } from "../server/logger.js";
import { ensureDir } from "./fs-util.js";
import { isSafeId, newSessionId } from "./ids.js";
import { ConfigError } from "./errors.js";
import { PipelineFiles } from "./pipeline/files.js";
import { bundledPipeline, bundledPipelineNames } from "./pipeline/loader.js";
import type { ProviderFactoryOptions } from "./providers/factory.js";
import { loadScriptFile, parseScript, type Script } from "./providers/script-format.js";
import { checkEndpointOverrides } from "./cloud/aliyun-products.js";
import { resolveCloudCredentials } from "./cloud/credentials.js";
import { loadMcpConfig } from "./mcp/config.js";
import type {
  AgentRuntime,
  AgentSession,
  PipelineState,
  RuntimeInfo,
  RuntimeReadiness,
  TurnOverrides,
} from "./seam.js";
import { RuntimeSession } from "./session/agent-session.js";
import type { SessionDeps } from "./session/deps.js";

const DEMO_SCRIPT_FILE = path.join(import.meta.dirname, "demo", "demo-script.yaml");

export function loadDemoScript(): Script {
  return parseScript(readFileSync(DEMO_SCRIPT_FILE, "utf8"), "demo-script.yaml");
}

function defaultLogger(env: NodeJS.ProcessEnv): Logger {
  // Not pino.destination(): its exit-time flush never returns once stderr's reader has gone.
  return pino({ name: "iac-code-runtime", level: env.IAC_CODE_LOG_LEVEL ?? "warn" }, safeLogDestination(2));
}

class Runtime implements AgentRuntime {
  private readonly sessions = new Map<string, Promise<RuntimeSession>>();

  constructor(
    private readonly deps: SessionDeps,
    private readonly config: ResolvedRuntimeConfig,
    /** The store is the runtime's own (closed with it), not a server's. */
    private readonly ownsStore: boolean,
  ) {}

  async openSession(options: { contextId: string; cwd: string; sessionId?: string }): Promise<AgentSession> {
    const fresh = options.sessionId === undefined;
    const sessionId = options.sessionId ?? newSessionId();
    if (!isSafeId(sessionId)) throw new Error("Invalid session id.");
    const cached = this.sessions.get(sessionId);
    if (cached) {
      const session = await cached;
      if (session.cwd !== path.resolve(options.cwd)) {
        throw new Error("The session belongs to a different workspace.");
      }
      return session;
    }
    // A closed session (an idle context evicted) leaves the cache: memory holds open sessions only,
    // and the next turn restores it from the store.
    const forget = () => {
      if (this.sessions.get(sessionId) === opening) this.sessions.delete(sessionId);
    };
    const opening = RuntimeSession.open(this.deps, {
      sessionId,
      contextId: options.contextId,
      cwd: options.cwd,
      fresh,
      onClose: forget,
    });
    this.sessions.set(sessionId, opening);
    opening.catch(forget);
    return opening;
  }

  checkTurn(overrides: TurnOverrides): string | undefined {
    const name = overrides.pipelineName;
    if (name === undefined || bundledPipeline(name)) return undefined;
    return `Unknown pipeline '${name}'. Available pipelines: ${bundledPipelineNames().join(", ")}.`;
  }

  async pipelineState(sessionId: string, afterSequence?: number): Promise<PipelineState | undefined> {
    if (!isSafeId(sessionId)) return undefined;
    return (await PipelineFiles.open(this.deps.store, sessionId)).state(afterSequence);
  }

  info(): RuntimeInfo {
    return {
      provider: this.config.demo ? "demo" : this.config.provider.key,
      model: this.config.model,
      demo: this.config.demo,
      ...(this.config.hint ? { hint: this.config.hint } : {}),
      ...this.deps.pipelines,
      pipelines: bundledPipelineNames(),
    };
  }

  readiness(): RuntimeReadiness {
    const { config, deps } = this;
    const keyMissing = !config.demo && config.provider.requiresKey && !config.apiKey;
    const credentials = resolveCloudCredentials({
      env: deps.env,
      configDir: config.configDir,
      homeDir: deps.homeDir,
      logger: deps.logger,
    });
    const source = credentials?.source;
    return {
      schemaVersion: 1,
      llm: {
        ready: !config.demo && !keyMissing,
        demo: config.demo,
        provider: config.demo ? "demo" : config.provider.key,
        model: config.model,
        source: config.providerSource,
        // A key alone (with the default provider) or a key and a base URL is enough to leave demo mode.
        missing: config.demo || keyMissing ? ["IAC_CODE_API_KEY"] : [],
      },
      cloud: {
        ready: credentials !== undefined,
        provider: "aliyun",
        ...(source === "env" || source === "config_file" || source === "aliyun_cli" ? { source } : {}),
        ...(credentials ? { regionId: credentials.regionId } : {}),
        missing: credentials ? [] : ["ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET"],
      },
    };
  }

  async close(): Promise<void> {
    const sessions = await Promise.allSettled([...this.sessions.values()]);
    this.sessions.clear();
    try {
      await Promise.all(sessions.flatMap((s) => (s.status === "fulfilled" ? [s.value.close()] : [])));
    } finally {
      // After the sessions (their turns are aborted first), and whatever happened there:
      // MCP child processes must not outlive the runtime.
      await this.deps.mcp?.close();
    }
    if (this.ownsStore) await this.deps.store.close();
    else await this.deps.store.commit();
  }
}

/** The default run mode and pipeline (options beat IAC_CODE_MODE / IAC_CODE_PIPELINE_NAME). */
function pipelineDefaults(options: RuntimeOptions, env: NodeJS.ProcessEnv): SessionDeps["pipelines"] {
  const mode = (options.mode ?? env.IAC_CODE_MODE ?? "normal").trim().toLowerCase();
  if (mode !== "normal" && mode !== "pipeline") {
    throw new ConfigError(`Unknown run mode '${mode}' (IAC_CODE_MODE / mode): expected normal or pipeline.`);
  }
  const pipelineName = (options.pipelineName ?? env.IAC_CODE_PIPELINE_NAME ?? "selling").trim();
  if (!bundledPipeline(pipelineName)) {
    throw new ConfigError(
      `Unknown pipeline '${pipelineName}' (IAC_CODE_PIPELINE_NAME / pipeline-name). Available pipelines: ${bundledPipelineNames().join(", ")}.`,
    );
  }
  return { mode, pipelineName };
}

export async function createAgentRuntime(options: RuntimeOptions = {}): Promise<AgentRuntime> {
  const env = options.env ?? process.env;
  const config = resolveRuntimeConfig(options);
  const pipelines = pipelineDefaults(options, env);
  const logger = options.logger ?? defaultLogger(env);
  // A bad mcp.json stops the start (naming the field); a server that fails to start only warns, later.
  const mcpConfig = loadMcpConfig({
    configDir: config.configDir,
    file: options.mcpConfig ?? env.IAC_CODE_MCP_CONFIG,
    env,
  });
  let script: Script | undefined;
  if (config.demo) script = loadDemoScript();
  else if (config.scriptFile) script = loadScriptFile(config.scriptFile);
  await ensureDir(config.configDir);
  const providers: ProviderFactoryOptions = {
    config,
    ...(script ? { script } : {}),
    idleTimeoutMs: options.idleTimeoutMs ?? 90_000,
    retry: {
      maxRetries: options.retry?.maxRetries ?? 3,
      baseDelayMs: options.retry?.baseDelayMs ?? 500,
      maxDelayMs: options.retry?.maxDelayMs ?? 32_000,
    },
    logger,
  };
  const deps: SessionDeps = {
    config,
    logger,
    providers,
    env,
    homeDir: options.homeDir ?? env.HOME ?? os.homedir(),
    limits: {
      maxTurns: options.maxTurns ?? 100,
      ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
      compactThreshold: options.compactThreshold ?? 0.93,
      keepTurns: options.keepTurns ?? 3,
      toolTimeoutMs: options.toolTimeoutMs ?? 120_000,
      largeResultChars: options.largeResultChars ?? 50_000,
    },
    cloud: {
      endpoint: options.rosEndpoint ?? env.IAC_CODE_ROS_ENDPOINT,
      ...(options.cloudEndpoints ? { endpoints: checkEndpointOverrides(options.cloudEndpoints) } : {}),
      pollIntervalMs: options.stackPollIntervalMs ?? 5_000,
      maxPollMs: options.stackMaxWaitMs ?? 3_600_000,
    },
    pipelines,
    safeMode: options.safeMode === true,
    // The MCP SDK is loaded only when there are servers to talk to (never in safe mode).
    ...(mcpConfig.servers.length > 0 && options.safeMode !== true
      ? {
          mcp: new (await import("./mcp/manager.js")).McpManager(mcpConfig, logger, {
            connectTimeoutMs: options.mcpConnectTimeoutMs ?? 30_000,
          }),
        }
      : {}),
    // A runtime no server hosts opens its own database (better-sqlite3 loaded on use).
    store:
      options.store ??
      (await import("./store/standalone-store.js")).openStandaloneStore(config.configDir, logger),
    hostCommitsTurns: options.store !== undefined,
  };
  logger.info(
    {
      provider: config.provider.key,
      model: config.model,
      demo: config.demo,
      source: config.providerSource,
      mcpServers: mcpConfig.servers.map((s) => s.name),
    },
    "agent runtime ready",
  );
  return new Runtime(deps, config, options.store === undefined);
}
