// A deployment to several regions at once: a ROS stack group (one template)
// and its stack instances (one stack per region, in the caller's account),
// created by one operation the tool polls until it ends. Progress goes out as
// phases ("creating the stack group") and, at every poll, the instances'
// statuses (the pipeline's stack_instances_progress). Deletion (cleanup)
// deletes the instances, then the group.
import { sleep } from "../abort.js";
import type { CloudContext } from "../cloud/context.js";
import { RosApiError } from "../cloud/ros-client.js";
import { ToolError } from "../errors.js";
import { guard, parameterList } from "./ros.js";
import type { ToolContext, ToolResult } from "./types.js";

/** Permission model roles ROS uses for self-managed stack groups (their documented default names). */
const ADMINISTRATION_ROLE = "AliyunROSStackGroupAdministrationRole";
const EXECUTION_ROLE = "AliyunROSStackGroupExecutionRole";

export interface InstanceProgress {
  accountId: string;
  regionId: string;
  status: string;
  statusReason?: string;
  stackId?: string;
}

const text = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);

/** The account stack instances go to: the caller's own (STS GetCallerIdentity). */
async function callerAccount(cloud: CloudContext, ctx: ToolContext, regionId: string): Promise<string> {
  if (!cloud.api)
    throw new ToolError("A multi-region deployment needs the account id, which STS could not give.");
  const answer = await guard("GetCallerIdentity", ctx, () =>
    (cloud.api as NonNullable<CloudContext["api"]>).call(
      { product: "sts", action: "GetCallerIdentity", params: {}, regionId },
      ctx.signal,
    ),
  );
  const account = text(answer.AccountId);
  if (!account) throw new ToolError("STS GetCallerIdentity returned no AccountId.");
  return account;
}

/**
 * Polls an operation until it ends, publishing the instances' progress;
 * returns its final status and the per-region results.
 */
async function pollOperation(
  cloud: CloudContext,
  ctx: ToolContext,
  args: { stackGroupName: string; operationId: string; regionId: string },
): Promise<{ status: string; instances: InstanceProgress[] }> {
  const started = Date.now();
  for (;;) {
    const op = await guard("GetStackGroupOperation", ctx, () =>
      cloud.ros.call(
        "GetStackGroupOperation",
        { OperationId: args.operationId, RegionId: args.regionId },
        ctx.signal,
      ),
    );
    const operation = (op.StackGroupOperation ?? {}) as Record<string, unknown>;
    const status = text(operation.Status) ?? "UNKNOWN";
    const listed = await guard("ListStackGroupOperationResults", ctx, () =>
      cloud.ros.call(
        "ListStackGroupOperationResults",
        { OperationId: args.operationId, RegionId: args.regionId },
        ctx.signal,
      ),
    );
    const raw = Array.isArray(listed.StackGroupOperationResults)
      ? (listed.StackGroupOperationResults as Record<string, unknown>[])
      : [];
    const instances: InstanceProgress[] = raw.map((r) => ({
      accountId: text(r.AccountId) ?? "",
      regionId: text(r.RegionId) ?? "",
      status: text(r.Status) ?? "UNKNOWN",
      ...(text(r.StatusReason) ? { statusReason: text(r.StatusReason) } : {}),
    }));
    const finished = instances.filter((i) => i.status !== "RUNNING" && i.status !== "PENDING").length;
    const running = status === "RUNNING" || status === "PENDING";
    ctx.progress({
      stackGroupName: args.stackGroupName,
      operationId: args.operationId,
      status,
      progressPercentage: running
        ? instances.length
          ? Math.floor((finished / instances.length) * 100)
          : 0
        : 100,
      instances,
      elapsedSeconds: Math.round((Date.now() - started) / 1000),
      regionId: args.regionId,
    });
    if (!running) return { status, instances };
    if (Date.now() - started > cloud.maxPollMs)
      throw new ToolError(`Stack group operation ${args.operationId} is still ${status}; stopped waiting.`);
    await sleep(cloud.pollIntervalMs, ctx.signal);
  }
}

