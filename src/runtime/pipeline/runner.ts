// The pipeline runner: walks the state machine step by step and publishes the
// run as envelopes. For each step: step_started, then the step (an agent
// loop, the candidates in parallel, or the candidate selection, which waits
// for the user), then one of: step_completed and the next step; an early
// exit; a rollback (fields marked stale, stacks of rolled-back steps cleaned
// up); a failure. The run ends with pipeline_completed and, with on_complete
// switch_to_normal, pipeline_handoff_ready: the context is normal chat again.
import type { RuntimeEvent } from "../seam.js";
import { runCandidates } from "./candidates.js";
import { rollback } from "./rollback.js";
import { RunEnd } from "./run-end.js";
import { typedAnswer } from "./typed-answers.js";
import type { EnvelopeSpec } from "./emitter.js";
import { valueAt } from "./guards.js";
import type { LoadedStep } from "./loader.js";
import { attemptKey, type RunEnv } from "./run-env.js";
import { evaluatedCandidates, optionProblems } from "./selection.js";
import type { StepOutcome } from "./step-attempt.js";
import { runAgentStep } from "./step-executor.js";
import type { StackResult } from "./step-results.js";
import { judge, type Classification } from "./interrupts.js";
import { createTurnProvider } from "../providers/factory.js";
import { candidateSelection, pauseSteps } from "./waits.js";

type Outcome = StepOutcome | { kind: "conclusion"; conclusion: unknown };

/** How a turn enters the run. */
export type Entry = { kind: "start"; text: string } | { kind: "continue"; text: string } | { kind: "resume" };

function matches(spec: { field: string; value?: unknown } | undefined, conclusion: unknown): boolean {
  return spec !== undefined && JSON.stringify(valueAt(conclusion, spec.field)) === JSON.stringify(spec.value);
}

export class PipelineRunner {
  /** Where events that happen outside the step loop go (interruptions); set by the host. */
  outbox: (event: RuntimeEvent) => void = () => undefined;
  /** How the run ends (step failures, pipeline_completed, cancel). */
  private readonly end: RunEnd;
  /** Aborts the running step (a hard interrupt). */
  private stepAbort = new AbortController();
  /** A hard interrupt waiting for the running step to stop. */
  private interruption: { target: string; reason: string } | undefined;

  constructor(
    private readonly run: RunEnv,
    private readonly signal: AbortSignal,
  ) {
    this.end = new RunEnd(run);
  }

  /** One paragraph for the user and for the normal chat that follows the run. */
  summary(outcome: Parameters<RunEnd["summary"]>[0]): string {
    return this.end.summary(outcome);
  }

  /** The signal of the running step: the turn's, or a hard interrupt. */
  private get stepSignal(): AbortSignal {
    return AbortSignal.any([this.signal, this.stepAbort.signal]);
  }

  private get emitter() {
    return this.run.emitter;
  }

  /** Runs the turn: a new run, a message to a waiting run, or a restored run. */
  async *turn(entry: Entry): AsyncGenerator<RuntimeEvent> {
    const { run } = this;
    try {
      if (entry.kind === "start") {
        const { pipeline } = run;
        run.meta.feedback = entry.text;
        await run.save();
        yield await this.emitter.event(
          {
            eventType: "pipeline_started",
            scope: "pipeline",
            data: {
              pipelineType: pipeline.name,
              totalSteps: pipeline.steps.length,
              stepNames: pipeline.steps.map((s) => s.id),
            },
          },
          ...run.ledger.takeWarnings(),
        );
      } else {
        yield await this.emitter.event(
          {
            eventType: "pipeline_resumed",
            scope: "pipeline",
            data: { reason: entry.kind === "resume" ? "restart" : "message" },
          },
          ...run.ledger.takeWarnings(),
        );
      }
      const mcp = run.step.baseTurn.mcp;
      if (mcp) {
        yield await this.emitter.event({
          eventType: "mcp_status",
          scope: "pipeline",
          data: { kind: "mcp_status", mcpStatus: mcp.status },
        });
      }
      yield* this.steps(entry.kind === "continue" ? entry.text : undefined);
    } finally {
      if (this.signal.aborted && !run.step.session.lifetime.closed && !run.meta.handedOff)
        await this.end.cancelled();
    }
  }

