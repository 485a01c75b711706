// Thinking knobs (enabled, effort, budget) translated per model family into
// the request fields each wire expects.
import type { ThinkingFamily } from "./registry.js";
import type { ThinkingPolicy } from "./types.js";

/** DashScope models that also take reasoning_effort. */
const DASHSCOPE_EFFORT_MODELS = [/^qwen3\.8-max/, /^deepseek-v4/];
/** OpenAI models that accept reasoning_effort "none" (thinking can be turned off). */
const OPENAI_NONE_MODELS = [/^gpt-5\.[1-9]/];
const OPENAI_REASONING_MODELS = [/^gpt-5/, /^o[1-9]/];

/** Extra body fields for an OpenAI-compatible request. */
export function openAiThinkingFields(
  family: ThinkingFamily,
  model: string,
  policy: ThinkingPolicy | undefined,
  maxTokens: number | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const m = model.toLowerCase();
  if (family === "dashscope") {
    if (policy?.enabled !== undefined) out.enable_thinking = policy.enabled;
    const thinking = policy?.enabled !== false;
    if (thinking && policy?.budget !== undefined) out.thinking_budget = policy.budget;
    if (thinking && policy?.effort && DASHSCOPE_EFFORT_MODELS.some((r) => r.test(m))) {
      out.reasoning_effort = policy.effort;
    }
    if (maxTokens !== undefined) {
      // The answer limit plus the thinking budget: the budget must not eat the answer.
      out.max_completion_tokens = maxTokens + (thinking && policy?.budget ? policy.budget : 0);
    }
    return out;
  }
  if (maxTokens !== undefined) out.max_completion_tokens = maxTokens;
  if (family === "openai") {
    if (policy?.effort) out.reasoning_effort = policy.effort;
    else if (policy?.enabled === false) {
      if (OPENAI_NONE_MODELS.some((r) => r.test(m))) out.reasoning_effort = "none";
      else if (OPENAI_REASONING_MODELS.some((r) => r.test(m))) out.reasoning_effort = "minimal";
    }
    return out;
  }
  if (family === "generic" && policy?.effort) out.reasoning_effort = policy.effort;
  return out;
}

/** The Anthropic thinking block and the max_tokens that leaves room for it. */
export function anthropicThinkingFields(
  policy: ThinkingPolicy | undefined,
  maxTokens: number,
): { thinking?: Record<string, unknown>; maxTokens: number } {
  if (!policy?.enabled) return { maxTokens };
  const budget = Math.max(1024, policy.budget ?? 4096);
  return { thinking: { type: "enabled", budget_tokens: budget }, maxTokens: maxTokens + budget };
}
