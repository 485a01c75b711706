// Token usage of a session: one usage.jsonl line per model call (the
// compaction call included). A line that cannot be written is logged; it
// never fails the turn.
import type { Logger } from "pino";
import { errorMessage } from "../errors.js";
import type { TokenUsage } from "../seam.js";
import type { SessionData } from "./store.js";

export function recordUsage(store: SessionData, logger: Logger, messageId: string, usage: TokenUsage): void {
  store
    .appendUsage({
      messageId,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      totalTokens: usage.totalTokens,
      ...(usage.cachedInputTokens !== undefined ? { cachedInputTokens: usage.cachedInputTokens } : {}),
      provider: usage.provider ?? "",
      model: usage.model ?? "",
    })
    .catch((error: unknown) => logger.warn({ err: errorMessage(error) }, "usage record not written"));
}
