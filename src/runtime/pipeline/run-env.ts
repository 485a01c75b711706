// What the runner, the candidates' sub-pipelines and the selection share
// during one pipeline turn, and the small helpers they use to describe steps
// in envelopes (coordinates, step_completed with its artifacts).
import { readFile } from "node:fs/promises";
import type { Language } from "../../i18n/index.js";
import { SerialQueue } from "../fs-util.js";
import { CandidateRestarts } from "./candidate-restart.js";
import type { CleanupLedger } from "./ledger.js";
import { demoMarkers } from "./demo-scenarios.js";
import type { PipelineContext } from "./context.js";
import type { EnvelopeSpec } from "./emitter.js";
import type { PipelineFiles, PipelineMeta } from "./files.js";
import type { LoadedPipeline, LoadedStep } from "./loader.js";
import type { StateMachine } from "./state-machine.js";
import type { StepEnv } from "./step-attempt.js";

/**
 * The transcript directory (and tool-id prefix) of a step attempt: unique
 * across the runs of a context, its candidates and its attempts.
 */
export function attemptKey(run: number, stepId: string, attempt: number, candidate?: number): string {
  return `r${run}.${candidate === undefined ? "" : `candidate-${candidate}.`}${stepId}-${attempt}`;
}

/** Largest artifact body put into an artifact_created envelope. */
const ARTIFACT_MAX = 64 * 1024;

export class RunEnv {
  private readonly saves = new SerialQueue();
  /** Hard interrupts that restart candidates reach the running parallel step through this. */
  readonly restarts = new CandidateRestarts();

  constructor(
    readonly step: StepEnv,
    readonly pipeline: LoadedPipeline,
    readonly files: PipelineFiles,
    readonly ledger: CleanupLedger,
    readonly meta: PipelineMeta,
    readonly context: PipelineContext,
    readonly sm: StateMachine,
    readonly lang: Language,
  ) {}

  get emitter() {
    return this.step.emitter;
  }

  get rich(): boolean {
    return this.meta.presentation === "rich";
  }

  /** Markers every system prompt of the run carries (the demo scenario's). */
  markers(): string[] {
    return demoMarkers(this.meta.scenario);
  }

  /** Persists meta and context (saves of parallel candidates queue up in order). */
  save(): Promise<void> {
    return this.saves.run(() => {
      this.meta.stateMachine = this.sm.snapshot();
      return this.files.save(this.meta, this.context.snapshot());
    });
  }

  /** Coordinates of a top-level step attempt. */
  stepRef(step: LoadedStep, attempt: number): Record<string, unknown> {
    return {
      id: step.id,
      runId: `step-${step.id}-${attempt}`,
      attempt,
      index: this.sm.indexOf(step.id),
      total: this.sm.total,
      type: step.kind,
      ...(step.def.ui_mode ? { uiMode: step.def.ui_mode } : {}),
    };
  }

  /** artifact_created envelopes for the files a conclusion names (a2a_artifacts). */
  async artifacts(
    step: LoadedStep,
    conclusion: unknown,
    coords: Partial<EnvelopeSpec>,
  ): Promise<EnvelopeSpec[]> {
    const out: EnvelopeSpec[] = [];
    for (const spec of step.def.a2a_artifacts ?? []) {
      const rel = (conclusion as Record<string, unknown> | undefined)?.[spec.path_field];
      if (typeof rel !== "string") continue;
      let content: string;
      try {
        content = await readFile(await this.step.session.workspace.resolveExisting(rel), "utf8");
      } catch {
        continue;
      }
      const artifact = {
        filename: rel.replace(/\\/g, "/"),
        mediaType: spec.media_type,
        content: content.slice(0, ARTIFACT_MAX),
        ...(content.length > ARTIFACT_MAX ? { truncated: true } : {}),
        ...(spec.role ? { role: spec.role } : {}),
        supersedesKey: `${step.id}:${spec.path_field}`,
      };
      out.push({
        eventType: "artifact_created",
        scope: coords.scope ?? "step",
        data: { source: "conclusion" },
        artifact,
        ...coords,
      });
    }
    return out;
  }
}
