// One attempt of an agent step: an agent loop with the step's own transcript
// (part transcript/<attempt> of the session: a fresh conversation per attempt,
// its waiting round and tool log), its
// filtered tools plus complete_step, and a system prompt that carries the
// step's instructions. The loop ends when complete_step accepted a
// conclusion or a rollback, after two nudges when the model stops without
// calling it, or when the conclusion retries are used up. Everything the loop
// does is published as pipeline envelopes with the step's coordinates.
// A restarted process continues the same attempt from its transcript.
import { newMessageId } from "../ids.js";
import { failSpan, startSpan, withSpanSteps } from "../../server/tracing/index.js";
import { callModel } from "../loop/model-call.js";
import { compactIfNeeded } from "../session/compaction.js";
import { bundledSkills } from "../skills/discovery.js";
import { messageText, toolUses, type Message, type ToolUseBlock } from "../messages.js";
import { createTurnProvider } from "../providers/factory.js";
import type { Provider } from "../providers/types.js";
import type { InputRequest, RuntimeEvent } from "../seam.js";
import { Conversation } from "../session/conversation.js";
import { PermissionGate } from "../session/permission-gate.js";
import type { SessionContext } from "../session/session-context.js";
import { openSessionData } from "../session/store.js";
import { runToolRound } from "../session/tool-round.js";
import type { Turn } from "../session/turn.js";
import { SessionClosedError, turnErrorEvent } from "../session/turn-errors.js";
import { recordUsage } from "../session/usage.js";
import { WaitingRound } from "../session/waiting-round.js";
import type { StoreLog, StoreScope } from "../store/runtime-store.js";
import type { EnvelopeSpec, PipelineEmitter } from "./emitter.js";
import type { ToolLogEntry } from "./guards.js";
import type { InputGate, InputRegistry } from "./inputs.js";
import type { StepControl } from "./interrupts.js";
import type { LoadedStep, StepSurface } from "./loader.js";
import { compactionEvent, progressEvent } from "./step-events.js";
import { failureText, stackOf, type StackResult } from "./step-results.js";
import { stepTools, type InjectedToolEnv } from "./step-tools.js";
import { completeStepTool, type CompletionState, type ConfirmedDeployment } from "./tools.js";

/** How often a model that stops without complete_step is reminded. */
export const MAX_NUDGES = 2;
const NUDGE_PREFIX = "[pipeline] You have not called complete_step.";
const SUPPLEMENT_PREFIX = "[pipeline] The user added, while this step was running:";
const THINKING_MAX = 4000;

/** What every step of one pipeline turn shares. */
export interface StepEnv {
  session: Omit<SessionContext, "conversation" | "rounds" | "permissions">;
  contextId: string;
  baseTurn: Turn;
  emitter: PipelineEmitter;
  registry: InputRegistry;
  gate: InputGate;
  /** Where a step attempt's transcript is kept (by attempt key). */
  transcripts: (attemptKey: string) => StoreScope;
  pipelineName: string;
  emitStackEvents: boolean;
  /** Supplements and pauses from messages that arrive while the run goes on. */
  control: StepControl;
}

/** Where a step's events sit: scope plus step / candidate coordinates. */
export type Coordinates = Pick<EnvelopeSpec, "scope" | "step" | "candidate" | "candidateStep">;

export interface StepAttempt {
  step: LoadedStep;
  surface: StepSurface;
  attempt: number;
  /** The attempt's transcript part name, unique per attempt. */
  key: string;
  coords: Coordinates;
  /** The candidate whose sub-pipeline this step belongs to. */
  candidateIndex?: number;
  /** Markers in the system prompt (a scripted model matches on them). */
  markers: string[];
  /** The step's first user message. */
  userText: string;
  /** Values of the prompt's {placeholders}. */
  promptValues: Record<string, unknown>;
  /** Steps complete_step may roll back to (for the prompt) and the check of a target. */
  rollbackTargets: string[];
  rollbackRefusal: (target: string) => string | undefined;
  extraCheck?: (conclusion: Record<string, unknown>) => string[];
  /**
   * Called for each stack (or stack group) a create call of this attempt made
   * (cleanup ledger); returns warnings to publish with the tool's result.
   */
  onStack?: (stack: StackResult) => Promise<EnvelopeSpec[]>;
  /** What injected tools read from the run (context fields, the reselect target). */
  injected?: Omit<InjectedToolEnv, "state">;
}

