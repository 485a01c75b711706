// Runs allowed tool calls. One call gets its time limit, its context
// (progress, questions to the user, the cloud), a spill of results too large
// for the model to the session directory, and an error text for each way it
// can fail. A batch of concurrency-safe calls runs in parallel, their events
// merged through one Channel in the order they happen.
import { errorMessage, redactSecrets, ToolError } from "../errors.js";
import { withSpan } from "../../server/tracing/index.js";
import { endToolCallSpan, toolCallSpan } from "./tool-span.js";
import { newErrorId } from "../ids.js";
import { Channel } from "../loop/channel.js";
import type { Message, ToolResultBlock } from "../messages.js";
import type { ArtifactPayload, RuntimeEvent } from "../seam.js";
import { fsToolError } from "../tools/fs-errors.js";
import type { ToolContext } from "../tools/types.js";
import type { SessionContext } from "./session-context.js";
import type { PendingRound } from "./store.js";
import type { RunnableCall } from "./tool-call.js";
import type { Turn } from "./turn.js";

/** How much of a large result the model sees. */
const PREVIEW_CHARS = 2000;

interface Executed {
  block: ToolResultBlock;
  /** What clients get as the result (structured when the tool gives it). */
  data: unknown;
  artifact?: ArtifactPayload;
}

/** Runs a batch of allowed calls in parallel; each result is recorded and announced as it arrives. */
export async function* runBatch(
  session: SessionContext,
  turn: Turn,
  assistant: Message,
  round: PendingRound,
  batch: RunnableCall[],
): AsyncGenerator<RuntimeEvent> {
  const channel = new Channel<RuntimeEvent>();
  const all = Promise.all(
    batch.map(async (call) => {
      const span = toolCallSpan(call);
      let executed: Executed | undefined;
      try {
        executed = await withSpan(span, () => execute(session, turn, round, call, channel));
      } finally {
        endToolCallSpan(span, !executed ? "cancelled" : executed.block.isError ? "error" : "ok");
      }
      if (!executed) return;
      await session.conversation.recordResult(assistant, executed.block);
      channel.push({
        type: "tool_result",
        toolUseId: call.use.id,
        name: call.use.name,
        result: executed.data,
        isError: executed.block.isError,
        ...(executed.artifact ? { artifact: executed.artifact } : {}),
      });
    }),
  );
  all.catch(() => undefined);
  yield* channel.drain(all);
  await all;
}

/** Runs one tool; undefined when the turn was cancelled before it finished (the round records that). */
async function execute(
  session: SessionContext,
  turn: Turn,
  round: PendingRound,
  call: RunnableCall,
  channel: Channel<RuntimeEvent>,
): Promise<Executed | undefined> {
  const { deps, store, rounds } = session;
  const { tool } = call;
  if (round.inputs.length > 0 && !tool.isReadOnly(call.input)) {
    // A restart must not run it again: it may have had its effect.
    round.started = [...(round.started ?? []), call.use.id];
    await rounds.persist(round);
  }
  const timeoutMs = tool.timeoutMs ?? deps.limits.toolTimeoutMs;
  const timeout = new AbortController();
  const timer = timeoutMs > 0 ? setTimeout(() => timeout.abort(), timeoutMs) : undefined;
  const signal = AbortSignal.any([turn.signal, timeout.signal]);
  const ctx: ToolContext = {
    workspace: session.workspace,
    signal,
    toolUseId: call.use.id,
    language: turn.lang,
    progress: (progress, mcp) =>
      channel.push({
        type: "tool_progress",
        toolUseId: call.use.id,
        name: tool.name,
        progress,
        ...(mcp ? { mcp } : {}),
      }),
    askUser: (request) => rounds.ask(round, request, turn.signal, (event) => channel.push(event)),
    asked: (inputId) => rounds.asked(round, inputId),
    ...(turn.cloud ? { cloud: turn.cloud } : {}),
  };
  const block = (content: string, isError: boolean): ToolResultBlock => ({
    type: "tool_result",
    toolUseId: call.use.id,
    content,
    isError,
  });
  try {
    const result = await tool.run(call.input, ctx);
    let content = result.content;
    let data: unknown = result.data ?? result.content;
    if (content.length > deps.limits.largeResultChars) {
      const storedAs = await store.storeLargeResult(call.use.id, content);
      const note = `\n\n[Result cut: ${content.length} characters; the full text is stored with the session as ${storedAs}. Narrow the request to see more.]`;
      content = content.slice(0, PREVIEW_CHARS) + note;
      data = { preview: content, truncated: true, originalLength: result.content.length };
    }
    return {
      block: block(content, result.isError === true),
      data,
      ...(result.artifact ? { artifact: result.artifact } : {}),
    };
  } catch (error) {
    if (turn.signal.aborted) return undefined;
    if (timeout.signal.aborted) {
      const limit = timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`;
      const text = `${tool.name} timed out after ${limit}.`;
      return { block: block(text, true), data: text };
    }
    const readable = error instanceof ToolError ? error : fsToolError(error, session.workspace);
    if (readable) return { block: block(readable.message, true), data: readable.message };
    const errorId = newErrorId();
    session.logger.error(
      { errorId, tool: tool.name, err: redactSecrets(errorMessage(error), turn.secrets) },
      "tool failed",
    );
    const text = `${tool.name} failed unexpectedly (error id ${errorId}).`;
    return { block: block(text, true), data: text };
  } finally {
    if (timer) clearTimeout(timer);
  }
}
