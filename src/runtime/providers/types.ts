// What a provider consumes and produces. Provider events stay inside the
// runtime: the loop maps them onto the seam's RuntimeEvents.
import type { Message } from "../messages.js";
import type { RuntimeErrorKind } from "../seam.js";

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ThinkingPolicy {
  enabled?: boolean;
  effort?: string;
  budget?: number;
}

export interface ProviderRequest {
  system: string;
  messages: readonly Message[];
  tools: readonly ToolDefinition[];
  /** stream: a normal loop call; complete: a side call (compaction) that wants only text. */
  kind: "stream" | "complete";
  signal: AbortSignal;
}

export type StopReason = "end_turn" | "tool_use" | "max_tokens";

export interface ProviderUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
}

export type ProviderEvent =
  | { type: "text_delta"; text: string }
  | { type: "thinking_delta"; text: string; signature?: string; redactedData?: string }
  | { type: "tool_use_start"; id: string; name: string }
  | { type: "tool_input_delta"; id: string; partialJson: string }
  | { type: "tool_use_end"; id: string; name: string; input: Record<string, unknown>; inputError?: string }
  | { type: "message_end"; stopReason: StopReason; usage?: ProviderUsage };

/** One configured model endpoint (model, key and thinking already applied for the turn). */
export interface Provider {
  /** Provider key, e.g. dashscope, anthropic, scripted. */
  readonly name: string;
  readonly model: string;
  /** The model's context window in tokens, when the provider knows it (else the model table decides). */
  readonly contextWindow?: number;
  /** Throws ProviderError on failure; stops (AbortError) when request.signal aborts. */
  stream(request: ProviderRequest): AsyncIterable<ProviderEvent>;
}

export interface RetryPolicy {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface HttpProviderSettings {
  name: string;
  model: string;
  baseUrl: string;
  apiKey?: string;
  thinking?: ThinkingPolicy;
  maxTokens?: number;
  idleTimeoutMs: number;
  retry: RetryPolicy;
  /** Thinking wire format (see thinking.ts). */
  thinkingFamily: string;
  extraHeaders?: Record<string, string>;
}

export function errorKindForStatus(status: number): RuntimeErrorKind {
  if (status === 401 || status === 403) return "authentication";
  if (status === 408 || status === 409 || status === 429 || status >= 500) return "retryable";
  return "fatal";
}