export type { StackResult };

export type StepOutcome =
  | { kind: "conclusion"; conclusion: Record<string, unknown> }
  | { kind: "rollback"; target: string; reason: string }
  | { kind: "failed"; error: string; errorType: string; errorId?: string }
  | { kind: "cancelled" };

/** Fills {field} placeholders with the field's value (text as is, anything else as JSON). */
export function renderPrompt(template: string, values: Record<string, unknown>): string {
  return template.replace(/\{([a-z][a-z0-9_]*)\}/g, (whole, name: string) => {
    if (!(name in values)) return whole;
    const value = values[name];
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  });
}

/**
 * The instructions of the step's skill, found as the `skill` tool finds skills
 * (the turn's catalog: config dir, workspace, bundled), so a workspace can
 * refine a step's playbook; the loader made sure a bundled one exists.
 */
function stepSkill(env: StepEnv, step: LoadedStep): string {
  const name = step.def.skill;
  if (name === undefined) return "";
  const skill = env.baseTurn.skills.get(name) ?? bundledSkills().get(name);
  if (!skill) return "";
  return `## Skill: ${skill.name}\n\n${skill.body}`;
}

function stepSystemPrompt(env: StepEnv, a: StepAttempt): string {
  const { step } = a;
  const lines = [
    `# Pipeline step: ${step.id}`,
    ...a.markers,
    `You are running one step of the "${env.pipelineName}" pipeline: ${step.def.description ?? step.id}.`,
    stepSkill(env, step),
    renderPrompt(a.surface.prompt, a.promptValues).trim(),
    "## Finishing the step",
    `When the step is done, call complete_step with the conclusion (the pipeline field "${step.conclusionField}"). ` +
      "It must match this JSON Schema; complete_step tells you what to fix when it does not:",
    "```json",
    JSON.stringify(a.surface.conclusionSchema),
    "```",
    a.rollbackTargets.length > 0
      ? `If the step cannot succeed because of an earlier decision, call complete_step with rollback_request {target_step, reason}; possible targets: ${a.rollbackTargets.join(", ")}.`
      : "",
  ];
  return [env.baseTurn.system, lines.filter(Boolean).join("\n\n")].join("\n\n");
}

/** Tool-use ids unique across the attempts and candidates of a pipeline (they key AG-UI tool calls). */
function prefixedProvider(provider: Provider, prefix: string): Provider {
  return {
    name: provider.name,
    model: provider.model,
    ...(provider.contextWindow !== undefined ? { contextWindow: provider.contextWindow } : {}),
    async *stream(request) {
      for await (const event of provider.stream(request)) {
        yield "id" in event ? { ...event, id: `${prefix}${event.id}` } : event;
      }
    },
  };
}

function truncate(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}

class StepRun {
  readonly toolLog: ToolLogEntry[] = [];
  readonly state: CompletionState = {};
  private readonly inputs = new Map<string, Record<string, unknown>>();
  private readonly names = new Map<string, string>();
  private held: string | undefined;
  /** Inputs a restarted attempt waits for again: already announced, they are not journaled twice. */
  private readonly announced = new Set<string>();

  constructor(
    private readonly env: StepEnv,
    private readonly a: StepAttempt,
    private readonly toolLogRows: StoreLog,
    private readonly rounds: WaitingRound,
    private readonly signal: AbortSignal,
  ) {}

  /** Rebuilds the tool log (and complete_step's decision) of an attempt restarted from the store. */
  async restore(): Promise<void> {
    for (const row of await this.toolLogRows.read()) {
      try {
        this.log(JSON.parse(row) as ToolLogEntry);
      } catch {
        // A row that cannot be read: that call's result is not known, as if it had not finished.
      }
    }
  }

