// OpenAI-compatible Chat Completions (DashScope/Qwen, OpenAI, DeepSeek,
// Ollama, vLLM, any compatible URL) over fetch + SSE. Tool-call deltas are
// assembled by index (arguments may arrive before the id, split across
// chunks); reasoning_content becomes thinking and is echoed back on
// assistant messages.
import type { Logger } from "pino";
import { newToolUseId } from "../ids.js";
import { endpointOf, ProviderError } from "../errors.js";
import type { Message } from "../messages.js";
import { postToProvider } from "./http.js";
import { AUTO_MODEL, type ThinkingFamily } from "./registry.js";
import { readSse } from "./sse.js";
import { openAiThinkingFields } from "./thinking.js";
import { parseToolArguments } from "./tool-arguments.js";
import type {
  HttpProviderSettings,
  Provider,
  ProviderEvent,
  ProviderRequest,
  ProviderUsage,
  StopReason,
} from "./types.js";

type OpenAiMessage = Record<string, unknown>;

/** Our conversation in Chat Completions form: tool results become role "tool" messages. */
export function toOpenAiMessages(system: string, messages: readonly Message[]): OpenAiMessage[] {
  const out: OpenAiMessage[] = [{ role: "system", content: system }];
  for (const message of messages) {
    if (message.role === "assistant") {
      const text = message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      const reasoning = message.content.flatMap((b) => (b.type === "thinking" ? [b.thinking] : [])).join("");
      const calls = message.content.flatMap((b) =>
        b.type === "tool_use"
          ? [{ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input) } }]
          : [],
      );
      const entry: OpenAiMessage = { role: "assistant", content: text.length > 0 ? text : null };
      if (calls.length > 0) entry.tool_calls = calls;
      if (reasoning.length > 0) entry.reasoning_content = reasoning;
      out.push(entry);
      continue;
    }
    for (const block of message.content) {
      if (block.type === "tool_result")
        out.push({ role: "tool", tool_call_id: block.toolUseId, content: block.content });
    }
    const parts: Array<Record<string, unknown>> = [];
    const texts: string[] = [];
    for (const b of message.content) {
      if (b.type === "text") {
        parts.push({ type: "text", text: b.text });
        texts.push(b.text);
      } else if (b.type === "image") {
        parts.push({ type: "image_url", image_url: { url: `data:${b.mediaType};base64,${b.data}` } });
      }
    }
    if (parts.length === 0) continue;
    out.push({ role: "user", content: parts.length === texts.length ? texts.join("\n") : parts });
  }
  return out;
}

function mapFinish(reason: string | null | undefined): StopReason {
  if (reason === "tool_calls" || reason === "function_call") return "tool_use";
  if (reason === "length") return "max_tokens";
  return "end_turn";
}

interface PendingCall {
  id?: string;
  name?: string;
  args: string;
  started: boolean;
}

interface ChunkChoice {
  delta?: {
    content?: string | null;
    reasoning_content?: string | null;
    tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
  };
  message?: ChunkChoice["delta"] & {
    tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }>;
  };
  finish_reason?: string | null;
}

interface Chunk {
  choices?: ChunkChoice[];
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number };
  };
  error?: { message?: string; code?: string | number; type?: string };
}

function usageOf(raw: Chunk["usage"]): ProviderUsage | undefined {
  if (!raw) return undefined;
  const cached = raw.prompt_tokens_details?.cached_tokens;
  return {
    inputTokens: raw.prompt_tokens ?? 0,
    outputTokens: raw.completion_tokens ?? 0,
    ...(cached !== undefined ? { cachedInputTokens: cached } : {}),
  };
}

/** Models discovered at endpoints configured without one (base URL -> first listed model). */
const discoveredModels = new Map<string, string>();

export class OpenAIChatProvider implements Provider {
  readonly name: string;
  private discovered: string | undefined;

  constructor(
    private readonly settings: HttpProviderSettings,
    private readonly logger: Logger,
  ) {
    this.name = settings.name;
  }

  get model(): string {
    return this.discovered ?? this.settings.model;
  }

  private get base(): string {
    return this.settings.baseUrl.replace(/\/+$/, "");
  }

  /** The configured model, or the endpoint's first listed model when configured as "auto". */
  private async resolveModel(signal: AbortSignal): Promise<string> {
    const s = this.settings;
    if (s.model !== AUTO_MODEL) return s.model;
    const cached = discoveredModels.get(this.base);
    if (cached) return (this.discovered = cached);
    let response: Response;
    try {
      response = await fetch(`${this.base}/models`, {
        headers: s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {},
        signal: AbortSignal.any([signal, AbortSignal.timeout(s.idleTimeoutMs)]),
      });
    } catch (error) {
      if (signal.aborted) throw error;
      const cause = (error as { cause?: { code?: unknown } }).cause?.code;
      throw new ProviderError(
        "retryable",
        `cannot list the endpoint's models: connection failed${typeof cause === "string" ? ` (${cause})` : ""}`,
        undefined,
        "MODEL_UNREACHABLE",
        endpointOf(this.base),
      );
    }
    if (response.status === 401 || response.status === 403) {
      throw new ProviderError(
        "authentication",
        `listing models: HTTP ${response.status}`,
        response.status,
        undefined,
        endpointOf(this.base),
      );
    }
    const data = (await response.json().catch(() => undefined)) as
      { data?: Array<{ id?: unknown }> } | undefined;
    const id = data?.data?.find((m) => typeof m.id === "string")?.id;
    if (!response.ok || typeof id !== "string") {
      throw new ProviderError(
        "fatal",
        `no model configured and GET /models gave none (HTTP ${response.status}); set IAC_CODE_MODEL`,
        response.status === 404 ? 404 : undefined,
        undefined,
        endpointOf(this.base),
      );
    }
    this.logger.info({ provider: s.name, model: id }, "using the endpoint's first model");
    discoveredModels.set(this.base, id);
    return (this.discovered = id);
  }

