// Anthropic Messages API streaming (text, thinking with signatures,
// redacted thinking, tool_use with input_json_delta).
import type { Logger } from "pino";
import { ProviderError } from "../errors.js";
import type { ContentBlock, Message } from "../messages.js";
import { postToProvider } from "./http.js";
import { readSse } from "./sse.js";
import { anthropicThinkingFields } from "./thinking.js";
import { parseToolArguments } from "./tool-arguments.js";
import type {
  HttpProviderSettings,
  Provider,
  ProviderEvent,
  ProviderRequest,
  ProviderUsage,
  StopReason,
} from "./types.js";

export const ANTHROPIC_VERSION = "2023-06-01";
const DEFAULT_MAX_TOKENS = 8192;

type Block = Record<string, unknown>;

function toBlock(block: ContentBlock): Block | undefined {
  switch (block.type) {
    case "text":
      return block.text.length > 0 ? { type: "text", text: block.text } : undefined;
    case "thinking":
      // Thinking without a signature (from another provider) cannot be replayed.
      return block.signature
        ? { type: "thinking", thinking: block.thinking, signature: block.signature }
        : undefined;
    case "redacted_thinking":
      return { type: "redacted_thinking", data: block.data };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: block.toolUseId,
        content: block.content,
        is_error: block.isError,
      };
    case "image":
      return { type: "image", source: { type: "base64", media_type: block.mediaType, data: block.data } };
  }
}

