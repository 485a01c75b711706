// The stack groups of demo mode's simulated ROS endpoint: a stack group
// holds one template, and its stack instances deploy it to several regions
// of one account through operations (CreateStackInstances,
// DeleteStackInstances) that a client polls with GetStackGroupOperation and
// ListStackGroupOperationResults, as with ROS. Instances finish one region
// after the other, a fixed number of polls each, so a multi-region
// deployment takes a few seconds, always the same.
import { randomUUID } from "node:crypto";
import { RosApiError } from "./ros-client.js";

/** The account every simulated stack instance belongs to (what GetCallerIdentity answers). */
export const SIMULATED_ACCOUNT_ID = "1000000000000001";

/** GetStackGroupOperation polls one region's instance takes. */
const POLLS_PER_INSTANCE = 3;

interface Group {
  id: string;
  name: string;
  regionId: string;
  /** Region -> the stack of the instance there. */
  instances: Map<string, string>;
}

interface Operation {
  id: string;
  group: Group;
  action: "CREATE" | "DELETE";
  regions: string[];
  polls: number;
}

/** A list parameter as ROS takes it: a JSON array text, or the array itself. */
function listParam(value: unknown, name: string): string[] {
  let list: unknown = value;
  if (typeof value === "string") {
    try {
      list = JSON.parse(value);
    } catch {
      list = undefined;
    }
  }
  if (!Array.isArray(list) || list.length === 0 || !list.every((v) => typeof v === "string" && v))
    throw new RosApiError("InvalidParameter", `${name} must be a non-empty JSON array of strings.`, 400);
  return list as string[];
}

export class SimulatedStackGroups {
  private readonly groups = new Map<string, Group>();
  private readonly operations = new Map<string, Operation>();

  /** The answer to a stack group action, or undefined when the action is not one. */
  call(
    action: string,
    params: Record<string, unknown>,
    regionId: string,
  ): Record<string, unknown> | undefined {
    switch (action) {
      case "CreateStackGroup": {
        const name = typeof params.StackGroupName === "string" ? params.StackGroupName : "";
        if (!name) throw new RosApiError("MissingParameter", "StackGroupName is required.", 400);
        // ROS refuses a second group of a name; the simulation replaces it instead (as it lets
        // stacks share a name), so a demo server plays [demo:slow-deploy] as often as asked.
        const group: Group = { id: `sim-group-${randomUUID()}`, name, regionId, instances: new Map() };
        this.groups.set(name, group);
        return { StackGroupId: group.id };
      }
      case "GetStackGroup": {
        const group = this.group(params.StackGroupName);
        return { StackGroup: { StackGroupId: group.id, StackGroupName: group.name, Status: "ACTIVE" } };
      }
      case "CreateStackInstances":
      case "DeleteStackInstances": {
        const group = this.group(params.StackGroupName);
        listParam(params.AccountIds, "AccountIds");
        const regions = listParam(params.RegionIds, "RegionIds");
        const operation: Operation = {
          id: `sim-op-${randomUUID()}`,
          group,
          action: action === "CreateStackInstances" ? "CREATE" : "DELETE",
          regions,
          polls: 0,
        };
        this.operations.set(operation.id, operation);
        return { OperationId: operation.id };
      }
      case "GetStackGroupOperation": {
        const operation = this.operation(params.OperationId);
        operation.polls++;
        const done = this.settle(operation);
        return {
          StackGroupOperation: {
            OperationId: operation.id,
            Action: operation.action,
            StackGroupName: operation.group.name,
            StackGroupId: operation.group.id,
            Status: done === operation.regions.length ? "SUCCEEDED" : "RUNNING",
          },
        };
      }
      case "ListStackGroupOperationResults": {
        const operation = this.operation(params.OperationId);
        const done = this.settle(operation);
        return {
          StackGroupOperationResults: operation.regions.map((region, i) => ({
            AccountId: SIMULATED_ACCOUNT_ID,
            RegionId: region,
            Status: i < done ? "SUCCEEDED" : "RUNNING",
            StatusReason:
              i < done
                ? `Stack instance ${operation.action.toLowerCase()}d (simulated)`
                : "In progress (simulated)",
          })),
        };
      }
      case "ListStackInstances": {
        const group = this.group(params.StackGroupName);
        return {
          StackInstances: [...group.instances].map(([region, stackId]) => ({
            AccountId: SIMULATED_ACCOUNT_ID,
            RegionId: region,
            StackId: stackId,
            StackGroupId: group.id,
            StackGroupName: group.name,
            Status: "CURRENT",
          })),
        };
      }
      case "DeleteStackGroup": {
        const group = this.group(params.StackGroupName);
        if (group.instances.size > 0)
          throw new RosApiError(
            "StackGroupNotEmpty",
            `The stack group ${group.name} still has stack instances; delete them first.`,
            409,
          );
        this.groups.delete(group.name);
        return {};
      }
      default:
        return undefined;
    }
  }

  /** Applies what the operation has done so far; returns how many regions are done. */
  private settle(operation: Operation): number {
    const done = Math.min(operation.regions.length, Math.floor(operation.polls / POLLS_PER_INSTANCE));
    for (const region of operation.regions.slice(0, done)) {
      if (operation.action === "CREATE" && !operation.group.instances.has(region))
        operation.group.instances.set(region, `sim-${randomUUID()}`);
      if (operation.action === "DELETE") operation.group.instances.delete(region);
    }
    return done;
  }

  private group(name: unknown): Group {
    const group = typeof name === "string" ? this.groups.get(name) : undefined;
    if (!group)
      throw new RosApiError(
        "StackGroupNotFound",
        `The stack group ${String(name)} could not be found (the simulated endpoint keeps stack groups in memory only).`,
        404,
      );
    return group;
  }

  private operation(id: unknown): Operation {
    const operation = typeof id === "string" ? this.operations.get(id) : undefined;
    if (!operation)
      throw new RosApiError("OperationNotFound", `The operation ${String(id)} could not be found.`, 404);
    return operation;
  }
}
