// What every session of a runtime shares: configuration, logger, provider
// factory settings, limits and cloud settings.
import type { Logger } from "pino";
import type { ResolvedRuntimeConfig } from "../config.js";
import type { McpManager } from "../mcp/manager.js";
import type { ProviderFactoryOptions } from "../providers/factory.js";
import type { RuntimeStore } from "../store/runtime-store.js";

export interface RuntimeLimits {
  maxTurns: number;
  /** Fixed context window; default: from the model table. */
  contextWindow?: number;
  /** Share of the window that triggers compaction. */
  compactThreshold: number;
  /** User turns kept verbatim by compaction. */
  keepTurns: number;
  toolTimeoutMs: number;
  /** Results longer than this are stored in full and previewed to the model. */
  largeResultChars: number;
}

export interface SessionDeps {
  config: ResolvedRuntimeConfig;
  logger: Logger;
  providers: ProviderFactoryOptions;
  env: NodeJS.ProcessEnv;
  homeDir?: string;
  limits: RuntimeLimits;
  cloud: {
    endpoint?: string;
    /** aliyun_api endpoint overrides, product code → base URL. */
    endpoints?: Readonly<Record<string, string>>;
    pollIntervalMs: number;
    maxPollMs: number;
  };
  /** The run mode of requests that choose none, and the pipeline they run. */
  pipelines: { mode: "normal" | "pipeline"; pipelineName: string };
  /** A2A safe mode: normal turns get the restricted tool set (tools/registry.ts), no MCP. */
  safeMode: boolean;
  /** Where sessions and pipelines persist: the server's state store, or the runtime's own database. */
  store: RuntimeStore;
  /**
   * The store is a server's: the server commits what a turn wrote with the task state the turn
   * ends in (one transaction), so a turn does not wait for a commit of its own when it ends.
   */
  hostCommitsTurns?: boolean;
  /** The MCP servers of mcp.json (shared by every session; absent in tests that build deps by hand). */
  mcp?: McpManager;
}
