// The cleanup ledger (the pipeline's ledger document): the stacks (and stack
// groups) that steps with tracks_stacks created, and for those marked for
// cleanup (a rollback over the step, or a run that ended without the
// deployment) their cleanup status. A ledger that cannot be read or saved
// does not stop the run: the record is lost, and the run says so with a
// pipeline_warning (reason cleanup_tracking_unavailable) so the user knows
// that what was created may have to be deleted by hand. An unreadable
// document is kept aside (ledger-unreadable) rather than overwritten unseen.
import { errorMessage } from "../errors.js";
import type { CleanupSummary } from "../seam.js";
import type { EnvelopeSpec } from "./emitter.js";
import type { PipelineFiles } from "./files.js";

export type CleanupStatus =
  "observed" | "pending" | "started" | "in_progress" | "completed" | "failed" | "skipped";

export interface LedgerEntry {
  provider: "ros";
  resourceType: "ALIYUN::ROS::Stack" | "ALIYUN::ROS::StackGroup";
  /** The stack id, or the stack group's id. */
  resourceId: string;
  /** The stack's, or the stack group's name (stack groups are deleted by name). */
  resourceName?: string;
  regionId?: string;
  /** Stack groups: the regions and the account of their stack instances. */
  regionIds?: string[];
  accountId?: string;
  sourceStepId: string;
  /** The pipeline run (runNumber) that created it. */
  run: number;
  status?: string;
  cleanupStatus: CleanupStatus;
  lastError?: string;
}

/** Why a record was lost, for the pipeline_warning that says so. */
export interface LedgerWarning {
  operation: "load" | "observe" | "mark_pending" | "update";
  resourceId?: string;
  resourceCount?: number;
  error: string;
}

const STACK_TYPES = new Set(["ALIYUN::ROS::Stack", "ALIYUN::ROS::StackGroup"]);

function isEntry(value: unknown): value is LedgerEntry {
  const e = value as Partial<LedgerEntry> | undefined;
  return (
    !!e &&
    typeof e === "object" &&
    typeof e.resourceId === "string" &&
    typeof e.sourceStepId === "string" &&
    typeof e.run === "number" &&
    typeof e.cleanupStatus === "string" &&
    STACK_TYPES.has(String(e.resourceType))
  );
}

export class CleanupLedger {
  private readonly warnings: LedgerWarning[] = [];

  private constructor(
    private readonly files: PipelineFiles,
    private entries: LedgerEntry[],
  ) {}

  static async open(files: PipelineFiles): Promise<CleanupLedger> {
    let raw: string | undefined;
    let failure: string | undefined;
    try {
      raw = await files.loadLedgerText();
    } catch (error) {
      failure = errorMessage(error);
    }
    let entries: LedgerEntry[] = [];
    if (raw !== undefined) {
      try {
        const data = JSON.parse(raw) as { resources?: unknown };
        if (!Array.isArray(data.resources) || !data.resources.every(isEntry))
          throw new Error("the ledger document does not hold a list of resources");
        entries = data.resources;
      } catch (error) {
        failure = errorMessage(error);
        files.keepUnreadableLedger(raw);
      }
    }
    const ledger = new CleanupLedger(files, entries);
    if (failure !== undefined) ledger.warnings.push({ operation: "load", error: failure });
    return ledger;
  }

  /** What a failed save was already said for (a resource, or an operation on several). */
  private readonly warned = new Set<string>();

  /** Saves the ledger; a failure becomes a warning, once per resource (the run goes on without the record). */
  private async save(warning: Omit<LedgerWarning, "error">): Promise<boolean> {
    try {
      await this.files.saveLedger({ resources: this.entries });
      return true;
    } catch (error) {
      const key = warning.resourceId ?? warning.operation;
      if (!this.warned.has(key)) this.warnings.push({ ...warning, error: errorMessage(error) });
      this.warned.add(key);
      return false;
    }
  }

  /** The warnings since the last call, as pipeline_warning envelopes. */
  takeWarnings(): EnvelopeSpec[] {
    return this.warnings.splice(0).map((w) => ({
      eventType: "pipeline_warning",
      scope: "pipeline" as const,
      data: {
        reason: "cleanup_tracking_unavailable",
        operation: w.operation,
        ...(w.resourceId !== undefined ? { resourceId: w.resourceId } : {}),
        ...(w.resourceCount !== undefined ? { resourceCount: w.resourceCount } : {}),
        message:
          w.operation === "load"
            ? "The cleanup ledger could not be read: stacks that earlier pipeline runs created are no longer tracked and will not be deleted automatically. Check the ROS console."
            : "The cleanup ledger could not be saved: this stack may not be deleted automatically. Check the ROS console.",
      },
    }));
  }

  /** Records a stack (or stack group) a step created (kept until cleaned up). */
  async observe(entry: Omit<LedgerEntry, "cleanupStatus" | "provider">): Promise<void> {
    const existing = this.entries.find((e) => e.resourceId === entry.resourceId);
    if (existing) Object.assign(existing, entry);
    else this.entries.push({ provider: "ros", cleanupStatus: "observed", ...entry });
    await this.save({ operation: "observe", resourceId: entry.resourceId });
  }

  /** Marks the observed stacks of a step (in a run) for cleanup; returns them. */
  async markPending(sourceStepId: string, run: number): Promise<LedgerEntry[]> {
    const marked = this.entries.filter(
      (e) => e.sourceStepId === sourceStepId && e.run === run && e.cleanupStatus === "observed",
    );
    for (const e of marked) e.cleanupStatus = "pending";
    if (marked.length) await this.save({ operation: "mark_pending", resourceCount: marked.length });
    return marked;
  }

  /** Stacks waiting for cleanup (pending, or a cleanup that did not finish). */
  pending(): LedgerEntry[] {
    return this.entries.filter((e) =>
      ["pending", "started", "in_progress", "failed"].includes(e.cleanupStatus),
    );
  }

  async update(entry: LedgerEntry, changes: Partial<LedgerEntry>): Promise<void> {
    Object.assign(entry, changes);
    await this.save({ operation: "update", resourceId: entry.resourceId });
  }
}

/** What clients see of a ledger entry (cleanup_* data). */
export function cleanupData(
  entry: LedgerEntry,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    provider: entry.provider,
    resourceType: entry.resourceType,
    resourceId: entry.resourceId,
    ...(entry.resourceName ? { resourceName: entry.resourceName } : {}),
    ...(entry.regionId ? { regionId: entry.regionId } : {}),
    ...(entry.regionIds ? { regionIds: entry.regionIds } : {}),
    sourceStepId: entry.sourceStepId,
    cleanupStatus: entry.cleanupStatus,
    ...(entry.lastError ? { lastError: entry.lastError } : {}),
    ...extra,
  };
}

export function cleanupSummary(
  entries: readonly LedgerEntry[],
  status: CleanupSummary["status"],
): CleanupSummary {
  return {
    requested: true,
    status,
    resourceCount: entries.length,
    resources: entries.slice(0, 24).map((e) => cleanupData(e)),
  };
}
