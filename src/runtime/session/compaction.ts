// Compaction: when the context nears the model's window, the older part of
// the conversation is summarised by the model and a marker message with the
// summary is put before the first message kept; the model is sent only what
// follows the marker. A failed compaction is reported and the turn goes on.
import { errorMessage, redactSecrets } from "../errors.js";
import {
  compactionSplit,
  contextWindowFor,
  estimateTokens,
  renderForSummary,
  SUMMARY_SYSTEM_PROMPT,
} from "../loop/context.js";
import { textMessage, type Message } from "../messages.js";
import type { Provider } from "../providers/types.js";
import type { RuntimeEvent } from "../seam.js";
import type { SessionContext } from "./session-context.js";
import type { Turn } from "./turn.js";
import { recordUsage } from "./usage.js";

export async function* compactIfNeeded(
  session: SessionContext,
  turn: Turn,
  provider: Provider,
  /** Appended to the summary call's system prompt (a pipeline step's markers, so a scripted model knows it). */
  summaryMarkers = "",
): AsyncGenerator<RuntimeEvent> {
  const { deps, conversation } = session;
  const { limits } = deps;
  const context = conversation.effective();
  const window = limits.contextWindow ?? provider.contextWindow ?? contextWindowFor(provider.model);
  const original = estimateTokens(turn.system, context, turn.toolDefs);
  if (original < window * limits.compactThreshold) return;
  const offset = conversation.messages.length - context.length;
  const split = compactionSplit(context, limits.keepTurns);
  if (split <= 0) return;
  yield { type: "compaction", phase: "started", originalTokens: original };
  try {
    const summary = await summarise(session, turn, provider, context.slice(0, split), summaryMarkers);
    const text = `Summary of the earlier conversation:\n${summary}`;
    const marker: Message = { ...textMessage("user", text), kind: "compaction_summary" };
    await conversation.insertMarker(marker, offset + split);
    const compacted = estimateTokens(turn.system, conversation.effective(), turn.toolDefs);
    yield {
      type: "compaction",
      phase: "finished",
      originalTokens: original,
      compactedTokens: compacted,
      summary,
    };
  } catch (error) {
    if (turn.signal.aborted) return;
    session.logger.warn({ err: redactSecrets(errorMessage(error), turn.secrets) }, "compaction failed");
    yield { type: "compaction", phase: "failed", originalTokens: original };
  }
}

/** The model's summary of `older` (a side call without tools); throws when it is empty. */
async function summarise(
  session: SessionContext,
  turn: Turn,
  provider: Provider,
  older: readonly Message[],
  markers: string,
): Promise<string> {
  let summary = "";
  const stream = provider.stream({
    system: markers ? `${SUMMARY_SYSTEM_PROMPT}\n${markers}` : SUMMARY_SYSTEM_PROMPT,
    messages: [textMessage("user", renderForSummary(older))],
    tools: [],
    kind: "complete",
    signal: turn.signal,
  });
  for await (const event of stream) {
    if (event.type === "text_delta") summary += event.text;
    if (event.type === "message_end" && event.usage) {
      recordUsage(session.store, session.logger, "compaction", {
        inputTokens: event.usage.inputTokens,
        outputTokens: event.usage.outputTokens,
        totalTokens: event.usage.inputTokens + event.usage.outputTokens,
        provider: provider.name,
        model: provider.model,
      });
    }
  }
  summary = summary.trim();
  if (!summary) throw new Error("empty summary");
  return summary;
}
