// A parallel_sub_pipeline step: the sub-pipeline runs once per entry of the
// iterated list (each entry is the pseudo-field `candidate`), all at the same
// time, their events interleaved as they happen. Each candidate has its own
// context, state machine (with its own rollback limit) and transcripts; its
// progress is saved after every sub-step, so a restart continues where each
// one was. The step's conclusion is the list of results; a candidate that
// failed is kept in it with failed: true (and is never offered for selection).
import type { RuntimeEvent } from "../seam.js";
import { PipelineContext } from "./context.js";
import type { CandidateProgress } from "./files.js";
import { valueAt } from "./guards.js";
import { merge } from "./merge.js";
import type { LoadedStep, LoadedSubPipeline } from "./loader.js";
import { attemptKey, type RunEnv } from "./run-env.js";
import type { EvaluatedCandidate } from "./selection.js";
import { StateMachine } from "./state-machine.js";
import { runAgentStep, type StepOutcome } from "./step-executor.js";

type Outcome =
  Exclude<StepOutcome, { kind: "conclusion" }> | { kind: "conclusion"; conclusion: EvaluatedCandidate[] };

export async function* runCandidates(
  run: RunEnv,
  step: LoadedStep,
  stepRef: Record<string, unknown>,
  signal: AbortSignal,
): AsyncGenerator<RuntimeEvent, Outcome> {
  const sub = run.pipeline.subPipelines.get(step.def.sub_pipeline as string) as LoadedSubPipeline;
  const [field, ...rest] = sub.def.iterate_over.split(".");
  const list = rest.length ? valueAt(run.context.get(field), rest.join(".")) : run.context.get(field);
  if (!Array.isArray(list) || list.length === 0) {
    return {
      kind: "failed",
      error: `${sub.def.iterate_over} holds no candidates.`,
      errorType: "no_candidates",
    };
  }
  run.meta.candidates ??= {};
  const parent = run.context.values(sub.def.context_fields_from_parent ?? []);
  const abort = new AbortController();
  const candidateSignal = AbortSignal.any([signal, abort.signal]);
  const results = yield* merge(
    list.map((candidate, index) =>
      runCandidate(run, sub, stepRef, index, candidate, parent, candidateSignal),
    ),
    { onError: () => abort.abort() },
  );
  if (signal.aborted || results.some((r) => r === undefined)) return { kind: "cancelled" };
  const evaluated = results as EvaluatedCandidate[];
  if (evaluated.every((c) => c.failed)) {
    return {
      kind: "failed",
      error: "Every candidate failed its evaluation.",
      errorType: "all_candidates_failed",
    };
  }
  return { kind: "conclusion", conclusion: evaluated };
}

