// How a run ends, and how a step's failure ends it: step_failed, then
// pipeline_completed (completed, early_exit or failed) with the handoff to
// normal chat in one update, or, for a cancelled task, pipeline_canceled
// journaled only. Stacks the run leaves behind are marked for a cleanupOnly
// request, and the text the user reads says what is left and how to delete it
// (outcome-text.ts).
import { t } from "../../i18n/index.js";
import type { RuntimeEvent } from "../seam.js";
import type { EnvelopeSpec } from "./emitter.js";
import type { RunStatus } from "./files.js";
import { cleanupData, type LedgerEntry } from "./ledger.js";
import type { LoadedStep } from "./loader.js";
import { leftoverLines, outcomeText } from "./outcome-text.js";
import type { RunEnv } from "./run-env.js";

export interface StepFailure {
  error: string;
  errorType: string;
  errorId?: string;
  /** More for errorDetails (e.g. the resources a cleanup could not delete). */
  details?: Record<string, unknown>;
}

export class RunEnd {
  constructor(private readonly run: RunEnv) {}

  private get emitter() {
    return this.run.emitter;
  }

  /** step_failed, then the run ends failed. */
  async *failed(
    step: LoadedStep,
    ref: Record<string, unknown>,
    outcome: StepFailure,
  ): AsyncGenerator<RuntimeEvent> {
    this.run.sm.fail(step.id);
    await this.run.save();
    yield await this.emitter.event({
      eventType: "step_failed",
      scope: "step",
      step: ref,
      status: "failed",
      data: {
        error: outcome.error,
        errorSummary: outcome.error,
        errorDetails: {
          type: outcome.errorType,
          ...(outcome.errorId ? { errorId: outcome.errorId } : {}),
          ...(outcome.details ?? {}),
        },
      },
    });
    yield* this.finish("failed");
  }

  /**
   * Stacks of a run that ended without its deployment (marked for cleanup),
   * and those whose cleanup did not finish: kept for a cleanupOnly request.
   */
  private async leftovers(outcome: RunStatus): Promise<LedgerEntry[]> {
    const { run } = this;
    if (outcome === "completed" || outcome === "early_exit") return [];
    for (const step of run.pipeline.steps) {
      if (step.def.tracks_stacks) await run.ledger.markPending(step.id, run.meta.runNumber);
    }
    return run.ledger.pending().filter((e) => e.run === run.meta.runNumber);
  }

  /**
   * pipeline_completed and the handoff to normal chat, in one update.
   * `reason`: an early exit's own reason (a cancelled deployment).
   */
  async *finish(
    outcome: "completed" | "early_exit" | "failed",
    reason?: string,
  ): AsyncGenerator<RuntimeEvent> {
    const { run } = this;
    const status = outcome === "failed" ? "failed" : "completed";
    const leftovers = await this.leftovers(outcome);
    run.meta.status = outcome;
    run.meta.handedOff = true;
    run.meta.outcomeReason = outcomeText({
      lang: run.lang,
      pipeline: run.pipeline.name,
      outcome,
      ...(reason !== undefined ? { reason } : {}),
      leftovers,
    });
    delete run.meta.selection;
    await run.save();
    const summary = this.summary(outcome);
    yield await this.emitter.event(
      {
        eventType: "pipeline_completed",
        scope: "pipeline",
        status,
        data: {
          totalSteps: run.pipeline.steps.length,
          ...(outcome === "failed" ? { failed: true, reason: run.meta.outcomeReason } : {}),
          ...(outcome === "early_exit" ? { earlyExit: true, reason: run.meta.outcomeReason } : {}),
          ...(leftovers.length ? { leftoverResourceCount: leftovers.length } : {}),
        },
      },
      ...this.handoff(outcome, status, summary, leftovers),
      ...run.ledger.takeWarnings(),
    );
    await this.emitter.checkpoint();
  }

  private handoff(
    outcome: RunStatus,
    status: "completed" | "failed" | "canceled",
    summary: string,
    leftovers: LedgerEntry[],
  ): EnvelopeSpec[] {
    const onComplete = this.run.pipeline.def.on_complete;
    if (
      !onComplete ||
      !(onComplete.apply_on ?? ["completed", "early_exit", "failed", "canceled"]).includes(
        outcome as "completed",
      )
    )
      return [];
    return [
      {
        eventType: "pipeline_handoff_ready",
        scope: "pipeline",
        status,
        data: {
          action: onComplete.action,
          targetMode: "normal",
          outcome,
          summary,
          ...(leftovers.length
            ? {
                cleanup: {
                  status: "pending",
                  resourceCount: leftovers.length,
                  resources: leftovers.map((e) => cleanupData(e)),
                },
              }
            : {}),
        },
      },
    ];
  }

  /** One paragraph for the user and for the normal chat that follows. */
  summary(outcome: RunStatus): string {
    const { run } = this;
    const lines = [
      run.meta.outcomeReason ??
        t(run.lang, `runtime.pipeline.outcome.${outcome}`, { pipeline: run.pipeline.name }),
    ];
    for (const field of run.pipeline.def.on_complete?.handoff_context?.include ?? []) {
      if (!run.context.has(field)) continue;
      const value = JSON.stringify(run.context.get(field));
      lines.push(`${field}: ${value.length > 600 ? `${value.slice(0, 600)}…` : value}`);
    }
    return lines.join("\n");
  }

  /** A cancelled run (CancelTask): journaled and handed off; nothing is published any more. */
  async cancelled(): Promise<void> {
    const { run } = this;
    const leftovers = await this.leftovers("canceled");
    run.meta.status = "canceled";
    run.meta.handedOff = true;
    if (leftovers.length)
      run.meta.outcomeReason = [
        t(run.lang, "runtime.pipeline.outcome.canceled", { pipeline: run.pipeline.name }),
        ...leftoverLines(run.lang, leftovers),
      ].join("\n");
    delete run.meta.selection;
    await run.save();
    const summary = this.summary("canceled");
    await this.emitter.envelopes(
      {
        eventType: "pipeline_canceled",
        scope: "pipeline",
        status: "canceled",
        data: { source: "executor", reason: "The task was canceled." },
      },
      ...this.handoff("canceled", "canceled", summary, leftovers),
    );
    await this.emitter.checkpoint();
  }
}
