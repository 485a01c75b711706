// A tool round: the tool calls of one assistant message. Every call is
// decided first (asking the user when needed), then the allowed ones run in
// order, consecutive concurrency-safe ones in parallel batches. When the
// turn is cancelled, every call left without a result gets one saying so;
// when the session closes instead, the round stays as a restart will find it.
import { toolUses, type Message } from "../messages.js";
import { endToolCallSpan, toolCallSpan } from "./tool-span.js";
import type { RuntimeEvent } from "../seam.js";
import type { SessionContext } from "./session-context.js";
import { prepareCall, runnable, type PreparedCall, type RunnableCall } from "./tool-call.js";
import { runBatch } from "./tool-execution.js";
import type { Turn } from "./turn.js";
import { SessionClosedError } from "./turn-errors.js";

const MAX_PARALLEL_TOOLS = 10;
const DENIED_AS_CANCELLED = "Permission denied: the request was cancelled.";

/** Returns true when every call has a result and the loop may go on; false when the turn was cancelled. */
export async function* runToolRound(
  session: SessionContext,
  turn: Turn,
  assistant: Message,
): AsyncGenerator<RuntimeEvent, boolean> {
  const { conversation, rounds } = session;
  const done = conversation.resultIds(assistant.id);
  const round = rounds.begin(assistant.id);

  const calls: PreparedCall[] = [];
  for (const use of toolUses(assistant)) {
    if (done.has(use.id)) continue;
    const call = await prepareCall(turn, use, round, session.workspace);
    calls.push(call);
    if (!runnable(call)) continue;
    const saved = round.decisions[use.id];
    if (saved) {
      call.allowed = saved.allowed;
      call.reason = saved.reason;
      continue;
    }
    if (turn.signal.aborted) break;
    const decision = yield* session.permissions.decide(turn, round, call);
    call.allowed = decision.allowed;
    call.reason = decision.reason;
    round.decisions[use.id] = decision;
    if (round.inputs.length > 0) await rounds.persist(round);
  }

  for (let i = 0; i < calls.length && !turn.signal.aborted;) {
    const call = calls[i];
    if (!runnable(call) || !call.allowed) {
      yield* refuse(session, assistant, call);
      i++;
      continue;
    }
    const batch = batchFrom(call, calls.slice(i + 1));
    i += batch.length;
    yield* runBatch(session, turn, assistant, round, batch);
  }

  if (turn.signal.aborted) {
    // Closing (shutdown) is not cancelling: the round stays as a restart would find it.
    if (session.lifetime.closed) throw new SessionClosedError();
    await conversation.closeOpenCalls(assistant, (use) =>
      round.decisions[use.id]?.allowed === false
        ? DENIED_AS_CANCELLED
        : "Cancelled by the user before the tool finished.",
    );
  }
  await rounds.end();
  return !turn.signal.aborted;
}

/** An allowed call, with the allowed concurrency-safe calls right after it when it is one too. */
function batchFrom(first: RunnableCall, following: readonly PreparedCall[]): RunnableCall[] {
  const batch = [first];
  if (!first.tool.isConcurrencySafe(first.input)) return batch;
  for (const next of following) {
    if (batch.length >= MAX_PARALLEL_TOOLS) break;
    if (!runnable(next) || !next.allowed || !next.tool.isConcurrencySafe(next.input)) break;
    batch.push(next);
  }
  return batch;
}

/** The result of a call that does not run: its early error, or the permission denial. */
async function* refuse(
  session: SessionContext,
  assistant: Message,
  call: PreparedCall,
): AsyncGenerator<RuntimeEvent> {
  endToolCallSpan(toolCallSpan(call), "refused");
  const content = call.error ?? (call.reason === "cancelled" ? DENIED_AS_CANCELLED : "Permission denied.");
  await session.conversation.recordResult(assistant, {
    type: "tool_result",
    toolUseId: call.use.id,
    content,
    isError: true,
  });
  yield { type: "tool_result", toolUseId: call.use.id, name: call.use.name, result: content, isError: true };
}

/** A new message while a restored round waits: its open permissions are denied and its calls closed. */
export async function supersedeRound(session: SessionContext): Promise<void> {
  const round = session.rounds.round;
  if (!round) return;
  for (const entry of round.inputs) {
    if (entry.answer || entry.request.kind !== "permission") continue;
    await session.permissions.supersede(entry.request);
  }
  const assistant = session.conversation.find(round.assistantMessageId);
  if (assistant) {
    await session.conversation.closeOpenCalls(
      assistant,
      () => "Not run: the user sent a new message instead of answering.",
    );
  }
  await session.rounds.end();
}