async function* runCandidate(
  run: RunEnv,
  sub: LoadedSubPipeline,
  stepRef: Record<string, unknown>,
  index: number,
  candidate: unknown,
  parent: Record<string, unknown>,
  signal: AbortSignal,
): AsyncGenerator<RuntimeEvent, EvaluatedCandidate | undefined> {
  const key = String(index);
  const saved: CandidateProgress | undefined = run.meta.candidates?.[key];
  if (saved?.result) return saved.result;
  const maxRollbacks = sub.def.max_rollbacks ?? 5;
  const sm = new StateMachine(sub.steps, maxRollbacks, 10, saved?.stateMachine);
  const context = new PipelineContext({}, saved?.context);
  const progress: CandidateProgress = saved ?? {
    attempt: 1,
    stateMachine: sm.snapshot(),
    context: context.snapshot(),
  };
  const candidateObj = (
    candidate && typeof candidate === "object" ? candidate : { value: candidate }
  ) as Record<string, unknown>;
  const name = typeof candidateObj.name === "string" ? candidateObj.name : `candidate ${index}`;
  const id = `candidate-${index}`;
  const candidateRef = {
    id,
    subPipelineId: id,
    index,
    attempt: progress.attempt,
    name,
    pipelineName: sub.name,
    totalSteps: sub.steps.length,
    runId: `${id}-${progress.attempt}`,
    steps: sub.steps.map((s) => s.id),
  };
  const ids = {
    subPipelineId: id,
    candidateIndex: index,
    candidateName: name,
    subPipelineName: sub.name,
    totalSteps: sub.steps.length,
  };
  const persist = async (): Promise<void> => {
    progress.stateMachine = sm.snapshot();
    progress.context = context.snapshot();
    (run.meta.candidates ??= {})[key] = progress;
    await run.save();
  };
  const emit = (
    eventType: string,
    data: Record<string, unknown>,
    candidateStep?: Record<string, unknown>,
  ) => ({
    eventType,
    scope: candidateStep ? ("candidate_step" as const) : ("candidate" as const),
    data: { ...ids, ...data },
    step: stepRef,
    candidate: candidateRef,
    ...(candidateStep ? { candidateStep } : {}),
  });

  if (!saved) {
    for (const [f, value] of Object.entries({ ...parent, candidate: candidateObj }))
      context.set(f, value, "parent", 0);
    await persist();
    yield await run.emitter.event(emit("candidate_started", {}));
  }
  let feedback: string | undefined;
  for (let s = sm.current; s; s = sm.current) {
    const resumed = sm.isRunning();
    const attempt = resumed ? sm.attempt(s.id) : sm.begin();
    const transcriptKey = attemptKey(run.meta.runNumber, s.id, attempt, index);
    const candidateStep = {
      id: s.id,
      attempt,
      index: sm.index,
      total: sm.total,
      runId: `${id}-${s.id}-${attempt}`,
    };
    if (!resumed) {
      await persist();
      yield await run.emitter.event(
        emit(
          "candidate_step_started",
          { stepId: s.id, stepIndex: sm.index, activeAttemptId: transcriptKey, transcriptId: transcriptKey },
          candidateStep,
        ),
      );
    }
    const earlier = sub.steps.slice(0, sm.index).map((x) => x.id);
    const outcome = yield* runAgentStep(
      run.step,
      {
        step: s,
        surface: run.rich ? s.rich : s.standard,
        attempt,
        key: transcriptKey,
        coords: { scope: "candidate_step", step: stepRef, candidate: candidateRef, candidateStep },
        candidateIndex: index,
        markers: [`<!--step:${s.id}-->`, `<!--candidate:${index}-->`],
        userText: [
          `Evaluate candidate ${index} (${name}): run the step ${s.id}.`,
          feedback ? `Feedback: ${feedback}` : "",
        ]
          .filter(Boolean)
          .join("\n\n"),
        promptValues: { ...context.values(Object.keys(context.snapshot().fields)) },
        rollbackTargets: earlier,
        rollbackRefusal: (target) =>
          earlier.includes(target)
            ? sm.rollbackRefusal(target)
            : `${target} is not an earlier step of this candidate`,
      },
      signal,
    );
    feedback = undefined;
    if (outcome.kind === "cancelled") return undefined;
    if (outcome.kind === "failed") {
      sm.fail();
      await persist();
      const error = {
        error: outcome.error,
        errorSummary: outcome.error,
        errorDetails: { type: outcome.errorType, ...(outcome.errorId ? { errorId: outcome.errorId } : {}) },
      };
      yield await run.emitter.event(
        emit("candidate_step_failed", { stepId: s.id, ...error }, candidateStep),
        emit("candidate_failed", { failed: true, ...error }),
      );
      progress.result = { index, candidate: candidateObj, failed: true, error: outcome.error };
      await persist();
      return progress.result;
    }
    if (outcome.kind === "rollback") {
      sm.rollback(outcome.target);
      const staleFields = context.invalidate(sub.steps[sm.indexOf(outcome.target)].conclusionField);
      feedback = outcome.reason;
      await persist();
      yield await run.emitter.event({
        ...emit("rollback_completed", {
          fromStep: s.id,
          toStep: outcome.target,
          reason: outcome.reason,
          staleFields,
          rollbackScope: "candidate",
        }),
      });
      continue;
    }
    context.set(s.conclusionField, outcome.conclusion, s.id, attempt);
    sm.complete();
    sm.advance();
    await persist();
    const coords = {
      scope: "candidate_step" as const,
      step: stepRef,
      candidate: candidateRef,
      candidateStep,
    };
    yield await run.emitter.event(
      emit(
        "candidate_step_completed",
        { stepId: s.id, conclusionField: s.conclusionField, conclusion: outcome.conclusion },
        candidateStep,
      ),
      ...(await run.artifacts(s, outcome.conclusion, coords)),
    );
  }
  progress.result = {
    index,
    candidate: candidateObj,
    failed: false,
    ...context.values(sub.steps.map((x) => x.conclusionField)),
  };
  await persist();
  yield await run.emitter.event(emit("candidate_completed", { failed: false }));
  return progress.result;
}
