// Cleanup: deletes exactly the ledger's stacks (and stack groups), nothing
// else, one after the other, and reports cleanup_started / _progress /
// _completed / _failed for each. A deletion that fails keeps the entry
// pending (with lastError) for a later cleanupOnly request.
import type { Language } from "../../i18n/index.js";
import type { CloudContext } from "../cloud/context.js";
import { errorMessage } from "../errors.js";
import { Channel } from "../loop/channel.js";
import type { RuntimeEvent } from "../seam.js";
import { rosStackTool } from "../tools/ros-stack.js";
import { deleteStackGroup } from "../tools/ros-stack-group.js";
import type { ToolContext, ToolResult } from "../tools/types.js";
import type { Workspace } from "../tools/workspace.js";
import type { PipelineEmitter } from "./emitter.js";
import { cleanupData, type CleanupLedger, type LedgerEntry } from "./ledger.js";

export { CleanupLedger, cleanupData, cleanupSummary, type LedgerEntry } from "./ledger.js";

/** Deletes one entry's resource (a stack, or a stack group with its instances). */
function deletion(entry: LedgerEntry, cloud: CloudContext, ctx: ToolContext): Promise<ToolResult> {
  if (entry.resourceType === "ALIYUN::ROS::StackGroup") {
    return deleteStackGroup(cloud, ctx, {
      stackGroupName: entry.resourceName ?? entry.resourceId,
      regionId: entry.regionId ?? cloud.credentials.regionId,
      regionIds: entry.regionIds ?? [],
      accountId: entry.accountId ?? "",
    });
  }
  return rosStackTool.run(
    {
      action: "delete",
      stack_id: entry.resourceId,
      ...(entry.regionId ? { region_id: entry.regionId } : {}),
    },
    ctx,
  );
}

/**
 * Deletes the given entries one after the other (DeleteStack, then GetStack
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
    yield await emitter.event(
      {
        eventType: "cleanup_started",
        scope: "cleanup",
        data: cleanupData(entry, { status: "started", resourceCount: args.entries.length }),
      },
      ...ledger.takeWarnings(),
    );
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
    const running = deletion(entry, args.cloud, {
      workspace: args.workspace,
      signal: args.signal,
      toolUseId: `cleanup-${entry.resourceId}`,
      language: args.language,
      progress: (p) => progress.push(p),
      askUser: () => Promise.reject(new Error("cleanup asks nothing")),
      cloud: args.cloud,
    }).catch((error: unknown): ToolResult => ({ isError: true, content: errorMessage(error) }));
    for await (const p of progress.drain(running)) {
      if (typeof p.status !== "string") continue;
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
    const result = await running;
    if (result.isError) {
      await ledger.update(entry, { cleanupStatus: "failed", lastError: result.content.slice(0, 500) });
      failed.push(entry);
      yield await emitter.event(
        { eventType: "cleanup_failed", scope: "cleanup", data: cleanupData(entry, { status: "failed" }) },
        ...ledger.takeWarnings(),
      );
    } else {
      delete entry.lastError;
      await ledger.update(entry, { cleanupStatus: "completed", status: "DELETE_COMPLETE" });
      yield await emitter.event(
        {
          eventType: "cleanup_completed",
          scope: "cleanup",
          data: cleanupData(entry, { status: "completed", stackStatus: "DELETE_COMPLETE" }),
        },
        ...ledger.takeWarnings(),
      );
    }
  }
  await emitter.checkpoint();
  return failed;
}
