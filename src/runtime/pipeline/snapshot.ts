// The pipeline snapshot (a2a/pipeline-snapshot): the state of the latest run
// reduced from the journal (steps, candidates, pending input, cleanup, stale
// fields, outcome). It is a pure fold over envelopes, so the saved copy is only
// a cache: a reader brings it up to date from the journal tail.
import type { PipelineSnapshot } from "../../contract/index.js";
import type { PipelineEnvelope } from "../seam.js";

/** The snapshot's shape is the a2a/pipeline-snapshot contract. */
export type { PipelineSnapshot };
type SnapshotCandidate = PipelineSnapshot["candidates"][number];

export function emptySnapshot(): PipelineSnapshot {
  return {
    schemaVersion: "1.0",
    pipelineRunId: "",
    pipelineName: "",
    contextId: "",
    taskId: "",
    iacCodeSessionId: "",
    runNumber: 0,
    firstSequence: 0,
    lastSequence: 0,
    status: "running",
    currentStepId: null,
    steps: [],
    candidates: [],
    pendingInput: null,
    cleanup: { resources: [] },
    staleFields: [],
    outcome: null,
    handoff: null,
    updatedAt: new Date(0).toISOString(),
  };
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const num = (v: unknown): number => (typeof v === "number" ? v : 0);

function candidateOf(snap: PipelineSnapshot, env: PipelineEnvelope): SnapshotCandidate | undefined {
  const id = str(env.candidate?.id);
  return snap.candidates.find((c) => c.id === id);
}

type CleanupStatus = PipelineSnapshot["cleanup"]["resources"][number]["cleanupStatus"];
const CLEANUP_STATUSES = new Set([
  "observed",
  "pending",
  "started",
  "in_progress",
  "completed",
  "failed",
  "skipped",
]);

function cleanupStatusOf(data: Record<string, unknown>): CleanupStatus {
  const status = data.cleanupStatus;
  return typeof status === "string" && CLEANUP_STATUSES.has(status) ? (status as CleanupStatus) : "pending";
}

/** Folds one envelope into the snapshot (in place). */
export function reduce(snap: PipelineSnapshot, env: PipelineEnvelope): void {
  snap.lastSequence = Math.max(snap.lastSequence, env.sequence);
  snap.updatedAt = env.createdAt;
  const data = env.data;
  const stepId = str(env.step?.id);
  const step = snap.steps.find((s) => s.id === stepId);
  switch (env.eventType) {
    case "pipeline_started": {
      const names = Array.isArray(data.stepNames) ? data.stepNames.map(String) : [];
      Object.assign(snap, {
        pipelineRunId: env.pipelineRunId,
        pipelineName: env.pipelineName,
        contextId: env.contextId,
        taskId: env.taskId,
        iacCodeSessionId: env.iacCodeSessionId,
        runNumber: snap.runNumber + 1,
        firstSequence: env.sequence,
        status: "running",
        currentStepId: null,
        steps: names.map((id, index) => ({ id, index, status: "pending", attempt: 0 })),
        candidates: [],
        pendingInput: null,
        staleFields: [],
        outcome: null,
        handoff: null,
      } satisfies Partial<PipelineSnapshot>);
      return;
    }
    case "pipeline_resumed":
      snap.taskId = env.taskId || snap.taskId;
      return;
    case "step_started":
      if (step) Object.assign(step, { status: "running", attempt: num(env.step?.attempt) });
      snap.currentStepId = stepId;
      snap.status = "running";
      return;
    case "step_completed":
      if (step) step.status = "completed";
      return;
    case "step_failed":
      if (step) step.status = "failed";
      return;
    case "candidate_started": {
      const names = Array.isArray(env.candidate?.steps) ? env.candidate.steps.map(String) : [];
      const entry: SnapshotCandidate = {
        id: str(env.candidate?.id),
        index: num(data.candidateIndex),
        name: str(data.candidateName),
        status: "running",
        steps: names.map((id) => ({ id, status: "pending", attempt: 0 })),
      };
      snap.candidates = [...snap.candidates.filter((c) => c.id !== entry.id), entry];
      return;
    }
    case "candidate_step_started":
    case "candidate_step_completed":
    case "candidate_step_failed": {
      const candidate = candidateOf(snap, env);
      const sub = candidate?.steps.find((s) => s.id === str(env.candidateStep?.id));
      if (!sub) return;
      sub.attempt = num(env.candidateStep?.attempt);
      sub.status = env.eventType.endsWith("started")
        ? "running"
        : env.eventType.endsWith("completed")
          ? "completed"
          : "failed";
      return;
    }
    case "candidate_completed":
    case "candidate_failed": {
      const candidate = candidateOf(snap, env);
      if (candidate) candidate.status = env.eventType === "candidate_completed" ? "completed" : "failed";
      return;
    }
    case "input_required":
    case "permission_requested":
      snap.status = "waiting_input";
      snap.pendingInput = { eventType: env.eventType, ...(env.input ?? data) };
      if (step && env.eventType === "input_required") step.status = "waiting_input";
      return;
    case "input_received":
    case "permission_resolved":
      snap.status = "running";
      snap.pendingInput = null;
      if (step && step.status === "waiting_input") step.status = "running";
      return;
    case "rollback_completed": {
      const stale = Array.isArray(data.staleFields) ? data.staleFields.map(String) : [];
      snap.staleFields = [...new Set([...snap.staleFields, ...stale])].sort();
      const to = snap.steps.findIndex((s) => s.id === str(data.toStep));
      for (const s of snap.steps) if (to >= 0 && s.index > to && s.status !== "pending") s.status = "stale";
      return;
    }
    case "cleanup_started":
    case "cleanup_progress":
    case "cleanup_completed":
    case "cleanup_failed": {
      const id = str(data.resourceId);
      if (!id) return;
      const others = snap.cleanup.resources.filter((r) => r.resourceId !== id);
      snap.cleanup.resources = [...others, { ...data, resourceId: id, cleanupStatus: cleanupStatusOf(data) }];
      return;
    }
    case "pipeline_completed":
      snap.status = data.earlyExit === true ? "early_exit" : data.failed === true ? "failed" : "completed";
      snap.outcome = snap.status;
      snap.pendingInput = null;
      return;
    case "pipeline_canceled":
      snap.status = "canceled";
      snap.outcome = "canceled";
      snap.pendingInput = null;
      return;
    case "pipeline_handoff_ready":
      snap.handoff = { ...data };
      return;
    default:
      return;
  }
}
