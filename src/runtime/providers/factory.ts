// Builds the provider of one turn from the resolved configuration and the
// turn's overrides (model, API key, thinking). Overrides live only in the
// returned object, which is dropped when the turn ends.
import type { Logger } from "pino";
import type { ResolvedRuntimeConfig } from "../config.js";
import { ProviderError } from "../errors.js";
import type { TurnOverrides } from "../seam.js";
import { AnthropicProvider } from "./anthropic.js";
import { OpenAIChatProvider } from "./openai.js";
import { DEFAULT_PROVIDER, findProvider, type ProviderSpec } from "./registry.js";
import type { Script } from "./script-format.js";
import { ScriptedProvider } from "./scripted.js";
import type { Provider, RetryPolicy, ThinkingPolicy } from "./types.js";
import { forwardableLlmHeaders } from "../../server/llm-headers.js";

export interface ProviderFactoryOptions {
  config: ResolvedRuntimeConfig;
  /** The script of the scripted provider (or the bundled demo script in demo mode). */
  script?: Script;
  idleTimeoutMs: number;
  retry: RetryPolicy;
  logger: Logger;
}

function mergeThinking(
  base: ThinkingPolicy | undefined,
  turn: TurnOverrides["thinking"],
): ThinkingPolicy | undefined {
  if (!base && !turn) return undefined;
  return {
    ...base,
    ...(turn?.enabled !== undefined ? { enabled: turn.enabled } : {}),
    ...(turn?.effort !== undefined ? { effort: turn.effort } : {}),
    ...(turn?.budget !== undefined ? { budget: turn.budget } : {}),
  };
}

export function createTurnProvider(options: ProviderFactoryOptions, overrides: TurnOverrides): Provider {
  const { config } = options;
  let spec: ProviderSpec = config.provider;
  let baseUrl = config.baseUrl;
  let model = overrides.model ?? config.model;
  let apiKey = overrides.apiKey ?? config.apiKey;

  if (config.demo) {
    // A request that brings its own model or key leaves demo mode for that turn.
    if (overrides.model === undefined && overrides.apiKey === undefined) {
      return new ScriptedProvider(options.script as Script, "demo-script");
    }
    spec = findProvider(DEFAULT_PROVIDER) as ProviderSpec;
    baseUrl = spec.defaultBaseUrl;
    model = overrides.model ?? (spec.defaultModel as string);
    apiKey = overrides.apiKey;
  }

  if (spec.wire === "scripted") {
    if (!options.script) throw new ProviderError("fatal", "scripted provider without script");
    return new ScriptedProvider(options.script, overrides.model);
  }
  if (spec.requiresKey && !apiKey) {
    throw new ProviderError("authentication", `no API key configured for provider ${spec.key}`);
  }
  const settings = {
    name: spec.key,
    model,
    baseUrl: baseUrl as string,
    ...(apiKey ? { apiKey } : {}),
    thinking: mergeThinking(config.thinking, overrides.thinking),
    ...(config.maxTokens !== undefined ? { maxTokens: config.maxTokens } : {}),
    idleTimeoutMs: options.idleTimeoutMs,
    retry: options.retry,
    // The request's own headers (a gateway's tenant, trace, quota), this turn only; never the provider's.
    ...(overrides.llmHeaders ? { extraHeaders: forwardableLlmHeaders(overrides.llmHeaders) } : {}),
    thinkingFamily:
      spec.thinkingFamily === "generic" && /dashscope/i.test(baseUrl ?? "") && overrides.thinking
        ? "dashscope"
        : spec.thinkingFamily,
  };
  return spec.wire === "anthropic"
    ? new AnthropicProvider(settings, options.logger)
    : new OpenAIChatProvider(settings, options.logger);
}
