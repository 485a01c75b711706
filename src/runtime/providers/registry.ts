// The provider catalogue: wire format, default base URL and model, whether
// a key is required, and the thinking family used to map thinking knobs.

export type Wire = "openai" | "anthropic" | "scripted";
export type ThinkingFamily = "dashscope" | "openai" | "generic" | "anthropic" | "none";

export interface ProviderSpec {
  key: string;
  wire: Wire;
  defaultBaseUrl?: string;
  defaultModel?: string;
  requiresKey: boolean;
  thinkingFamily: ThinkingFamily;
  aliases: string[];
}

export const DASHSCOPE_BASE_URL = "https://dashscope.aliyuncs.com/compatible-mode/v1";
export const DEFAULT_PROVIDER = "dashscope";

export const PROVIDERS: readonly ProviderSpec[] = [
  {
    key: "dashscope",
    wire: "openai",
    defaultBaseUrl: DASHSCOPE_BASE_URL,
    defaultModel: "qwen3.8-max",
    requiresKey: true,
    thinkingFamily: "dashscope",
    aliases: ["alibaba_cloud_bailian", "bailian", "qwen", "aliyun"],
  },
  {
    key: "openai",
    wire: "openai",
    defaultBaseUrl: "https://api.openai.com/v1",
    defaultModel: "gpt-5",
    requiresKey: true,
    thinkingFamily: "openai",
    aliases: [],
  },
  {
    key: "deepseek",
    wire: "openai",
    defaultBaseUrl: "https://api.deepseek.com/v1",
    defaultModel: "deepseek-chat",
    requiresKey: true,
    thinkingFamily: "openai",
    aliases: [],
  },
  {
    key: "openai_compatible",
    wire: "openai",
    requiresKey: false,
    thinkingFamily: "generic",
    aliases: ["compatible", "custom"],
  },
  {
    key: "ollama",
    wire: "openai",
    defaultBaseUrl: "http://localhost:11434/v1",
    defaultModel: "qwen3",
    requiresKey: false,
    thinkingFamily: "generic",
    aliases: [],
  },
  {
    key: "vllm",
    wire: "openai",
    defaultBaseUrl: "http://localhost:8000/v1",
    requiresKey: false,
    thinkingFamily: "generic",
    aliases: [],
  },
  {
    key: "lmstudio",
    wire: "openai",
    defaultBaseUrl: "http://localhost:1234/v1",
    requiresKey: false,
    thinkingFamily: "generic",
    aliases: ["lm_studio"],
  },
  {
    key: "anthropic",
    wire: "anthropic",
    defaultBaseUrl: "https://api.anthropic.com",
    defaultModel: "claude-sonnet-4-5",
    requiresKey: true,
    thinkingFamily: "anthropic",
    aliases: ["claude"],
  },
  {
    key: "anthropic_compatible",
    wire: "anthropic",
    requiresKey: false,
    thinkingFamily: "anthropic",
    aliases: [],
  },
  { key: "scripted", wire: "scripted", requiresKey: false, thinkingFamily: "none", aliases: ["script"] },
];

function normalise(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, "_");
}

/** The spec for a key or display name (case-insensitive, "OpenAI Compatible" = openai_compatible). */
export function findProvider(name: string): ProviderSpec | undefined {
  const key = normalise(name);
  return PROVIDERS.find((p) => p.key === key || p.aliases.includes(key));
}

/** The model name meaning "the endpoint's first model" (GET /models), for bare OpenAI-compatible URLs. */
export const AUTO_MODEL = "auto";

/** A catalogue provider whose default endpoint has the same host as the URL. */
export function providerForBaseUrl(baseUrl: string): ProviderSpec | undefined {
  let host: string;
  try {
    host = new URL(baseUrl).host;
  } catch {
    return undefined;
  }
  return PROVIDERS.find((p) => {
    if (!p.defaultBaseUrl || p.requiresKey === false) return false;
    return new URL(p.defaultBaseUrl).host === host;
  });
}

/** A provider guessed from a model name when none is configured. */
export function providerForModel(model: string): ProviderSpec {
  const m = model.toLowerCase();
  const key = m.startsWith("claude")
    ? "anthropic"
    : /^(gpt-|o[1-9]|chatgpt)/.test(m)
      ? "openai"
      : m.startsWith("deepseek")
        ? "deepseek"
        : DEFAULT_PROVIDER;
  return findProvider(key) as ProviderSpec;
}
