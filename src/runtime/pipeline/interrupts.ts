// Messages that arrive while a pipeline runs. An LLM judge (the pipeline's
// prompts/interrupt_judge.md, a side call with a time limit) classifies each
// one: continue and ignored change nothing; supplement hands the text to the
// running step (or to some candidates) before its next model call;
// hard_interrupt rolls back to a step with the text as feedback. When the
// judge fails, the running step's interrupt_judge_failure policy applies:
// continue, hard_interrupt, or pause (the steps stop before their next model
// call until the user confirms that the run may go on).
import { readFileSync } from "node:fs";
import path from "node:path";
import { textMessage } from "../messages.js";
import type { Provider } from "../providers/types.js";
import { BUNDLED_DIR, renderPrompt } from "./loader.js";

export const JUDGE_TIMEOUT_MS = 90_000;

export type JudgeAction = "continue" | "ignored" | "supplement" | "hard_interrupt";

export interface Classification {
  action: JudgeAction;
  targetStep?: string;
  /** "all" or "candidate:N". */
  candidateScope?: string;
  /** A hard interrupt of the running parallel step: the candidates' step to start again at. */
  targetCandidateStep?: string;
  reason: string;
}

const ACTIONS = new Set<JudgeAction>(["continue", "ignored", "supplement", "hard_interrupt"]);

/** The judge's JSON answer (the first {...} of its text), or undefined when it is not one. */
export function parseClassification(text: string): Classification | undefined {
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  if (!json) return undefined;
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const action = data.action as JudgeAction;
  if (!ACTIONS.has(action)) return undefined;
  const str = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : undefined);
  const targetStep = str(data.target_step);
  const candidateScope = str(data.candidate_scope);
  const targetCandidateStep = str(data.target_candidate_step);
  return {
    action,
    ...(targetStep ? { targetStep } : {}),
    ...(candidateScope ? { candidateScope } : {}),
    ...(targetCandidateStep ? { targetCandidateStep } : {}),
    reason: str(data.reason) ?? "",
  };
}

/** Classifies a message; undefined when the judge fails (error, time limit, unreadable answer). */
export async function judge(args: {
  provider: Provider;
  pipelineName: string;
  step: string;
  steps: string[];
  completed: string[];
  message: string;
  signal: AbortSignal;
  /** Markers of the run (the demo scenario's), appended to the judge's prompt. */
  markers?: string[];
}): Promise<Classification | undefined> {
  const template = readFileSync(path.join(BUNDLED_DIR, args.pipelineName, "prompts", "interrupt_judge.md"), "utf8");
  const system = [renderPrompt(template, {
    pipeline: args.pipelineName,
    step: args.step,
    steps: args.steps.join(", "),
    completed: args.completed.join(", ") || "none",
  }), ...(args.markers ?? [])].join("\n");
  const user = textMessage("user", args.message);
  const signal = AbortSignal.any([args.signal, AbortSignal.timeout(JUDGE_TIMEOUT_MS)]);
  let text = "";
  try {
    for await (const event of args.provider.stream({ system, messages: [user], tools: [], kind: "complete", signal })) {
      if (event.type === "text_delta") text += event.text;
    }
  } catch {
    return undefined;
  }
  return parseClassification(text);
} // prettier-ignore

/**
 * What the running steps take from interruptions: supplements for their next
 * model call, a pause they wait out before it.
 */
export class StepControl {
  /** Each supplement goes once to every step attempt it is meant for (takenBy: attempt keys). */
  private readonly supplements: Array<{ text: string; scope: string; takenBy: Set<string> }> = [];
  private paused: Promise<void> | undefined;
  private resume: (() => void) | undefined;

  supplement(text: string, scope = "all"): void {
    this.supplements.push({ text, scope, takenBy: new Set() });
  }

  pause(): void {
    this.paused ??= new Promise<void>((resolve) => (this.resume = resolve));
  }

  unpause(): void {
    this.resume?.();
    this.paused = undefined;
    this.resume = undefined;
  }

  get isPaused(): boolean {
    return this.paused !== undefined;
  }

  /** A new top-level step: supplements for the one before it are dropped. */
  nextStep(): void {
    this.supplements.length = 0;
  }

  /** Before a model call of an attempt: waits out a pause, then hands over the supplements meant for it. */
  async beforeModelCall(
    attempt: string,
    candidate: number | undefined,
    signal: AbortSignal,
  ): Promise<string[]> {
    while (this.paused && !signal.aborted) {
      const pause = this.paused;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          signal.removeEventListener("abort", done);
          resolve();
        };
        signal.addEventListener("abort", done, { once: true });
        void pause.then(done);
      });
    }
    const mine = (s: { scope: string; takenBy: Set<string> }) =>
      !s.takenBy.has(attempt) &&
      (s.scope === "all" || (candidate !== undefined && s.scope === `candidate:${candidate}`));
    const taken = this.supplements.filter(mine);
    for (const s of taken) s.takenBy.add(attempt);
    return taken.map((s) => s.text);
  }
}