  /** The step loop, from the state machine's current step. */
  private async *steps(message: string | undefined): AsyncGenerator<RuntimeEvent> {
    const { run } = this;
    const { sm } = run;
    let text = message;
    for (let step = sm.current; step; step = sm.current) {
      if (this.signal.aborted) return;
      this.stepAbort = new AbortController();
      run.step.control.nextStep();
      const resumed = sm.isRunning();
      const attempt = resumed ? sm.attempt(step.id) : sm.begin();
      const ref = run.stepRef(step, attempt);
      if (!resumed) {
        run.meta.status = "running";
        await run.save();
        const key = attemptKey(run.meta.runNumber, step.id, attempt);
        yield await this.emitter.event({
          eventType: "step_started",
          scope: "step",
          step: ref,
          data: {
            index: sm.index,
            attempt,
            total: sm.total,
            name: step.id,
            stepType: step.kind,
            uiMode: step.def.ui_mode ?? null,
            activeAttemptId: key,
            transcriptId: key,
          },
        });
        await this.emitter.checkpoint();
      }
      const started = Date.now();
      const outcome: Outcome =
        step.kind === "parallel_sub_pipeline"
          ? yield* runCandidates(run, step, ref, this.stepSignal)
          : step.def.ui_mode === "candidate_selection"
            ? yield* candidateSelection(run, this.signal, step, attempt, ref, text, () =>
                this.agentStep(step, attempt, ref),
              )
            : yield* this.agentStep(step, attempt, ref);
      text = undefined;
      if (outcome.kind === "cancelled" && this.interruption && !this.signal.aborted) {
        const { target, reason } = this.interruption;
        this.interruption = undefined;
        if (!(yield* rollback(this.run, this.end, this.signal, step, target, reason, true))) return;
        continue;
      }
      if (outcome.kind === "cancelled") return;
      if (outcome.kind === "failed") {
        yield* this.end.failed(step, ref, outcome);
        return;
      }
      if (outcome.kind === "rollback") {
        if (!(yield* rollback(this.run, this.end, this.signal, step, outcome.target, outcome.reason))) return;
        continue;
      }
      if (!(yield* this.concluded(step, attempt, ref, outcome.conclusion, started))) return;
    }
  }

  private agentStep(step: LoadedStep, attempt: number, ref: Record<string, unknown>) {
    const { run } = this;
    const earlier = run.pipeline.steps.slice(0, run.sm.index).map((s) => s.id);
    const feedback = run.meta.feedback;
    const values = run.context.values([...(step.def.context_fields ?? [])]);
    const userText =
      run.sm.index === 0
        ? (feedback ?? "")
        : [`Run the pipeline step ${step.id}.`, feedback ? `Feedback from the user: ${feedback}` : ""]
            .filter(Boolean)
            .join("\n\n");
    return runAgentStep(
      run.step,
      {
        step,
        surface: run.rich ? step.rich : step.standard,
        attempt,
        key: attemptKey(run.meta.runNumber, step.id, attempt),
        coords: { scope: "step", step: ref },
        markers: [`<!--step:${step.id}-->`, ...run.markers()],
        userText,
        promptValues: values,
        rollbackTargets: earlier,
        rollbackRefusal: (target) =>
          earlier.includes(target) ? run.sm.rollbackRefusal(target) : `${target} is not an earlier step`,
        ...(step.def.ui_mode === "candidate_selection"
          ? {
              extraCheck: (c: Record<string, unknown>) =>
                optionProblems(
                  c.options,
                  evaluatedCandidates((field) => run.context.get(field)),
                ),
            }
          : {}),
        ...(step.def.tracks_stacks
          ? {
              onStack: async (stack: StackResult) => {
                await run.ledger.observe({
                  resourceType: stack.group ? "ALIYUN::ROS::StackGroup" : "ALIYUN::ROS::Stack",
                  resourceId: stack.stackId,
                  ...(stack.group
                    ? {
                        resourceName: stack.group.name,
                        regionIds: stack.group.regionIds,
                        accountId: stack.group.accountId,
                      }
                    : stack.stackName
                      ? { resourceName: stack.stackName }
                      : {}),
                  regionId: stack.regionId ?? run.step.baseTurn.cloud?.credentials.regionId,
                  sourceStepId: step.id,
                  run: run.meta.runNumber,
                  ...(stack.status ? { status: stack.status } : {}),
                });
                return run.ledger.takeWarnings();
              },
            }
          : {}),
        injected: {
          contextValue: (field: string) => run.context.get(field),
          reselectTarget: () => this.reselectTarget(earlier),
        },
      },
      this.stepSignal,
    );
  }

  /** The candidate selection step before the current one that a deployment's reselect may go back to. */
  private reselectTarget(earlier: readonly string[]): string | undefined {
    const { run } = this;
    const target = run.pipeline.steps.find(
      (s) => earlier.includes(s.id) && s.def.ui_mode === "candidate_selection",
    )?.id;
    return target && !run.sm.rollbackRefusal(target) ? target : undefined;
  }

