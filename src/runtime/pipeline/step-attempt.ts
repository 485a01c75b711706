// One attempt of an agent step, as the runner and the candidates describe it
// (StepAttempt), what every step of a turn shares (StepEnv), how an attempt
// ends (StepOutcome), and what it runs with: its system prompt (the step's
// instructions and skill), its tools and its provider.
import { createTurnProvider } from "../providers/factory.js";
import type { Provider } from "../providers/types.js";
import type { SessionContext } from "../session/session-context.js";
import { toolSet, type Turn } from "../session/turn.js";
import { bundledSkills } from "../skills/discovery.js";
import type { StoreScope } from "../store/runtime-store.js";
import type { EnvelopeSpec, PipelineEmitter } from "./emitter.js";
import type { ToolLogEntry } from "./guards.js";
import type { InputGate, InputRegistry } from "./inputs.js";
import type { StepControl } from "./interrupts.js";
import { renderPrompt, type LoadedStep, type StepSurface } from "./loader.js";
import type { StackResult } from "./step-results.js";
import { stepTools, type InjectedToolEnv } from "./step-tools.js";
import { completeStepTool, type CompletionState } from "./tools.js";

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

export interface StepAttempt {
  step: LoadedStep;
  surface: StepSurface;
  attempt: number;
  /** The attempt's transcript part name, unique per attempt. */
  key: string;
  /** Where the attempt's events sit: scope plus step / candidate coordinates. */
  coords: Pick<EnvelopeSpec, "scope" | "step" | "candidate" | "candidateStep">;
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

export type StepOutcome =
  | { kind: "conclusion"; conclusion: Record<string, unknown> }
  | { kind: "rollback"; target: string; reason: string }
  | { kind: "failed"; error: string; errorType: string; errorId?: string }
  | { kind: "cancelled" };

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

/**
 * The turn an attempt runs: the step's tools (filtered, injected, complete_step
 * deciding on `state` and the attempt's tool log), its provider (tool-use ids
 * prefixed by the attempt) and its system prompt.
 */
export function stepTurn(
  env: StepEnv,
  a: StepAttempt,
  state: CompletionState,
  toolLog: () => ToolLogEntry[],
  signal: AbortSignal,
): Turn & { provider: Provider } {
  const complete = completeStepTool({
    step: a.step,
    conclusionSchema: a.surface.conclusionSchema,
    state,
    toolLog,
    rollbackRefusal: a.rollbackRefusal,
    ...(a.extraCheck ? { extraCheck: a.extraCheck } : {}),
  });
  const tools = stepTools(env.baseTurn, a.step, complete, {
    state,
    contextValue: a.injected?.contextValue ?? (() => undefined),
    reselectTarget: a.injected?.reselectTarget ?? (() => undefined),
  });
  const provider = prefixedProvider(
    env.baseTurn.provider ?? createTurnProvider(env.session.deps.providers, env.baseTurn.overrides),
    `${a.key}.`,
  );
  return {
    ...env.baseTurn,
    signal,
    provider,
    ...toolSet(tools),
    system: stepSystemPrompt(env, a),
  };
}
