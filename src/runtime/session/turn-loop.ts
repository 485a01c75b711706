// The agent loop of a turn: call the model, record its message and usage,
// run the tool round it asked for, and go again, until the model stops
// calling tools, the turn is cancelled or the round limit is reached.
// Compaction runs before a model call when the context nears the window.
import { newMessageId } from "../ids.js";
import { callModel } from "../loop/model-call.js";
import { createTurnProvider } from "../providers/factory.js";
import type { RuntimeEvent } from "../seam.js";
import { compactIfNeeded } from "./compaction.js";
import type { SessionContext } from "./session-context.js";
import { runToolRound } from "./tool-round.js";
import type { Turn } from "./turn.js";
import { turnErrorEvent } from "./turn-errors.js";
import { recordUsage } from "./usage.js";

export async function* runAgentLoop(session: SessionContext, turn: Turn): AsyncGenerator<RuntimeEvent> {
  const { deps, conversation, logger } = session;
  for (let round = 0; ; round++) {
    if (turn.signal.aborted) return;
    // MCP warnings and the servers' snapshot: at the start, and after a round in which a server died.
    if (turn.mcp) yield* turn.mcp.events();
    if (round >= deps.limits.maxTurns) {
      yield { type: "message_end", messageId: newMessageId(), stopReason: "max_turns", text: "" };
      return;
    }
    turn.provider ??= createTurnProvider(deps.providers, turn.overrides);
    yield* compactIfNeeded(session, turn, turn.provider);
    if (turn.signal.aborted) return;

    const call = yield* callModel({
      provider: turn.provider,
      system: turn.system,
      conversation: conversation.messages,
      tools: turn.toolDefs,
      signal: turn.signal,
    });
    const { messageId, text } = call;
    if (call.status !== "complete") {
      yield { type: "message_end", messageId, stopReason: call.status, text };
      if (call.status === "stream_error") yield turnErrorEvent(logger, turn.lang, call.error, turn.secrets);
      return;
    }
    if (call.assistant) await conversation.append(call.assistant);
    if (call.usage) recordUsage(session.store, logger, messageId, call.usage);
    const { usage, stopReason } = call;
    yield { type: "message_end", messageId, stopReason, ...(usage ? { usage } : {}), text };
    if (!call.assistant || !call.hasToolCalls) return;
    const completed = yield* runToolRound(session, turn, call.assistant);
    if (!completed) return;
  }
}
