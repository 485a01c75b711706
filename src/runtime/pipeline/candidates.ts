// A parallel_sub_pipeline step: the sub-pipeline runs once per entry of the
// iterated list (each entry is the pseudo-field `candidate`), all at the same
// time, their events interleaved as they happen. Each candidate has its own
// context, state machine (with its own rollback limit) and transcripts; its
// progress is saved after every sub-step, so a restart continues where each
// one was. The step's conclusion is the list of results; a candidate that
// failed is kept in it with failed: true (and is never offered for selection).
// While the step runs, a hard interrupt aimed at it restarts candidates
// (candidate-restart.ts): those in scope stop, get a new attempt and run again.
import type { RuntimeEvent } from "../seam.js";
import { inScope, type RestartRequest } from "./candidate-restart.js";
import { PipelineContext } from "./context.js";
import type { EnvelopeSpec } from "./emitter.js";
import type { CandidateProgress } from "./files.js";
import { valueAt } from "./guards.js";
import { merge } from "./merge.js";
import type { LoadedStep, LoadedSubPipeline } from "./loader.js";
import { attemptKey, type RunEnv } from "./run-env.js";
import type { EvaluatedCandidate } from "./selection.js";
import { StateMachine } from "./state-machine.js";
import type { StepOutcome } from "./step-attempt.js";
import { runAgentStep } from "./step-executor.js";

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
  const stops = new Map<number, AbortController>();
  const requests: RestartRequest[] = [];
  const stopListening = run.restarts.listen((request) => {
    if (signal.aborted || !list.some((_c, i) => inScope(request.scope, i))) return false;
    requests.push(request);
    for (const [index, stop] of stops) if (inScope(request.scope, index)) stop.abort();
    return true;
  });
  try {
    for (;;) {
      const results = yield* merge(
        list.map((candidate, index) => {
          const stop = new AbortController();
          stops.set(index, stop);
          return runCandidate(
            run,
            sub,
            stepRef,
            index,
            candidate,
            parent,
            AbortSignal.any([signal, abort.signal, stop.signal]),
          );
        }),
        { onError: () => abort.abort() },
      );
      if (signal.aborted) return { kind: "cancelled" };
      if (requests.length > 0) {
        for (const request of requests.splice(0)) {
          for (const [index, candidate] of list.entries()) {
            if (inScope(request.scope, index))
              yield* restartCandidate(run, sub, stepRef, index, candidate, request);
          }
        }
        continue;
      }
      if (results.some((r) => r === undefined)) return { kind: "cancelled" };
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
  } finally {
    stopListening();
  }
}

const nameOf = (candidateObj: Record<string, unknown>, index: number): string =>
  typeof candidateObj.name === "string" ? candidateObj.name : `candidate ${index}`;

const objectOf = (candidate: unknown): Record<string, unknown> =>
  (candidate && typeof candidate === "object" ? candidate : { value: candidate }) as Record<string, unknown>;

/** The candidate coordinates of an attempt and the ids every candidate event carries. */
function identity(sub: LoadedSubPipeline, index: number, name: string, attempt: number) {
  const id = `candidate-${index}`;
  return {
    ref: {
      id,
      subPipelineId: id,
      index,
      attempt,
      name,
      pipelineName: sub.name,
      totalSteps: sub.steps.length,
      runId: `${id}-${attempt}`,
      steps: sub.steps.map((s) => s.id),
    },
    ids: {
      subPipelineId: id,
      candidateIndex: index,
      candidateName: name,
      subPipelineName: sub.name,
      totalSteps: sub.steps.length,
    },
  };
}

/** Stops a candidate's attempt for good: the next one starts at the target step with the reason as feedback. */
async function* restartCandidate(
  run: RunEnv,
  sub: LoadedSubPipeline,
  stepRef: Record<string, unknown>,
  index: number,
  candidate: unknown,
  request: RestartRequest,
): AsyncGenerator<RuntimeEvent> {
  const progress = run.meta.candidates?.[String(index)];
  if (!progress) return;
  const target =
    request.targetStep && sub.steps.some((s) => s.id === request.targetStep)
      ? request.targetStep
      : sub.steps[0].id;
  const sm = new StateMachine(sub.steps, sub.def.max_rollbacks ?? 5, 10, progress.stateMachine);
  const context = new PipelineContext({}, progress.context);
  for (const s of sub.steps.slice(sm.indexOf(target))) context.invalidate(s.conclusionField);
  sm.restartAt(target);
  const { ref, ids } = identity(sub, index, nameOf(objectOf(candidate), index), progress.attempt);
  const next = progress.attempt + 1;
  Object.assign(progress, {
    attempt: next,
    stateMachine: sm.snapshot(),
    context: context.snapshot(),
    restart: { reason: request.reason },
  } satisfies Partial<CandidateProgress>);
  delete progress.result;
  await run.save();
  yield await run.emitter.event({
    eventType: "candidate_restart_requested",
    scope: "candidate",
    step: stepRef,
    candidate: ref,
    data: {
      ...ids,
      candidateScope: request.scope,
      targetCandidateStepId: target,
      nextCandidateAttempt: next,
      reason: request.reason,
    },
  });
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
  const candidateObj = objectOf(candidate);
  const name = nameOf(candidateObj, index);
  const { ref: candidateRef, ids } = identity(sub, index, name, progress.attempt);
  const id = candidateRef.id;
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
  ): EnvelopeSpec => ({
    eventType,
    scope: candidateStep ? ("candidate_step" as const) : ("candidate" as const),
    data: { ...ids, ...data },
    step: stepRef,
    candidate: candidateRef,
    ...(candidateStep ? { candidateStep } : {}),
  });

  let feedback: string | undefined;
  if (!saved) {
    for (const [f, value] of Object.entries({ ...parent, candidate: candidateObj }))
      context.set(f, value, "parent", 0);
    await persist();
    yield await run.emitter.event(emit("candidate_started", {}));
  } else if (saved.restart) {
    // The new attempt of a restarted candidate: announced, and its first step gets the user's message.
    feedback = saved.restart.reason;
    delete progress.restart;
    await persist();
    yield await run.emitter.event(emit("candidate_started", { restarted: true }));
  }
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
        markers: [`<!--step:${s.id}-->`, `<!--candidate:${index}-->`, ...run.markers()],
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
        emit("candidate_failed", { failed: true, failedStepId: s.id, ...error }),
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