  /** Records a finished call; replayed after a restart, it restores what the call decided. */
  private log(entry: ToolLogEntry): void {
    this.toolLog.push(entry);
    if (entry.name === "ros_deploy" && entry.input.action === "create") {
      // A confirmation is good for one deployment.
      delete this.state.confirmed;
      return;
    }
    if (entry.isError) return;
    if (entry.name === "confirm_deployment") {
      const data = (entry.result ?? {}) as {
        decision?: string;
        targetStep?: string;
        reason?: string;
        message?: string;
      };
      if (data.decision === "confirm" && entry.record)
        this.state.confirmed = entry.record as ConfirmedDeployment;
      if (data.decision === "reselect" && data.targetStep && data.reason)
        this.state.rollback = { target_step: data.targetStep, reason: data.reason };
      if (data.decision === "cancel") this.state.cancelled = data.message ?? "The deployment was cancelled.";
      return;
    }
    if (entry.name !== "complete_step") return;
    const input = entry.input as {
      conclusion?: Record<string, unknown>;
      rollback_request?: { target_step: string; reason: string };
    };
    if (input.rollback_request) this.state.rollback = input.rollback_request;
    else if (input.conclusion) this.state.conclusion = input.conclusion;
  }

  /** The tool whose failures reached the step's limit (max_tool_failures), with its last error. */
  failureLimit(
    limits: Readonly<Record<string, number | undefined>>,
  ): { tool: string; count: number; last: string } | undefined {
    for (const [tool, limit] of Object.entries(limits)) {
      if (limit === undefined) continue;
      const failures = this.toolLog.filter((e) => e.name === tool && e.isError);
      if (failures.length >= limit)
        return { tool, count: failures.length, last: failureText(failures[failures.length - 1].result) };
    }
    return undefined;
  }

  /**
   * The calls of a round restored from the store, and the inputs it already
   * announced: their results and waits are published as if the process had
   * not stopped (a create's stack still reaches the ledger).
   */
  restoreRound(assistant: Message, waits: readonly InputRequest[]): void {
    for (const call of toolUses(assistant)) {
      this.inputs.set(call.id, call.input);
      this.names.set(call.id, call.name);
    }
    for (const wait of waits) this.announced.add(wait.inputId);
  }

  /** Failed complete_step calls of this attempt. */
  get conclusionErrors(): number {
    return this.toolLog.filter((e) => e.name === "complete_step" && e.isError).length;
  }

  private spec(
    eventType: string,
    data: Record<string, unknown>,
    extra: Partial<EnvelopeSpec> = {},
  ): EnvelopeSpec {
    return { eventType, data, ...this.a.coords, ...extra };
  }

  /** Runs an inner generator, publishing what it does with the step's coordinates. */
  async *project<T>(inner: AsyncGenerator<RuntimeEvent, T>): AsyncGenerator<RuntimeEvent, T> {
    try {
      for (;;) {
        const step = await inner.next();
        if (step.done) return step.value;
        yield* this.publish(step.value);
      }
    } finally {
      this.releaseHeld();
    }
  }

  private releaseHeld(): void {
    if (this.held === undefined) return;
    this.env.registry.settle(this.held);
    this.held = undefined;
    this.env.gate.release();
  }

