// The cleanup ledger (the pipeline's ledger document): the stacks that steps with
// tracks_stacks created, and for those marked for cleanup (a rollback over
// the step, or a run that ended without the deployment) their cleanup status.
// Cleanup deletes exactly the ledger's stacks, nothing else, and reports
// cleanup_started / _progress / _completed / _failed for each.
import type { Language } from "../../i18n/index.js";
import type { CloudContext } from "../cloud/context.js";
import { errorMessage } from "../errors.js";
import type { CleanupSummary, RuntimeEvent } from "../seam.js";
import { Channel } from "../loop/channel.js";
import { rosStackTool } from "../tools/ros.js";
import type { Workspace } from "../tools/workspace.js";
import type { PipelineEmitter } from "./emitter.js";
import type { PipelineFiles } from "./files.js";

export type CleanupStatus =
  "observed" | "pending" | "started" | "in_progress" | "completed" | "failed" | "skipped";

export interface LedgerEntry {
  provider: "ros";
  resourceType: "ALIYUN::ROS::Stack";
  resourceId: string;
  resourceName?: string;
  regionId?: string;
  sourceStepId: string;
  /** The pipeline run (runNumber) that created it. */
  run: number;
  status?: string;
  cleanupStatus: CleanupStatus;
  lastError?: string;
}

export class CleanupLedger {
  private constructor(
    private readonly files: PipelineFiles,
    private entries: LedgerEntry[],
  ) {}

  static async open(files: PipelineFiles): Promise<CleanupLedger> {
    const data = (await files.loadLedger()) as { resources?: LedgerEntry[] } | undefined;
    return new CleanupLedger(files, Array.isArray(data?.resources) ? data.resources : []);
  }

  private save(): Promise<void> {
    return this.files.saveLedger({ resources: this.entries });
  }

  /** Records a stack a step created (kept until cleaned up). */
  async observe(entry: Omit<LedgerEntry, "cleanupStatus" | "provider" | "resourceType">): Promise<void> {
    const existing = this.entries.find((e) => e.resourceId === entry.resourceId);
    if (existing) Object.assign(existing, entry);
    else
      this.entries.push({
        provider: "ros",
        resourceType: "ALIYUN::ROS::Stack",
        cleanupStatus: "observed",
        ...entry,
      });
    await this.save();
  }

  /** Marks the observed stacks of a step (in a run) for cleanup; returns them. */
  async markPending(sourceStepId: string, run: number): Promise<LedgerEntry[]> {
    const marked = this.entries.filter(
      (e) => e.sourceStepId === sourceStepId && e.run === run && e.cleanupStatus === "observed",
    );
    for (const e of marked) e.cleanupStatus = "pending";
    if (marked.length) await this.save();
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
    await this.save();
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

/**
 * Deletes the given stacks one after the other (DeleteStack, then GetStack
 * until DELETE_COMPLETE); returns the entries that could not be deleted.
 */
export async function* runCleanup(args: {
  ledger: CleanupLedger;
  entries: LedgerEntry[];
  cloud: CloudContext | undefined;
  workspace: Workspace;
  emitter: PipelineEmitter;
  language: Language;
  signal: AbortSignal;
}): AsyncGenerator<RuntimeEvent, LedgerEntry[]> {
  const { ledger, emitter } = args;
  const failed: LedgerEntry[] = [];
  for (const entry of args.entries) {
    if (args.signal.aborted) break;
    await ledger.update(entry, { cleanupStatus: "started" });
    yield await emitter.event({
      eventType: "cleanup_started",
      scope: "cleanup",
      data: cleanupData(entry, { status: "started", resourceCount: args.entries.length }),
    });
    if (!args.cloud) {
      await ledger.update(entry, {
        cleanupStatus: "failed",
        lastError: "No Alibaba Cloud credentials are configured.",
      });
      failed.push(entry);
      yield await emitter.event({
        eventType: "cleanup_failed",
        scope: "cleanup",
        data: cleanupData(entry, { status: "failed" }),
      });
      continue;
    }
    // Progress is published while the stack is being deleted.
    const progress = new Channel<Record<string, unknown>>();
    const deletion = rosStackTool
      .run(
        {
          action: "delete",
          stack_id: entry.resourceId,
          ...(entry.regionId ? { region_id: entry.regionId } : {}),
        },
        {
          workspace: args.workspace,
          signal: args.signal,
          toolUseId: `cleanup-${entry.resourceId}`,
          language: args.language,
          progress: (p) => progress.push(p),
          askUser: () => Promise.reject(new Error("cleanup asks nothing")),
          cloud: args.cloud,
        },
      )
      .catch((error: unknown) => ({ isError: true, content: errorMessage(error) }));
    for await (const p of progress.drain(deletion)) {
      yield await emitter.event({
        eventType: "cleanup_progress",
        scope: "cleanup",
        data: cleanupData(entry, {
          cleanupStatus: "in_progress",
          progressStatus: p.status,
          progressPercentage: p.progressPercentage,
          stackStatus: p.status,
        }),
      });
    }
    const result = await deletion;
    if (result.isError) {
      await ledger.update(entry, { cleanupStatus: "failed", lastError: result.content.slice(0, 500) });
      failed.push(entry);
      yield await emitter.event({
        eventType: "cleanup_failed",
        scope: "cleanup",
        data: cleanupData(entry, { status: "failed" }),
      });
    } else {
      await ledger.update(entry, { cleanupStatus: "completed", status: "DELETE_COMPLETE" });
      delete entry.lastError;
      yield await emitter.event({
        eventType: "cleanup_completed",
        scope: "cleanup",
        data: cleanupData(entry, { status: "completed", stackStatus: "DELETE_COMPLETE" }),
      });
    }
  }
  await emitter.checkpoint();
  return failed;
}