  private body(request: ProviderRequest, model: string): Record<string, unknown> {
    const s = this.settings;
    const body: Record<string, unknown> = {
      model,
      messages: toOpenAiMessages(request.system, request.messages),
      stream: true,
      stream_options: { include_usage: true },
      ...openAiThinkingFields(s.thinkingFamily as ThinkingFamily, model, s.thinking, s.maxTokens),
    };
    if (request.kind === "stream" && request.tools.length > 0) {
      body.tools = request.tools.map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description, parameters: t.inputSchema },
      }));
    }
    return body;
  }

  async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
    const s = this.settings;
    const model = await this.resolveModel(request.signal);
    const { response, abort } = await postToProvider(s, this.logger, {
      url: `${this.base}/chat/completions`,
      headers: s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {},
      body: this.body(request, model),
      signal: request.signal,
    });
    try {
      const type = response.headers.get("content-type") ?? "";
      if (type.includes("application/json")) {
        yield* this.fromCompletion(await response.text());
        return;
      }
      if (!response.body) throw new ProviderError("fatal", "response without body");
      yield* this.fromStream(response.body, request.signal);
    } finally {
      abort();
    }
  }

  /** Some servers ignore stream: true and answer with one completion object. */
  private *fromCompletion(text: string): Generator<ProviderEvent> {
    let data: Chunk;
    try {
      data = JSON.parse(text) as Chunk;
    } catch {
      throw new ProviderError("fatal", "bad response: the body is not JSON");
    }
    if (data.error) throw new ProviderError("fatal", `error body: ${data.error.message ?? "unknown"}`);
    const choice = data.choices?.[0];
    if (!choice?.message) throw new ProviderError("fatal", "bad response: no choices");
    const message = choice.message;
    if (message.reasoning_content) yield { type: "thinking_delta", text: message.reasoning_content };
    if (message.content) yield { type: "text_delta", text: message.content };
    for (const call of message.tool_calls ?? []) {
      const id = call.id ?? newToolUseId();
      const name = call.function?.name ?? "";
      yield { type: "tool_use_start", id, name };
      const args = call.function?.arguments ?? "";
      if (args) yield { type: "tool_input_delta", id, partialJson: args };
      yield { type: "tool_use_end", id, name, ...parseToolArguments(args) };
    }
    const usage = usageOf(data.usage);
    yield {
      type: "message_end",
      stopReason: (message.tool_calls?.length ?? 0) > 0 ? "tool_use" : mapFinish(choice.finish_reason),
      ...(usage ? { usage } : {}),
    };
  }

  private async *fromStream(
    body: ReadableStream<Uint8Array>,
    signal: AbortSignal,
  ): AsyncGenerator<ProviderEvent> {
    const calls = new Map<number, PendingCall>();
    let finish: string | null | undefined;
    let usage: ProviderUsage | undefined;
    let done = false;
    for await (const event of readSse(body, { idleTimeoutMs: this.settings.idleTimeoutMs, signal })) {
      if (event.data === "[DONE]") {
        done = true;
        break;
      }
      let chunk: Chunk;
      try {
        chunk = JSON.parse(event.data) as Chunk;
      } catch {
        throw new ProviderError("fatal", "bad response: a stream chunk is not JSON");
      }
      if (chunk.error) {
        const code = String(chunk.error.code ?? chunk.error.type ?? "");
        const kind = /rate|overload|timeout|unavailable|429|5\d\d/i.test(code) ? "retryable" : "fatal";
        throw new ProviderError(kind, `stream error ${code}: ${chunk.error.message ?? ""}`);
      }
      usage = usageOf(chunk.usage) ?? usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta ?? {};
      if (delta.reasoning_content) yield { type: "thinking_delta", text: delta.reasoning_content };
      if (delta.content) yield { type: "text_delta", text: delta.content };
      for (const part of delta.tool_calls ?? []) {
        const index = part.index ?? 0;
        let call = calls.get(index);
        if (!call) {
          call = { args: "", started: false };
          calls.set(index, call);
        }
        if (part.id && !call.id) call.id = part.id;
        if (part.function?.name && !call.name) call.name = part.function.name;
        const args = part.function?.arguments ?? "";
        call.args += args;
        if (!call.started && call.id && call.name) {
          call.started = true;
          yield { type: "tool_use_start", id: call.id, name: call.name };
          if (call.args) yield { type: "tool_input_delta", id: call.id, partialJson: call.args };
        } else if (call.started && args && call.id) {
          yield { type: "tool_input_delta", id: call.id, partialJson: args };
        }
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    if (!done && !finish)
      throw new ProviderError("retryable", "the stream ended before the message was complete");
    const ordered = [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
    for (const call of ordered) {
      const id = call.id ?? newToolUseId();
      const name = call.name ?? "";
      if (!call.started) {
        yield { type: "tool_use_start", id, name };
        if (call.args) yield { type: "tool_input_delta", id, partialJson: call.args };
      }
      yield { type: "tool_use_end", id, name, ...parseToolArguments(call.args) };
    }
    yield {
      type: "message_end",
      stopReason: ordered.length > 0 ? "tool_use" : mapFinish(finish),
      ...(usage ? { usage } : {}),
    };
  }
}
