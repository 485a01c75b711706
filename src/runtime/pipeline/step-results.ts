// What a step reads from its tool calls' results: the stack (or stack group)
// a ROS call created (for the cleanup ledger and stack_current_changed), and a
// failed call's result as one line (the error of a step that reached its
// max_tool_failures).
import type { RuntimeEvent } from "../seam.js";

export interface StackResult {
  stackId: string;
  stackName?: string;
  regionId?: string;
  status?: string;
  created: boolean;
  /** A stack group deployment (stackId is the group's id): its name, regions and account. */
  group?: { name: string; regionIds: string[]; accountId: string };
}

/** The stack a ROS stack call reports in its result, if any (created: the call made it). */
export function stackOf(
  ev: Extract<RuntimeEvent, { type: "tool_result" }>,
  input: Record<string, unknown>,
): StackResult | undefined {
  if (ev.name !== "ros_deploy" && ev.name !== "ros_stack") return undefined;
  const r = ev.result as Record<string, unknown> | undefined;
  if (!r || typeof r !== "object" || typeof r.stackId !== "string") return undefined;
  const created = input.action === "create";
  const group =
    typeof r.stackGroupName === "string" && Array.isArray(r.regionIds)
      ? {
          name: r.stackGroupName,
          regionIds: r.regionIds.map(String),
          accountId: typeof r.accountId === "string" ? r.accountId : "",
        }
      : undefined;
  return {
    ...(group ? { group } : {}),
    stackId: r.stackId,
    ...(typeof r.stackName === "string" ? { stackName: r.stackName } : {}),
    ...(typeof r.regionId === "string" ? { regionId: r.regionId } : {}),
    ...(typeof r.status === "string" ? { status: r.status } : {}),
    created,
  };
}

/** A failed call's result as a line: a validation report's errors, or its text. */
export function failureText(result: unknown): string {
  if (typeof result === "string") return result;
  const findings = (result as { findings?: unknown } | undefined)?.findings;
  if (Array.isArray(findings)) {
    const errors = findings
      .filter((f: { severity?: unknown }) => f.severity === "error")
      .map((f: { path?: unknown; message?: unknown }) => `${String(f.path)}: ${String(f.message)}`);
    if (errors.length) return errors.join("; ");
  }
  return JSON.stringify(result);
}
