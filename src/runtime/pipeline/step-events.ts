// What a step's intermediate events become as pipeline envelopes (the §4.5
// catalogue): a tool's progress is an MCP notification (tool_progress), a
// stack's (stack_progress), a stack group operation's (stack_instances_progress),
// a diagram or a candidate's detail the presentation tools show
// (diagram_shown, candidate_detail_shown), or any other progress
// (tool_progress); compaction of the step's transcript is
// context_compaction_started / context_compacted / context_compaction_failed.
import type { RuntimeEvent } from "../seam.js";

type ToolProgress = Extract<RuntimeEvent, { type: "tool_progress" }>;
type Compaction = Extract<RuntimeEvent, { type: "compaction" }>;

/** eventType and data of a tool's progress. */
export function progressEvent(ev: ToolProgress): { eventType: string; data: Record<string, unknown> } {
  const p = ev.progress;
  if (ev.mcp) {
    const { serverName, toolName, progress, total, message } = ev.mcp;
    return {
      eventType: "tool_progress",
      data: {
        toolName: ev.name,
        toolUseId: ev.toolUseId,
        serverName,
        mcpToolName: toolName,
        mcpProgress: p,
        progress,
        ...(total !== undefined ? { total } : {}),
        ...(message !== undefined ? { message } : {}),
      },
    };
  }
  if (p.kind === "diagram") {
    const { kind: _kind, ...diagram } = p;
    return { eventType: "diagram_shown", data: { toolUseId: ev.toolUseId, ...diagram } };
  }
  if (p.kind === "candidate_detail") {
    const { kind: _kind, ...detail } = p;
    return { eventType: "candidate_detail_shown", data: { toolUseId: ev.toolUseId, ...detail } };
  }
  if (typeof p.stackId === "string") {
    return {
      eventType: "stack_progress",
      data: {
        toolUseId: ev.toolUseId,
        stackId: p.stackId,
        stackName: p.stackName,
        status: p.status,
        progressPercentage: p.progressPercentage,
        resources: p.resources,
        elapsedSeconds: p.elapsedSeconds,
      },
    };
  }
  if (
    typeof p.stackGroupName === "string" &&
    typeof p.operationId === "string" &&
    Array.isArray(p.instances)
  ) {
    return {
      eventType: "stack_instances_progress",
      data: {
        toolUseId: ev.toolUseId,
        stackGroupName: p.stackGroupName,
        operationId: p.operationId,
        status: p.status,
        progressPercentage: p.progressPercentage,
        instances: p.instances,
        elapsedSeconds: p.elapsedSeconds,
      },
    };
  }
  return {
    eventType: "tool_progress",
    data: {
      toolName: ev.name,
      toolUseId: ev.toolUseId,
      progress: p,
      ...(typeof p.message === "string" ? { message: p.message } : {}),
    },
  };
}

const COMPACTION_TYPES = {
  started: "context_compaction_started",
  finished: "context_compacted",
  failed: "context_compaction_failed",
} as const;

/** eventType and data of a compaction of the step's transcript. */
export function compactionEvent(ev: Compaction): { eventType: string; data: Record<string, unknown> } {
  return {
    eventType: COMPACTION_TYPES[ev.phase],
    data: {
      ...(ev.summary !== undefined ? { summary: ev.summary } : {}),
      ...(ev.originalTokens !== undefined ? { originalTokens: ev.originalTokens } : {}),
      ...(ev.compactedTokens !== undefined ? { compactedTokens: ev.compactedTokens } : {}),
    },
  };
}
