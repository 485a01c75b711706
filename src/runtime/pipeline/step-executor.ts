// One attempt of an agent step: an agent loop with the step's own transcript
// (part transcript/<attempt> of the session: a fresh conversation per attempt,
// its waiting round and tool log), its
// filtered tools plus complete_step, and a system prompt that carries the
// step's instructions. The loop ends when complete_step accepted a
// conclusion or a rollback, after two nudges when the model stops without
// calling it, or when the conclusion retries are used up. Everything the loop
// does is published as pipeline envelopes with the step's coordinates.
// A restarted process continues the same attempt from its transcript.
import { failSpan, startSpan, withSpanSteps } from "../../server/tracing/index.js";
import { callModel } from "../loop/model-call.js";
import { compactIfNeeded } from "../session/compaction.js";
import { messageText, textMessage, type Message, type ToolUseBlock } from "../messages.js";
import { openSessionData } from "../session/store.js";
import { runToolRound } from "../session/tool-round.js";
import type { Turn } from "../session/turn.js";
import { SessionClosedError, turnErrorEvent } from "../session/turn-errors.js";
import { restoreTranscript, transcriptContext } from "../session/transcript-restore.js";
import { recordUsage } from "../session/usage.js";
import type { RuntimeEvent } from "../seam.js";
import { stepTurn, type StepAttempt, type StepEnv, type StepOutcome } from "./step-attempt.js";
import { StepRun } from "./step-run.js";

/** How often a model that stops without complete_step is reminded. */
const MAX_NUDGES = 2;
const NUDGE_PREFIX = "[pipeline] You have not called complete_step.";
const SUPPLEMENT_PREFIX = "[pipeline] The user added, while this step was running:";

/**
 * Runs (or, after a restart, continues) one attempt of an agent step. An
 * aborted step (cancel, hard interrupt) ends as cancelled wherever it was;
 * a closed session leaves it as it is on disk.
 */
export async function* runAgentStep(
  env: StepEnv,
  a: StepAttempt,
  signal: AbortSignal,
): AsyncGenerator<RuntimeEvent, StepOutcome> {
  // The step's span: its model and tool calls are its children.
  const span = startSpan("iac-code.runtime", `pipeline step ${a.step.id}`, {
    attributes: {
      "iac_code.pipeline.name": env.pipelineName,
      "iac_code.pipeline.step": a.step.id,
      "iac_code.pipeline.attempt": a.attempt,
      ...(a.candidateIndex !== undefined ? { "iac_code.pipeline.candidate": a.candidateIndex } : {}),
    },
  });
  let outcome: StepOutcome | undefined;
  try {
    outcome = yield* withSpanSteps(span, runAttempt(env, a, signal));
    return outcome;
  } catch (error) {
    if (env.session.lifetime.closed) throw new SessionClosedError();
    if (signal.aborted) return (outcome = { kind: "cancelled" });
    throw error;
  } finally {
    if (span) {
      span.setAttribute("iac_code.pipeline.outcome", outcome?.kind ?? "closed");
      if (outcome?.kind === "failed") failSpan(span, new Error(), outcome.errorType);
      span.end();
    }
  }
}

