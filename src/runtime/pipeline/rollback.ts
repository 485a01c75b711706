// A rollback (complete_step's rollback_request, a deployment's reselect, or a
// hard interrupt): the state machine goes back, the target's field and what
// derives from it become stale, the target runs again with the reason as
// feedback, and the stacks of the steps rolled back over are deleted. A stack
// that cannot be deleted fails the step that created it and ends the run:
// going back would leave it behind unseen.
import type { RuntimeEvent } from "../seam.js";
import { runCleanup } from "./cleanup.js";
import { cleanupData, type LedgerEntry } from "./ledger.js";
import type { LoadedStep } from "./loader.js";
import type { RunEnd } from "./run-end.js";
import type { RunEnv } from "./run-env.js";

/** Applies a rollback; false when the run ended (a stack it had to delete could not be). */
export async function* rollback(
  run: RunEnv,
  end: RunEnd,
  signal: AbortSignal,
  from: LoadedStep,
  target: string,
  reason: string,
  interrupt = false,
): AsyncGenerator<RuntimeEvent, boolean> {
  const to = run.sm.indexOf(target);
  const between = run.pipeline.steps.slice(to, run.sm.index + 1);
  const fromRef = run.stepRef(from, run.sm.attempt(from.id));
  run.sm.rollback(target, interrupt);
  const staleFields = run.context.invalidate(run.pipeline.steps[to].conclusionField);
  run.meta.feedback = reason;
  delete run.meta.selection;
  delete run.meta.candidates;
  run.meta.status = "running";
  await run.save();
  const entries: LedgerEntry[] = [];
  for (const step of between)
    if (step.def.tracks_stacks) entries.push(...(await run.ledger.markPending(step.id, run.meta.runNumber)));
  yield await run.emitter.event(
    {
      eventType: "rollback_completed",
      scope: "pipeline",
      data: {
        fromStep: from.id,
        toStep: target,
        ...(interrupt ? { toStepId: target } : {}),
        reason,
        staleFields,
        rollbackScope: "parent",
        ...(entries.length ? { cleanupResourceCount: entries.length } : {}),
      },
    },
    ...run.ledger.takeWarnings(),
  );
  if (entries.length === 0) return true;
  const failed = yield* cleanup(run, entries, signal);
  if (failed.length === 0) return true;
  const what = failed
    .map(
      (e) =>
        `${e.resourceId}${e.resourceName ? ` (${e.resourceName})` : ""}: ${(e.lastError ?? "").split("\n")[0]}`,
    )
    .join("; ");
  yield* end.failed(from, fromRef, {
    error: `The rollback to ${target} stopped: ${failed.length} stack(s) that ${from.id} created could not be deleted (${what}).`,
    errorType: "cleanup_failed",
    details: { resources: failed.map((e) => cleanupData(e)) },
  });
  return false;
}

/** Deletes the entries (the ledger's stacks), one after the other. */
function cleanup(run: RunEnv, entries: LedgerEntry[], signal: AbortSignal) {
  return runCleanup({
    ledger: run.ledger,
    entries,
    cloud: run.step.baseTurn.cloud,
    workspace: run.step.session.workspace,
    emitter: run.emitter,
    language: run.lang,
    signal,
  });
}