  /**
   * A message that arrives while the run goes on: while the run waits for the
   * candidate selection it is the answer; otherwise the judge classifies it
   * (its events go out on the running turn). False when nothing takes it.
   */
  interject(text: string): boolean {
    if (text.trim() === "") return false;
    const wait = this.run.meta.selection;
    if (wait) {
      return this.run.step.registry.answer({
        kind: "candidate_selection",
        inputId: wait.inputId,
        freeText: text,
      });
    }
    const { registry } = this.run.step;
    const typed = typedAnswer(registry.pending(), text);
    if (typed) return registry.answer(typed);
    const step = this.run.sm.current;
    if (!step || this.signal.aborted) return false;
    this.classify(step, text).catch((error: unknown) =>
      this.run.step.session.logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        "interruption not handled",
      ),
    );
    return true;
  }

  private async classify(step: LoadedStep, text: string): Promise<void> {
    const { run } = this;
    const { emitter } = this;
    this.outbox(
      await emitter.event({
        eventType: "interrupt_received",
        scope: "interrupt",
        data: { messageLength: text.length },
      }),
    );
    const provider =
      run.step.baseTurn.provider ??
      createTurnProvider(run.step.session.deps.providers, run.step.baseTurn.overrides);
    const verdict = await judge({
      provider,
      pipelineName: run.pipeline.name,
      step: step.id,
      steps: run.pipeline.steps.map((s) => s.id),
      completed: run.pipeline.steps.filter((s) => run.sm.status(s.id) === "completed").map((s) => s.id),
      message: text,
      signal: this.signal,
      markers: run.markers(),
    });
    const policy = step.def.interrupt_judge_failure ?? "continue";
    let c: Classification = verdict ?? {
      action: policy === "hard_interrupt" ? "hard_interrupt" : "continue",
      targetStep: step.id,
      reason: `The judge could not classify the message (policy ${policy}).`,
    };
    const target = c.targetStep ?? step.id;
    // A hard interrupt of the running parallel step restarts its candidates instead of rolling back.
    const restart =
      c.action === "hard_interrupt" && target === step.id && step.kind === "parallel_sub_pipeline";
    const refusal =
      c.action === "hard_interrupt" && !restart ? run.sm.rollbackRefusal(target, true) : undefined;
    if (refusal) c = { action: "continue", reason: `No rollback: ${refusal}.` };
    // Taken in the same tick as interrupt_classified is numbered, so the restart's events follow it.
    const restarted =
      c.action === "hard_interrupt" &&
      restart &&
      run.restarts.request({
        scope: c.candidateScope ?? "all",
        ...(c.targetCandidateStep ? { targetStep: c.targetCandidateStep } : {}),
        reason: text,
      });
    if (c.action === "hard_interrupt" && restart && !restarted)
      c = { action: "continue", reason: "No running candidate to restart." };
    const paused = !verdict && policy === "pause";
    this.outbox(
      await emitter.event({
        eventType: "interrupt_classified",
        scope: "interrupt",
        data: {
          action: c.action,
          targetStepId: c.action === "hard_interrupt" ? target : step.id,
          candidateScope: c.candidateScope ?? "all",
          reason: c.reason,
          paused,
          judgeFailed: !verdict,
        },
      }),
    );
    if (c.action === "supplement") run.step.control.supplement(text, c.candidateScope ?? "all");
    if (c.action === "hard_interrupt" && !restarted) {
      this.interruption = { target, reason: text };
      this.stepAbort.abort();
    }
    if (paused) await pauseSteps(run, this.signal, step, text, this.outbox);
  }

  /** A step's conclusion; false when it ends the run. */
  private async *concluded(
    step: LoadedStep,
    attempt: number,
    ref: Record<string, unknown>,
    conclusion: unknown,
    started: number,
  ): AsyncGenerator<RuntimeEvent, boolean> {
    const { run } = this;
    run.context.set(step.conclusionField, conclusion, step.id, attempt);
    run.sm.complete();
    delete run.meta.feedback;
    delete run.meta.candidates;
    const completed: EnvelopeSpec = {
      eventType: "step_completed",
      scope: "step",
      step: ref,
      data: {
        durationS: Math.round((Date.now() - started) / 100) / 10,
        conclusionField: step.conclusionField,
        conclusion,
        ...(Array.isArray(conclusion) && step.kind === "parallel_sub_pipeline"
          ? { candidatesCount: conclusion.length }
          : {}),
      },
    };
    const artifacts = await run.artifacts(step, conclusion, { scope: "step", step: ref });
    if (matches(step.def.exit_condition, conclusion)) {
      await run.save();
      yield await this.emitter.event(completed, ...artifacts);
      // A later step's early exit (a cancelled deployment) says why in its conclusion's message.
      const message = (conclusion as Record<string, unknown>).message;
      yield* this.end.finish(
        "early_exit",
        run.sm.index > 0 && typeof message === "string" ? message : undefined,
      );
      return false;
    }
    if (matches(step.def.fail_condition, conclusion)) {
      run.sm.fail();
      await run.save();
      const message = (conclusion as Record<string, unknown>).message;
      yield await this.emitter.event(completed, ...artifacts);
      yield* this.end.failed(step, ref, {
        error: typeof message === "string" ? message : `${step.id} reported a failure.`,
        errorType: "step_reported_failure",
      });
      return false;
    }
    const more = run.sm.advance();
    await run.save();
    yield await this.emitter.event(completed, ...artifacts);
    await this.emitter.checkpoint();
    if (!more) {
      yield* this.end.finish("completed");
      return false;
    }
    return true;
  }
}
