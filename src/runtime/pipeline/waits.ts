// The user waits of a run, beside the candidate selection they ask for
// (selection.ts): the selection's input (published, asked again when an
// answer names no option, taken as the step's conclusion) and the pause of
// a judge failure (steps stop before their next model call until the user
// says continue). Each answer arrives through the run's input registry.
import { t } from "../../i18n/index.js";
import { InvalidInputAnswerError } from "../errors.js";
import { checkAnswer } from "../permissions/input-requests.js";
import type { InputAnswer, InputRequest, RuntimeEvent } from "../seam.js";
import { SessionClosedError } from "../session/turn-errors.js";
import type { SelectionWait } from "./files.js";
import type { LoadedStep } from "./loader.js";
import type { RunEnv } from "./run-env.js";
import {
  parseChoice,
  pauseRequest,
  selectedPlan,
  selectionNotes,
  selectionOptions,
  selectionRequest,
  evaluatedCandidates,
  type PresentedOption,
} from "./selection.js";
import type { StepOutcome } from "./step-attempt.js";

/** A selection answer: an option id or a typed text. */
type Answer = { selectedId?: string; freeText?: string };

/**
 * The candidate selection: the model presents the options (first attempt
 * of the step), then the run waits for the user's choice, which becomes
 * the conclusion. A message that names no option is asked again.
 */
export async function* candidateSelection(
  run: RunEnv,
  signal: AbortSignal,
  step: LoadedStep,
  attempt: number,
  ref: Record<string, unknown>,
  message: string | undefined,
  /** The model presenting the options (the step's agent loop). */
  present: () => AsyncGenerator<RuntimeEvent, StepOutcome>,
): AsyncGenerator<RuntimeEvent, StepOutcome | { kind: "conclusion"; conclusion: unknown }> {
  const evaluated = () => evaluatedCandidates((field) => run.context.get(field));
  let wait = run.meta.selection;
  let pending: Promise<Answer | undefined> | undefined;
  if (!wait) {
    // Asked again after a rollback: the prompt says why.
    const why = attempt > 1 ? run.meta.feedback : undefined;
    const presented = yield* present();
    if (presented.kind !== "conclusion") return presented;
    const conclusion = presented.conclusion as { user_prompt: string; options: PresentedOption[] };
    const options = selectionOptions(conclusion.options, evaluated(), run.rich);
    const notes = selectionNotes(run.lang, evaluated(), why);
    wait = {
      inputId: `selection-${run.meta.runNumber}-${attempt}-1`,
      toolUseId: `${step.id}-${attempt}`,
      prompt: [...notes, conclusion.user_prompt].join("\n\n"),
      options,
    };
    run.meta.selection = wait;
    run.meta.status = "waiting_input";
    await run.save();
    yield await run.emitter.event({
      eventType: "step_completed",
      scope: "step",
      step: ref,
      data: {
        conclusionField: step.conclusionField,
        conclusion: { user_prompt: wait.prompt, options: conclusion.options },
        awaitingInput: true,
      },
    });
    pending = (yield* ask(run, signal, step, ref, wait, true)).answer;
  } else if (message === undefined) {
    // A restored wait: published again (same input) so its answer can be taken.
    pending = (yield* ask(run, signal, step, ref, wait, false)).answer;
  }
  for (;;) {
    const answer = message !== undefined ? { freeText: message } : await pending;
    message = undefined;
    if (!answer) return { kind: "cancelled" };
    const choice = parseChoice(answer, wait.options);
    if (!choice) {
      const asked: number = (wait.asked ?? 1) + 1;
      wait = {
        ...wait,
        inputId: `selection-${run.meta.runNumber}-${attempt}-${asked}`,
        asked,
        validationError: t(run.lang, "runtime.pipeline.selection.invalid"),
      };
      run.meta.selection = wait;
      await run.save();
      pending = (yield* ask(run, signal, step, ref, wait, true)).answer;
      continue;
    }
    const option = choice.option;
    delete run.meta.selection;
    run.meta.status = "running";
    await run.save();
    const selected = {
      kind: "candidate_selection",
      inputId: wait.inputId,
      toolUseId: wait.toolUseId,
      selectedValue: option.id,
      selectedIndex: option.candidateIndex,
      selectedOption: option,
      userInputLength: (answer.freeText ?? answer.selectedId ?? "").length,
    };
    // Also an input_received event: the surfaces stop showing the wait, however it was answered.
    const envelopes = await run.emitter.envelopes(
      {
        eventType: "input_received",
        scope: "step",
        step: ref,
        input: { kind: "candidate_selection", inputId: wait.inputId, toolUseId: wait.toolUseId },
        data: selected,
      },
      {
        eventType: "candidate_selected",
        scope: "step",
        step: ref,
        data: {
          candidateIndex: option.candidateIndex,
          candidateName: option.label,
          selectedValue: option.id,
        },
      },
    );
    yield {
      type: "input_received",
      inputId: wait.inputId,
      toolUseId: wait.toolUseId,
      kind: "candidate_selection",
      pipeline: envelopes,
    };
    return { kind: "conclusion", conclusion: selectedPlan(choice, evaluated()) };
  }
}