/** Consecutive messages of one role are merged (the API wants alternation). */
export function toAnthropicMessages(messages: readonly Message[]): Array<{ role: string; content: Block[] }> {
  const out: Array<{ role: string; content: Block[] }> = [];
  for (const message of messages) {
    const blocks = message.content.map(toBlock).filter((b): b is Block => b !== undefined);
    // Tool results must come first in a user message.
    if (message.role === "user")
      blocks.sort((a, b) => Number(b.type === "tool_result") - Number(a.type === "tool_result"));
    if (blocks.length === 0) continue;
    const last = out[out.length - 1];
    if (last && last.role === message.role) last.content.push(...blocks);
    else out.push({ role: message.role, content: blocks });
  }
  return out;
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function mapStop(reason: string | undefined): StopReason {
  if (reason === "tool_use") return "tool_use";
  if (reason === "max_tokens") return "max_tokens";
  return "end_turn";
}

interface OpenBlock {
  type: string;
  id?: string;
  name?: string;
  json: string;
  signature?: string;
}

export class AnthropicProvider implements Provider {
  readonly name: string;
  readonly model: string;

  constructor(
    private readonly settings: HttpProviderSettings,
    private readonly logger: Logger,
  ) {
    this.name = settings.name;
    this.model = settings.model;
  }

  async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
    const s = this.settings;
    const { thinking, maxTokens } = anthropicThinkingFields(s.thinking, s.maxTokens ?? DEFAULT_MAX_TOKENS);
    const body: Record<string, unknown> = {
      model: s.model,
      max_tokens: maxTokens,
      system: request.system,
      messages: toAnthropicMessages(request.messages),
      stream: true,
      ...(thinking ? { thinking } : {}),
    };
    if (request.kind === "stream" && request.tools.length > 0) {
      body.tools = request.tools.map((t) => ({
        name: t.name,
        description: t.description,
        input_schema: t.inputSchema,
      }));
    }
    const base = s.baseUrl.replace(/\/+$/, "");
    const { response, abort } = await postToProvider(s, this.logger, {
      url: `${base}${base.endsWith("/v1") ? "" : "/v1"}/messages`,
      headers: { "anthropic-version": ANTHROPIC_VERSION, ...(s.apiKey ? { "x-api-key": s.apiKey } : {}) },
      body,
      signal: request.signal,
    });
    try {
      if (!response.body) throw new ProviderError("fatal", "response without body");
      yield* this.fromStream(response.body, request.signal);
    } finally {
      abort();
    }
  }

  private async *fromStream(
    body: ReadableStream<Uint8Array>,
    signal: AbortSignal,
  ): AsyncGenerator<ProviderEvent> {
    const open = new Map<number, OpenBlock>();
    const usage: ProviderUsage = { inputTokens: 0, outputTokens: 0 };
    let stop: string | undefined;
    let finished = false;
    for await (const event of readSse(body, { idleTimeoutMs: this.settings.idleTimeoutMs, signal })) {
      let data: Record<string, unknown>;
      try {
        data = JSON.parse(event.data) as Record<string, unknown>;
      } catch {
        throw new ProviderError("fatal", "bad response: a stream event is not JSON");
      }
      const type = (event.event ?? data.type) as string;
      if (type === "ping") continue;
      if (type === "error") {
        const error = (data.error ?? {}) as { type?: string; message?: string };
        const kind = error.type === "overloaded_error" || error.type === "api_error" ? "retryable" : "fatal";
        throw new ProviderError(
          error.type === "authentication_error" ? "authentication" : kind,
          `stream error ${error.type ?? ""}: ${error.message ?? ""}`,
        );
      }
      if (type === "message_start") {
        const u = ((data.message as Record<string, unknown> | undefined)?.usage ?? {}) as Record<
          string,
          number
        >;
        usage.inputTokens =
          (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
        usage.outputTokens = u.output_tokens ?? 0;
        if (u.cache_read_input_tokens) usage.cachedInputTokens = u.cache_read_input_tokens;
        continue;
      }
      const index = typeof data.index === "number" ? data.index : 0;
      if (type === "content_block_start") {
        const block = (data.content_block ?? {}) as Record<string, unknown>;
        const entry: OpenBlock = { type: String(block.type), json: "" };
        if (block.type === "tool_use") {
          entry.id = String(block.id);
          entry.name = String(block.name);
          yield { type: "tool_use_start", id: entry.id, name: entry.name };
        } else if (block.type === "redacted_thinking") {
          yield { type: "thinking_delta", text: "", redactedData: str(block.data) };
        } else if (block.type === "text" && typeof block.text === "string" && block.text) {
          yield { type: "text_delta", text: block.text };
        }
        open.set(index, entry);
      } else if (type === "content_block_delta") {
        const delta = (data.delta ?? {}) as Record<string, unknown>;
        const entry = open.get(index);
        if (delta.type === "text_delta") yield { type: "text_delta", text: str(delta.text) };
        else if (delta.type === "thinking_delta") yield { type: "thinking_delta", text: str(delta.thinking) };
        else if (delta.type === "signature_delta" && entry)
          entry.signature = (entry.signature ?? "") + str(delta.signature);
        else if (delta.type === "input_json_delta" && entry?.id) {
          const part = str(delta.partial_json);
          entry.json += part;
          if (part) yield { type: "tool_input_delta", id: entry.id, partialJson: part };
        }
      } else if (type === "content_block_stop") {
        const entry = open.get(index);
        open.delete(index);
        if (entry?.type === "thinking" && entry.signature)
          yield { type: "thinking_delta", text: "", signature: entry.signature };
        if (entry?.type === "tool_use" && entry.id && entry.name)
          yield { type: "tool_use_end", id: entry.id, name: entry.name, ...parseToolArguments(entry.json) };
      } else if (type === "message_delta") {
        const delta = (data.delta ?? {}) as Record<string, unknown>;
        if (typeof delta.stop_reason === "string") stop = delta.stop_reason;
        const u = (data.usage ?? {}) as Record<string, number>;
        if (typeof u.output_tokens === "number") usage.outputTokens = u.output_tokens;
      } else if (type === "message_stop") {
        finished = true;
        break;
      }
    }
    if (!finished) throw new ProviderError("retryable", "the stream ended before the message was complete");
    yield { type: "message_end", stopReason: mapStop(stop), usage };
  }
}