  /** Publishes one event of the step (as envelopes, or as it is for the surfaces' own events). */
  async *publish(ev: RuntimeEvent): AsyncGenerator<RuntimeEvent> {
    const { emitter } = this.env;
    switch (ev.type) {
      case "message_start":
        yield await emitter.event(this.spec("message_started", { messageId: ev.messageId }));
        return;
      case "text_delta":
        yield await emitter.event(this.spec("text_delta", { messageId: ev.messageId, text: ev.text }));
        return;
      case "thinking_delta":
        yield await emitter.event(
          this.spec("thinking_delta", { type: "raw_thinking", text: truncate(ev.text, THINKING_MAX) }),
        );
        return;
      case "tool_use_end":
        this.inputs.set(ev.toolUseId, ev.input);
        this.names.set(ev.toolUseId, ev.name);
        yield await emitter.event(
          this.spec("tool_started", { toolName: ev.name, toolUseId: ev.toolUseId, input: ev.input }),
        );
        return;
      case "tool_result":
        yield* this.toolResult(ev);
        return;
      case "tool_progress": {
        const { eventType, data } = progressEvent(ev);
        yield await emitter.event(this.spec(eventType, data));
        return;
      }
      case "compaction": {
        const { eventType, data } = compactionEvent(ev);
        yield await emitter.event(this.spec(eventType, data));
        return;
      }
      case "message_end":
        if (ev.usage) {
          yield await emitter.event(
            this.spec("usage", {
              provider: ev.usage.provider,
              model: ev.usage.model,
              inputTokens: ev.usage.inputTokens,
              outputTokens: ev.usage.outputTokens,
              totalTokens: ev.usage.totalTokens,
            }),
          );
        }
        return;
      case "input_required":
        yield* this.inputRequired(ev.request);
        return;
      case "input_received": {
        const permission = ev.kind === "permission";
        const envelopes = await emitter.envelopes(
          this.spec(
            permission ? "permission_resolved" : "input_received",
            {
              kind: ev.kind,
              inputId: ev.inputId,
              toolUseId: ev.toolUseId,
              ...(ev.decision !== undefined ? { decision: ev.decision } : {}),
              ...(permission ? { pending: false } : {}),
            },
            { input: { kind: ev.kind, inputId: ev.inputId, toolUseId: ev.toolUseId } },
          ),
        );
        yield { ...ev, pipeline: envelopes };
        if (this.held === ev.inputId) this.releaseHeld();
        return;
      }
      case "permission_decided":
        yield ev;
        return;
      default:
        return;
    }
  }

  private async *inputRequired(request: InputRequest): AsyncGenerator<RuntimeEvent> {
    // One input at a time: a parallel candidate's question waits for the one before it.
    await this.env.gate.acquire(this.signal);
    this.held = request.inputId;
    this.env.registry.publish(request, (answer) => this.rounds.answer(answer));
    if (this.announced.delete(request.inputId)) {
      yield { type: "input_required", request };
      return;
    }
    const permission = request.kind === "permission";
    const data = permission
      ? { toolName: request.toolName, toolUseId: request.toolUseId, inputId: request.inputId }
      : {
          kind: request.kind,
          inputId: request.inputId,
          toolUseId: request.toolUseId,
          question: request.prompt,
          prompt: request.prompt,
          options: request.options,
          allowFreeText: request.allowFreeText ?? false,
          ...(request.freeTextPrompt !== undefined ? { freeTextPrompt: request.freeTextPrompt } : {}),
          // The resource selector and the deployment confirmation carry what they are about.
          ...(request.selector ? { selector: request.selector } : {}),
          ...(request.operation ? { operation: request.operation } : {}),
          ...(request.displayParameters ? { displayParameters: request.displayParameters } : {}),
          ...(request.deploymentSummary ? { deploymentSummary: request.deploymentSummary } : {}),
        };
    const input = { kind: request.kind, inputId: request.inputId, toolUseId: request.toolUseId };
    const envelopes = await this.env.emitter.envelopes(
      this.spec(permission ? "permission_requested" : "input_required", data, {
        input,
        status: permission ? "working" : "input_required",
      }),
    );
    await this.env.emitter.checkpoint();
    yield { type: "input_required", request, pipeline: envelopes };
  }