/** The pause of a judge failure: steps wait before their next model call until the user says continue. */
export async function pauseSteps(
  run: RunEnv,
  signal: AbortSignal,
  step: LoadedStep,
  reason: string,
  /** Where the wait's events go: the running turn. */
  outbox: (event: RuntimeEvent) => void,
): Promise<void> {
  const { control, gate, registry } = run.step;
  control.pause();
  try {
    await gate.acquire(signal);
  } catch {
    control.unpause();
    return;
  }
  const request = pauseRequest({
    inputId: `pause-${run.meta.runNumber}-${Date.now().toString(36)}`,
    toolUseId: `${step.id}-pause`,
    lang: run.lang,
  });
  const answered = new Promise<void>((resolve) => {
    registry.publish(request, (answer) => {
      checkAnswer(request, answer);
      resolve();
      return true;
    });
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
  const input = { kind: request.kind, inputId: request.inputId, toolUseId: request.toolUseId };
  const asked = await run.emitter.envelopes({
    eventType: "input_required",
    scope: "step",
    status: "input_required",
    step: {
      id: step.id,
      runId: `step-${step.id}-${run.sm.attempt(step.id)}`,
      attempt: run.sm.attempt(step.id),
    },
    input,
    data: {
      ...input,
      prompt: request.prompt,
      reason: reason.slice(0, 200),
      paused: true,
      options: request.options,
    },
  });
  outbox({ type: "input_required", request, pipeline: asked });
  await answered;
  registry.settle(request.inputId);
  control.unpause();
  gate.release();
  if (signal.aborted) return;
  const received = await run.emitter.envelopes({
    eventType: "input_received",
    scope: "step",
    input,
    data: { ...input, selectedValue: "continue" },
  });
  outbox({ type: "input_received", ...input, pipeline: received });
}

/**
 * Publishes the selection wait (with its envelope when `announce`) and
 * returns its answer to come: the input takes answers from the moment it
 * is yielded.
 */
async function* ask(
  run: RunEnv,
  signal: AbortSignal,
  step: LoadedStep,
  ref: Record<string, unknown>,
  wait: SelectionWait,
  announce: boolean,
): AsyncGenerator<RuntimeEvent, { answer: Promise<Answer | undefined> }> {
  const request = selectionRequest({ ...wait, lang: run.lang });
  const envelopes = announce
    ? await run.emitter.envelopes({
        eventType: "input_required",
        scope: "step",
        status: "input_required",
        step: ref,
        input: { kind: "candidate_selection", inputId: wait.inputId, toolUseId: wait.toolUseId },
        data: {
          kind: "candidate_selection",
          stepId: step.id,
          inputId: wait.inputId,
          prompt: request.prompt,
          options: wait.options,
          ...(wait.validationError ? { validationError: wait.validationError } : {}),
        },
      })
    : undefined;
  if (announce) await run.emitter.checkpoint();
  const answer = answerOf(run, signal, request);
  yield { type: "input_required", request, ...(envelopes ? { pipeline: envelopes } : {}) };
  // Wrapped: an async generator would wait for a promise it returns.
  return { answer };
}

/** Waits for the answer of a pipeline-level input; undefined when the turn is cancelled. */
function answerOf(run: RunEnv, signal: AbortSignal, request: InputRequest): Promise<Answer | undefined> {
  const { registry } = run.step;
  const lifetime = run.step.session.lifetime;
  return new Promise((resolve, reject) => {
    const done = (): void => {
      signal.removeEventListener("abort", onAbort);
      registry.settle(request.inputId);
    };
    const onAbort = (): void => {
      done();
      if (lifetime.closed) reject(new SessionClosedError());
      else resolve(undefined);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    registry.publish(request, (answer: InputAnswer) => {
      checkAnswer(request, answer);
      if (answer.kind === "permission") throw new InvalidInputAnswerError("A choice is expected.");
      if (answer.cancelled) {
        done();
        resolve(undefined);
        return true;
      }
      done();
      resolve({
        ...(answer.selectedId ? { selectedId: answer.selectedId } : {}),
        ...(answer.freeText ? { freeText: answer.freeText } : {}),
      });
      return true;
    });
  });
}
