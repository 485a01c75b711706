// The conversation of a session in memory, written through to the store.
// The results of an assistant message's tool calls live in one user message
// right after it (id <assistant>_results), in the order of the calls; the
// store keeps them as one row per result and rebuilds this shape on load.
import type { Logger } from "pino";
import {
  effectiveContext,
  sortResultsByCall,
  toolResults,
  toolUses,
  type Message,
  type ToolResultBlock,
  type ToolUseBlock,
} from "../messages.js";
import { resultsMessageId, type SessionData } from "./store.js";

/** The result of a call that was running when the process stopped (it may have had its effect). */
export const INTERRUPTED_BY_RESTART =
  "The tool call was interrupted before it finished (the server restarted).";

export class Conversation {
  constructor(
    readonly messages: Message[],
    private readonly store: SessionData,
  ) {}

  /** What the model is sent: everything from the last compaction marker on. */
  effective(): Message[] {
    return effectiveContext(this.messages);
  }

  find(id: string): Message | undefined {
    return this.messages.find((m) => m.id === id);
  }

  async append(message: Message): Promise<void> {
    this.messages.push(message);
    await this.store.appendMessage(message);
  }

  /** Puts a compaction marker at `index`, before the first message it keeps. */
  async insertMarker(marker: Message, index: number): Promise<void> {
    const keptFirst = this.messages[index];
    this.messages.splice(index, 0, marker);
    await this.store.appendMarker(marker, keptFirst.id);
  }

  /** Results already recorded for an assistant message (after a restart or a suspended round). */
  resultsMessage(assistantId: string): Message | undefined {
    const index = this.messages.findIndex((m) => m.id === assistantId);
    const next = index >= 0 ? this.messages[index + 1] : undefined;
    return next?.id === resultsMessageId(assistantId) ? next : undefined;
  }

  /** The tool-use ids of an assistant message that have a result. */
  resultIds(assistantId: string): Set<string> {
    const holder = this.resultsMessage(assistantId);
    return new Set(holder ? toolResults(holder).map((b) => b.toolUseId) : []);
  }

  async recordResult(assistant: Message, block: ToolResultBlock): Promise<void> {
    let holder = this.resultsMessage(assistant.id);
    if (!holder) {
      holder = {
        id: resultsMessageId(assistant.id),
        role: "user",
        content: [],
        createdAt: new Date().toISOString(),
      };
      const index = this.messages.findIndex((m) => m.id === assistant.id);
      this.messages.splice(index + 1, 0, holder);
    }
    holder.content.push(block);
    sortResultsByCall(assistant, holder);
    await this.store.appendToolResult(assistant.id, block);
  }

  /** Gives every call of `assistant` that has no result yet an error result saying why. */
  async closeOpenCalls(assistant: Message, why: (use: ToolUseBlock) => string): Promise<void> {
    const recorded = this.resultIds(assistant.id);
    for (const use of toolUses(assistant)) {
      if (recorded.has(use.id)) continue;
      await this.recordResult(assistant, {
        type: "tool_result",
        toolUseId: use.id,
        content: why(use),
        isError: true,
      });
    }
  }

  /**
   * After a restore: every tool call without a result gets an "interrupted"
   * error result, except in the round that can still resume. The store can
   * attach results only to the last exchange, so gaps further back are
   * filled in memory (again at every load).
   */
  /**
   * The last assistant message, when a restart cut its calls before they all
   * had a result and every call cut is `safe` to run again (read-only, or
   * running twice is running once): its round can simply run again.
   */
  cutRound(safe: (use: ToolUseBlock) => boolean): Message | undefined {
    const last = this.messages.findLast((m) => m.role === "assistant");
    if (
      !last ||
      !this.messages.slice(this.messages.indexOf(last) + 1).every((m) => m.id === resultsMessageId(last.id))
    )
      return undefined;
    const done = this.resultIds(last.id);
    const cut = toolUses(last).filter((u) => !done.has(u.id));
    return cut.length > 0 && cut.every(safe) ? last : undefined;
  }

  async repair(resumable: string | undefined, logger: Logger): Promise<void> {
    for (let i = 0; i < this.messages.length; i++) {
      const message = this.messages[i];
      if (message.role !== "assistant" || message.id === resumable) continue;
      const uses = toolUses(message);
      if (uses.length === 0) continue;
      const have = this.resultIds(message.id);
      const missing = uses.filter((u) => !have.has(u.id));
      if (missing.length === 0) continue;
      const isLast = this.messages.slice(i + 1).every((m) => m.id === resultsMessageId(message.id));
      if (isLast) {
        await this.closeOpenCalls(message, () => INTERRUPTED_BY_RESTART);
      } else {
        let target = this.resultsMessage(message.id);
        if (!target) {
          target = {
            id: resultsMessageId(message.id),
            role: "user",
            content: [],
            createdAt: message.createdAt,
          };
          this.messages.splice(i + 1, 0, target);
        }
        for (const use of missing) {
          target.content.push({
            type: "tool_result",
            toolUseId: use.id,
            content: INTERRUPTED_BY_RESTART,
            isError: true,
          });
        }
      }
      logger.info({ repaired: missing.length }, "interrupted tool calls repaired");
    }
  }
}
