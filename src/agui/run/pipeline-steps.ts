// Pipeline envelopes as AG-UI steps: which envelope types open and close a
// step, the step keys (a top-level step, or a candidate's step), the durable
// open set that survives the run, the steps this run opened (closed again at its
// end), and the message key a pipeline text or tool call is grouped under.
import { isObject, str, type JsonObject } from "../upstream/a2a-items.js";
import { CUSTOM_GUIDANCE, CUSTOM_PIPELINE, type AguiEvent } from "../events.js";

/** Pipeline eventTypes that get a CUSTOM iac-code.pipeline.v1 projection (the seed's list). */
export const PIPELINE_CUSTOM_TYPES = new Set([
  "pipeline_started", "pipeline_resumed", "pipeline_completed", "pipeline_error", "pipeline_warning",
  "backup_blocked", "candidate_started", "candidate_completed", "candidate_failed", "candidate_interrupted",
  "candidate_restart_requested", "candidate_selected", "candidate_detail_shown", "candidate_step_failed",
  "sub_pipeline_started", "sub_pipeline_completed", "sub_step_failed", "step_failed", "stack_progress",
  "stack_instances_progress", "stack_current_changed", "cleanup_started", "cleanup_progress",
  "cleanup_completed", "cleanup_failed", "rollback_triggered", "rollback_completed",
  "context_compaction_started", "context_compacted", "context_compaction_failed", "fields_marked_stale",
  "diagram_shown", "mcp_status", "tool_progress",
]); // prettier-ignore

/** The judge's events on a message sent while the pipeline runs: CUSTOM iac-code.guidance.v1. */
export const GUIDANCE_CUSTOM_TYPES = new Set(["interrupt_received", "interrupt_classified"]);

/** The CUSTOM name a pipeline envelope is projected under, if any. */
export function pipelineCustomName(eventType: string): string | undefined {
  if (PIPELINE_CUSTOM_TYPES.has(eventType)) return CUSTOM_PIPELINE;
  return GUIDANCE_CUSTOM_TYPES.has(eventType) ? CUSTOM_GUIDANCE : undefined;
}

const STEP_OPEN_TYPES = new Set(["step_started", "candidate_step_started", "input_received"]);
const STEP_CLOSE_TYPES = new Set([
  "step_completed",
  "step_failed",
  "candidate_step_completed",
  "candidate_step_failed",
]);

/** AG-UI step name of a durable step key: the bare id for top-level steps. */
export function stepName(key: string): string {
  return key.startsWith("step:") ? key.slice(5) : key;
}

/** The message key of a pipeline envelope's text, reasoning and tool calls: its run, scope and coordinates. */
export function pipelineMessageKey(env: JsonObject, fallbackRunId: string): string {
  const coords: string[] = [];
  for (const k of ["candidate", "candidateStep", "step"]) {
    const o = env[k];
    if (!isObject(o)) continue;
    const c = str(o.runId) ?? str(o.id);
    if (c && !coords.includes(c)) coords.push(c);
  }
  const runId = str(env.pipelineRunId) ?? fallbackRunId;
  return ["pipeline-message", runId, str(env.scope) ?? "pipeline", ...coords].join(":");
}

type StepEvent = (type: "STEP_STARTED" | "STEP_FINISHED", stepName: string) => AguiEvent;

export class PipelineSteps {
  /** Steps this run sent STEP_STARTED for. */
  private readonly runSteps = new Set<string>();

  constructor(
    /** The durable open set (persisted with the execution). */
    private readonly open: Set<string>,
    private readonly event: StepEvent,
  ) {}

  /** STEP_STARTED for each durable step a previous run left open. */
  reopen(out: AguiEvent[]): void {
    for (const key of [...this.open].sort()) {
      this.runSteps.add(key);
      out.push(this.event("STEP_STARTED", stepName(key)));
    }
  }

  /** Opens or closes the envelope's step; a step closed that this run never showed is started and finished at once. */
  lifecycle(env: JsonObject, eventType: string, out: AguiEvent[]): void {
    const stepObj = isObject(env.candidateStep)
      ? env.candidateStep
      : isObject(env.step)
        ? env.step
        : undefined;
    const stepId = stepObj ? str(stepObj.id) : undefined;
    if (!stepId) return;
    const cand = isObject(env.candidate) ? env.candidate : undefined;
    const candId = cand ? (str(cand.id) ?? str(cand.subPipelineId) ?? str(cand.runId)) : undefined;
    const key = candId ? `candidate:${candId}:${stepId}` : `step:${stepId}`;
    if (STEP_OPEN_TYPES.has(eventType)) {
      this.open.add(key);
      if (!this.runSteps.has(key)) {
        this.runSteps.add(key);
        out.push(this.event("STEP_STARTED", stepName(key)));
      }
    } else if (STEP_CLOSE_TYPES.has(eventType)) {
      if (!this.open.has(key)) return;
      this.open.delete(key);
      if (this.runSteps.has(key)) {
        this.runSteps.delete(key);
        out.push(this.event("STEP_FINISHED", stepName(key)));
      } else {
        const started = this.event("STEP_STARTED", stepName(key));
        out.push(started, { ...this.event("STEP_FINISHED", stepName(key)), timestamp: started.timestamp });
      }
    }
  }

  /** STEP_FINISHED for every step this run opened (the durable set is kept for the next run). */
  finishAll(out: AguiEvent[]): void {
    for (const key of [...this.runSteps].sort()) out.push(this.event("STEP_FINISHED", stepName(key)));
    this.runSteps.clear();
  }
}