async function* runAttempt(
  env: StepEnv,
  a: StepAttempt,
  signal: AbortSignal,
): AsyncGenerator<RuntimeEvent, StepOutcome> {
  const { session } = env;
  const { logger } = session;
  const scope = env.transcripts(a.key);
  const store = await openSessionData(session.deps.store, scope, logger);
  const ids = { sessionId: a.key, contextId: env.contextId, cwd: session.workspace.cwd };
  const transcript = await restoreTranscript(store, session.deps.logger, ids);
  const fresh = !transcript.meta;
  const { round } = transcript;
  const rules = { store: session.store, rules: await session.store.loadSessionRules() };
  const ctx = transcriptContext({ ...session, store }, transcript, rules);
  const { conversation, rounds } = ctx;
  const run = new StepRun(env, a, await session.deps.store.log(scope, "tool-log"), rounds, signal);
  await run.restore();
  const turn = stepTurn(env, a, run.state, () => run.toolLog, signal);
  const { provider } = turn;
  // Calls a restart cut before they asked anything run again when that is safe (a validation,
  // a cost estimate); only those that may have had their effect get an "interrupted" result.
  const cut = fresh || round ? undefined : conversation.cutRound((use) => rerunSafe(turn, use));
  await conversation.repair(round?.assistantMessageId ?? cut?.id, logger);
  const maxRetries = a.step.def.max_conclusion_retries ?? 3;

  const decided = (): StepOutcome | undefined => {
    if (run.state.rollback) {
      return { kind: "rollback", target: run.state.rollback.target_step, reason: run.state.rollback.reason };
    }
    if (run.state.cancelled) {
      // The user cancelled the deployment: the step ends without a model call, nothing was created.
      return { kind: "conclusion", conclusion: { status: "cancelled", message: run.state.cancelled } };
    }
    const limit = run.failureLimit(a.step.def.max_tool_failures ?? {});
    if (limit) {
      return {
        kind: "failed",
        error: `${limit.tool} failed ${limit.count} times, the step's limit: ${limit.last.slice(0, 600)}`,
        errorType: "tool_failure_limit",
      };
    }
    if (run.conclusionErrors > maxRetries) {
      return {
        kind: "failed",
        error: `complete_step was refused ${run.conclusionErrors} times (limit ${maxRetries} retries).`,
        errorType: "conclusion_retries_exhausted",
      };
    }
    return undefined;
  };

  if (fresh) {
    await conversation.append(textMessage("user", a.userText));
  } else if (round) {
    const assistant = conversation.find(round.assistantMessageId);
    if (assistant) {
      run.restoreRound(assistant, rounds.pendingInputs());
      const completed = yield* run.project(runToolRound(ctx, turn, assistant));
      if (!completed || signal.aborted) return { kind: "cancelled" };
    }
  } else if (cut) {
    run.restoreRound(cut, []);
    const completed = yield* run.project(runToolRound(ctx, turn, cut));
    if (!completed || signal.aborted) return { kind: "cancelled" };
  }
  const terminal = a.step.def.complete_step_terminal !== false;
  let nudges = conversation.messages.filter(
    (m) => m.role === "user" && messageText(m).startsWith(NUDGE_PREFIX),
  ).length;
  for (let i = 0; i < session.deps.limits.maxTurns; i++) {
    if (signal.aborted) return { kind: "cancelled" };
    const early = decided();
    if (early) return early;
    if (run.state.conclusion && terminal) return { kind: "conclusion", conclusion: run.state.conclusion };
    for (const text of await env.control.beforeModelCall(a.key, a.candidateIndex, signal)) {
      await conversation.append(textMessage("user", `${SUPPLEMENT_PREFIX} ${text}`));
    }
    if (signal.aborted) return { kind: "cancelled" };
    yield* run.project(compactIfNeeded(ctx, turn, provider, a.markers.join("\n")));
    if (signal.aborted) return { kind: "cancelled" };
    const call = yield* run.project(
      callModel({
        provider,
        system: turn.system,
        conversation: conversation.messages,
        tools: turn.toolDefs,
        signal,
      }),
    );
    if (call.status === "cancelled") return { kind: "cancelled" };
    if (call.status === "stream_error") {
      yield* run.publish({
        type: "message_end",
        messageId: call.messageId,
        stopReason: "stream_error",
        text: call.text,
      });
      const failure = turnErrorEvent(logger, turn.lang, call.error, turn.secrets);
      if (failure.type !== "error") throw new Error("unreachable");
      return {
        kind: "failed",
        error: failure.message,
        errorType: failure.kind,
        ...(failure.errorId ? { errorId: failure.errorId } : {}),
      };
    }
    if (call.assistant) await conversation.append(call.assistant);
    if (call.usage) recordUsage(store, logger, call.messageId, call.usage);
    yield* run.publish({
      type: "message_end",
      messageId: call.messageId,
      stopReason: call.stopReason,
      ...(call.usage ? { usage: call.usage } : {}),
      text: call.text,
    });
    if (!call.assistant || !call.hasToolCalls) {
      if (run.state.conclusion) return { kind: "conclusion", conclusion: run.state.conclusion };
      if (nudges >= MAX_NUDGES) {
        return {
          kind: "failed",
          error: `The model stopped ${nudges + 1} times without calling complete_step.`,
          errorType: "no_conclusion",
        };
      }
      nudges++;
      await conversation.append(nudge(a, nudges));
      continue;
    }
    const completed = yield* run.project(runToolRound(ctx, turn, call.assistant));
    if (!completed || signal.aborted) return { kind: "cancelled" };
  }
  return { kind: "failed", error: "The step reached the round limit.", errorType: "max_turns" };
}

/** A call that may run again after a restart: its tool reads only, or running it twice is running it once. */
function rerunSafe(turn: Turn, use: ToolUseBlock): boolean {
  const tool = turn.tools.get(use.name);
  if (!tool || use.inputError) return false;
  if (tool.rerunnable) return true;
  try {
    return tool.isReadOnly(use.input);
  } catch {
    return false;
  }
}

function nudge(a: StepAttempt, n: number): Message {
  const example = JSON.stringify({ conclusion: exampleOf(a.surface.conclusionSchema) });
  return textMessage(
    "user",
    `${NUDGE_PREFIX} (reminder ${n} of ${MAX_NUDGES}) The step "${a.step.id}" ends only with complete_step. ` +
      `Call it now with the conclusion, for example: ${example}`,
  );
}

/** A skeleton value of a JSON Schema (the nudge's example). */
function exampleOf(schema: unknown, depth = 0): unknown {
  if (!schema || typeof schema !== "object" || depth > 4) return null;
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.enum)) return s.enum[0];
  if ("const" in s) return s.const;
  switch (s.type) {
    case "object": {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      const required = Array.isArray(s.required) ? (s.required as string[]) : Object.keys(props);
      return Object.fromEntries(required.map((k) => [k, exampleOf(props[k], depth + 1)]));
    }
    case "array":
      return [exampleOf(s.items, depth + 1)];
    case "string":
      return "...";
    case "number":
    case "integer":
      return 0;
    case "boolean":
      return true;
    default:
      return null;
  }
}