/** Creates a stack group and its instances in `regionIds`, and waits for the operation. */
export async function deployStackGroup(
  cloud: CloudContext,
  ctx: ToolContext,
  args: {
    stackGroupName: string;
    body: string;
    parameters?: Record<string, unknown>;
    regionId: string;
    regionIds: string[];
  },
): Promise<ToolResult> {
  const { stackGroupName, regionId, regionIds } = args;
  const accountId = await callerAccount(cloud, ctx, regionId);
  ctx.progress({
    phase: "create_stack_group",
    stackGroupName,
    message: `Creating the stack group ${stackGroupName} in ${regionId}.`,
  });
  const created = await guard("CreateStackGroup", ctx, () =>
    cloud.ros.call(
      "CreateStackGroup",
      {
        StackGroupName: stackGroupName,
        TemplateBody: args.body,
        RegionId: regionId,
        Parameters: parameterList(args.parameters),
        PermissionModel: "SELF_MANAGED",
        AdministrationRoleName: ADMINISTRATION_ROLE,
        ExecutionRoleName: EXECUTION_ROLE,
      },
      ctx.signal,
    ),
  );
  const stackGroupId = text(created.StackGroupId) ?? stackGroupName;
  ctx.progress({
    phase: "create_stack_instances",
    stackGroupName,
    message: `Creating stack instances in ${regionIds.join(", ")} (account ${accountId}).`,
  });
  const started = await guard("CreateStackInstances", ctx, () =>
    cloud.ros.call(
      "CreateStackInstances",
      {
        StackGroupName: stackGroupName,
        RegionId: regionId,
        AccountIds: JSON.stringify([accountId]),
        RegionIds: JSON.stringify(regionIds),
      },
      ctx.signal,
    ),
  );
  const operationId = text(started.OperationId);
  if (!operationId) throw new ToolError("ROS CreateStackInstances returned no OperationId.");
  const { status: operationStatus, instances } = await pollOperation(cloud, ctx, {
    stackGroupName,
    operationId,
    regionId,
  });
  const listed = await guard("ListStackInstances", ctx, () =>
    cloud.ros.call("ListStackInstances", { StackGroupName: stackGroupName, RegionId: regionId }, ctx.signal),
  );
  const stacks = Array.isArray(listed.StackInstances)
    ? (listed.StackInstances as Record<string, unknown>[])
    : [];
  for (const instance of instances) {
    const stack = stacks.find((s) => s.RegionId === instance.regionId && s.AccountId === instance.accountId);
    if (text(stack?.StackId)) instance.stackId = text(stack?.StackId);
  }
  const ok = operationStatus === "SUCCEEDED";
  const status = ok ? "CREATE_COMPLETE" : "CREATE_FAILED";
  const data = {
    stackId: stackGroupId,
    stackName: stackGroupName,
    stackGroupName,
    stackGroupId,
    operationId,
    operationStatus,
    regionId,
    regionIds,
    accountId,
    status,
    instances,
  };
  return {
    content:
      `Stack ${stackGroupId} (stack group ${stackGroupName}) is ${status}: operation ${operationId} ${operationStatus}, ` +
      `stack instances in ${regionIds.join(", ")}.\n${JSON.stringify({ instances })}`,
    isError: !ok,
    data,
  };
}

/** Deletes a stack group's instances, then the group; a group that no longer exists is deleted. */
export async function deleteStackGroup(
  cloud: CloudContext,
  ctx: ToolContext,
  args: { stackGroupName: string; regionId: string; regionIds: string[]; accountId: string },
): Promise<ToolResult> {
  const { stackGroupName, regionId } = args;
  const notFound = (error: unknown): boolean =>
    error instanceof RosApiError && error.code.startsWith("StackGroupNotFound");
  let operationId: string | undefined;
  try {
    const answer = await cloud.ros.call(
      "DeleteStackInstances",
      {
        StackGroupName: stackGroupName,
        RegionId: regionId,
        AccountIds: JSON.stringify([args.accountId]),
        RegionIds: JSON.stringify(args.regionIds),
        RetainStacks: false,
      },
      ctx.signal,
    );
    operationId = text(answer.OperationId);
  } catch (error) {
    if (notFound(error))
      return {
        content: `Stack group ${stackGroupName} no longer exists.`,
        data: { status: "DELETE_COMPLETE" },
      };
    return guard("DeleteStackInstances", ctx, () => Promise.reject(error as Error));
  }
  if (!operationId) throw new ToolError("ROS DeleteStackInstances returned no OperationId.");
  const { status } = await pollOperation(cloud, ctx, { stackGroupName, operationId, regionId });
  if (status !== "SUCCEEDED") {
    return {
      content: `Deleting the stack instances of ${stackGroupName} ended ${status}.`,
      isError: true,
      data: { status: "DELETE_FAILED", operationId, operationStatus: status },
    };
  }
  await guard("DeleteStackGroup", ctx, () =>
    cloud.ros.call("DeleteStackGroup", { StackGroupName: stackGroupName, RegionId: regionId }, ctx.signal),
  );
  return {
    content: `Stack group ${stackGroupName} and its stack instances are deleted.`,
    data: { status: "DELETE_COMPLETE", operationId },
  };
}
