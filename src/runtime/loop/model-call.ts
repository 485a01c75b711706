// One model call as runtime events: message_start, then text, thinking and
// tool-call events as they stream in (tool-use ids made unique in the
// session), while the assistant message is collected. The caller ends the
// message (message_end), after it has recorded what the call produced.
import { isAbortError, ProviderError } from "../errors.js";
import { newMessageId } from "../ids.js";
import { effectiveContext, type Message } from "../messages.js";
import type { Provider, ProviderEvent, StopReason, ToolDefinition } from "../providers/types.js";
import type { RuntimeEvent, TokenUsage } from "../seam.js";
import {
  captureMessageContent,
  failSpan,
  SpanKind,
  startSpan,
  type Span,
} from "../../server/tracing/index.js";
import { AssistantCollector } from "./collector.js";
import { ToolIdMap } from "./tool-ids.js";

export type ModelCallOutcome =
  | {
      status: "complete";
      messageId: string;
      /** Undefined when the model sent nothing at all. */
      assistant: Message | undefined;
      hasToolCalls: boolean;
      text: string;
      stopReason: StopReason;
      usage?: TokenUsage;
    }
  /** cancelled: the turn was aborted; stream_error: the call failed, `error` says why. */
  | { status: "cancelled"; messageId: string; text: string }
  | { status: "stream_error"; messageId: string; text: string; error: unknown };

export async function* callModel(args: {
  provider: Provider;
  system: string;
  /** The whole conversation; the model is sent its effective context. */
  conversation: readonly Message[];
  tools: readonly ToolDefinition[];
  signal: AbortSignal;
}): AsyncGenerator<RuntimeEvent, ModelCallOutcome> {
  const { provider } = args;
  const messageId = newMessageId();
  const collector = new AssistantCollector();
  let end: Extract<ProviderEvent, { type: "message_end" }> | undefined;
  const span = modelCallSpan(provider, args.conversation);
  let result: ModelCallOutcome | undefined;
  try {
    result = yield* streamCall(args, messageId, collector, (e) => (end = e));
    if (!result && !end) {
      const error = new ProviderError("retryable", "stream ended without message_end");
      result = { status: "stream_error", messageId, text: collector.fullText, error };
    }
    result ??= completed(provider, messageId, collector, end!, span);
    return result;
  } finally {
    // Also when the caller abandons the generator (no result then).
    if (span) {
      if (result?.status !== "complete") failSpan(span, new Error(), result?.status ?? "cancelled");
      span.end();
    }
  }
}

/** The span of one model call (GenAI semantic conventions); undefined while tracing is off. */
function modelCallSpan(provider: Provider, conversation: readonly Message[]): Span | undefined {
  const span = startSpan("iac-code.runtime", `chat ${provider.model}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": provider.name,
      "gen_ai.system": provider.name,
      "gen_ai.request.model": provider.model,
    },
  });
  if (span && captureMessageContent()) {
    const last = conversation.at(-1);
    if (last) span.setAttribute("gen_ai.input.messages", JSON.stringify([last]).slice(0, MAX_CAPTURED_CHARS));
  }
  return span;
}

/** Captured message text is cut here (a span is not a transcript). */
const MAX_CAPTURED_CHARS = 8000;

async function* streamCall(
  args: Parameters<typeof callModel>[0],
  messageId: string,
  collector: AssistantCollector,
  ended: (event: Extract<ProviderEvent, { type: "message_end" }>) => void,
): AsyncGenerator<RuntimeEvent, ModelCallOutcome | undefined> {
  const { provider, signal } = args;
  yield { type: "message_start", messageId };
  try {
    const stream = provider.stream({
      system: args.system,
      messages: effectiveContext(args.conversation),
      tools: args.tools,
      kind: "stream",
      signal,
    });
    const ids = new ToolIdMap(args.conversation);
    for await (const raw of stream) {
      const event = ids.map(raw);
      collector.add(event);
      if (event.type === "message_end") ended(event);
      else {
        const projected = toRuntimeEvent(messageId, event);
        if (projected) yield projected;
      }
    }
  } catch (error) {
    if (signal.aborted || isAbortError(error))
      return { status: "cancelled", messageId, text: collector.fullText };
    return { status: "stream_error", messageId, text: collector.fullText, error };
  }
  return undefined;
}

function completed(
  provider: Provider,
  messageId: string,
  collector: AssistantCollector,
  end: Extract<ProviderEvent, { type: "message_end" }>,
  span: Span | undefined,
): ModelCallOutcome {
  const usage: TokenUsage | undefined = end.usage && {
    inputTokens: end.usage.inputTokens,
    outputTokens: end.usage.outputTokens,
    totalTokens: end.usage.inputTokens + end.usage.outputTokens,
    ...(end.usage.cachedInputTokens !== undefined ? { cachedInputTokens: end.usage.cachedInputTokens } : {}),
    provider: provider.name,
    model: provider.model,
  };
  const stopReason = collector.hasToolCalls ? "tool_use" : end.stopReason;
  if (span) {
    span.setAttributes({
      "gen_ai.response.model": provider.model,
      "gen_ai.response.finish_reasons": [stopReason],
      ...(usage
        ? { "gen_ai.usage.input_tokens": usage.inputTokens, "gen_ai.usage.output_tokens": usage.outputTokens }
        : {}),
    });
    if (captureMessageContent())
      span.setAttribute(
        "gen_ai.output.messages",
        JSON.stringify([{ role: "assistant", text: collector.fullText }]).slice(0, MAX_CAPTURED_CHARS),
      );
  }
  return {
    status: "complete",
    messageId,
    assistant: collector.toMessage(messageId),
    hasToolCalls: collector.hasToolCalls,
    text: collector.fullText,
    stopReason,
    ...(usage ? { usage } : {}),
  };
}

/** What clients see of a streamed provider event (empty deltas are dropped; arguments only as a length). */
function toRuntimeEvent(messageId: string, event: ProviderEvent): RuntimeEvent | undefined {
  switch (event.type) {
    case "text_delta":
      return event.text ? { type: "text_delta", messageId, text: event.text } : undefined;
    case "thinking_delta":
      return event.text ? { type: "thinking_delta", messageId, text: event.text } : undefined;
    case "tool_use_start":
      return { type: "tool_use_start", toolUseId: event.id, name: event.name };
    case "tool_input_delta":
      return { type: "tool_input_delta", toolUseId: event.id, partialJsonLength: event.partialJson.length };
    case "tool_use_end":
      return { type: "tool_use_end", toolUseId: event.id, name: event.name, input: event.input };
    case "message_end":
      return undefined;
  }
}