  private async *toolResult(
    ev: Extract<RuntimeEvent, { type: "tool_result" }>,
  ): AsyncGenerator<RuntimeEvent> {
    const confirmed = this.state.confirmed;
    const entry: ToolLogEntry = {
      toolUseId: ev.toolUseId,
      name: ev.name,
      input: this.inputs.get(ev.toolUseId) ?? {},
      isError: ev.isError,
      result: ev.result,
      // What the user confirmed, unmasked (the published result masks secrets): ros_deploy's after a restart.
      ...(ev.name === "confirm_deployment" && confirmed?.toolUseId === ev.toolUseId
        ? { record: confirmed }
        : {}),
    };
    this.log(entry);
    this.toolLogRows.append([JSON.stringify(entry)]);
    await this.env.session.deps.store.commit();
    const { emitter } = this.env;
    const stack = stackOf(ev, entry.input);
    const specs: EnvelopeSpec[] = [
      this.spec("tool_result", {
        toolName: ev.name,
        toolUseId: ev.toolUseId,
        isError: ev.isError,
        result: ev.result,
        ...(stack ? { stackResult: stack } : {}),
      }),
    ];
    if (stack && stack.created) {
      specs.push(...((await this.a.onStack?.(stack)) ?? []));
      if (this.env.emitStackEvents) {
        specs.push({
          eventType: "stack_current_changed",
          scope: "stack",
          data: {
            toolName: ev.name,
            toolUseId: ev.toolUseId,
            provider: "ros",
            action: "create",
            deployAction: "create",
            regionId: stack.regionId,
            stackId: stack.stackId,
            stackName: stack.stackName,
            ...(stack.group ? { stackGroupName: stack.group.name, regionIds: stack.group.regionIds } : {}),
            stackStatus: stack.status,
            isSuccess: stack.status === "CREATE_COMPLETE",
            current: true,
          },
          ...(this.a.coords.step ? { step: this.a.coords.step } : {}),
        });
      }
    }
    yield await emitter.event(...specs);
  }
}

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
  const fresh = !(await store.readMeta());
  if (fresh) {
    await store.create({
      version: 1,
      sessionId: a.key,
      contextId: env.contextId,
      cwd: session.workspace.cwd,
      createdAt: new Date().toISOString(),
    });
  }
  const messages = fresh ? [] : await store.loadConversation();
  let round = fresh ? undefined : await store.loadPending();
  const lastAssistant = [...messages].reverse().find((m) => m.role === "assistant");
  if (round && (round.assistantMessageId !== lastAssistant?.id || round.inputs.length === 0)) {
    round = undefined;
    await store.savePending(undefined);
  }
  const conversation = new Conversation(messages, store);
  const rounds = new WaitingRound(store, logger, session.lifetime, round);
  const permissions = new PermissionGate({ ...session, rounds }, await session.store.loadSessionRules());
  const ctx: SessionContext = { ...session, store, conversation, rounds, permissions };
  const run = new StepRun(env, a, await session.deps.store.log(scope, "tool-log"), rounds, signal);
  await run.restore();

  const complete = completeStepTool({
    step: a.step,
    conclusionSchema: a.surface.conclusionSchema,
    state: run.state,
    toolLog: () => run.toolLog,
    rollbackRefusal: a.rollbackRefusal,
    ...(a.extraCheck ? { extraCheck: a.extraCheck } : {}),
  });
  const tools = stepTools(env.baseTurn, a.step, complete, {
    state: run.state,
    contextValue: a.injected?.contextValue ?? (() => undefined),
    reselectTarget: a.injected?.reselectTarget ?? (() => undefined),
  });
  const provider = prefixedProvider(
    env.baseTurn.provider ?? createTurnProvider(session.deps.providers, env.baseTurn.overrides),
    `${a.key}.`,
  );
  const turn: Turn = {
    ...env.baseTurn,
    signal,
    provider,
    tools: new Map(tools.map((tool) => [tool.name, tool])),
    toolDefs: tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    })),
    system: stepSystemPrompt(env, a),
  };
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
    await conversation.append({
      id: newMessageId(),
      role: "user",
      content: [{ type: "text", text: a.userText }],
      createdAt: new Date().toISOString(),
    });
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
      await conversation.append(userText(`${SUPPLEMENT_PREFIX} ${text}`));
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

function userText(text: string): Message {
  return {
    id: newMessageId(),
    role: "user",
    content: [{ type: "text", text }],
    createdAt: new Date().toISOString(),
  };
}

function nudge(a: StepAttempt, n: number): Message {
  const example = JSON.stringify({ conclusion: exampleOf(a.surface.conclusionSchema) });
  return userText(
    `${NUDGE_PREFIX} (reminder ${n} of ${MAX_NUDGES}) The step "${a.step.id}" ends only with complete_step. ` +
      `Call it now with the conclusion, for example: ${example}`,
  );
}

/** A skeleton value of a JSON Schema (the nudge's example). */
export function exampleOf(schema: unknown, depth = 0): unknown {
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
