// Demo mode's simulated ROS endpoint: what the ROS tools call in a pipeline
// run when no model and no Alibaba Cloud account are configured, so a
// newcomer sees a whole pipeline (validation, costs, a stack that goes from
// CREATE_IN_PROGRESS to CREATE_COMPLETE, deletion) without creating anything.
// Every answer says so: RequestId "simulated-…", Simulated: true, stack ids
// "sim-…", and the tools' texts name the endpoint "simulated".
import { randomUUID } from "node:crypto";
import YAML from "yaml";
import { sleep } from "../abort.js";
import type { CloudContext } from "./context.js";
import { DEFAULT_REGION } from "./credentials.js";
import { flattenParams, RosApiError, type RosApi } from "./ros-client.js";
import { simulatedParameterConstraints } from "./simulated-constraints.js";

/** Monthly list prices (CNY) the simulation uses per resource type; unknown types cost 0. */
const MONTHLY_PRICE: Record<string, number> = {
  "ALIYUN::ECS::Instance": 180,
  "ALIYUN::ECS::InstanceGroup": 360,
  "ALIYUN::RDS::DBInstance": 420,
  "ALIYUN::SLB::LoadBalancer": 60,
  "ALIYUN::REDIS::Instance": 160,
  "ALIYUN::OSS::Bucket": 10,
  "ALIYUN::VPC::EIP": 25,
};

/** GetStack polls a simulated stack spends in progress before it is complete. */
const IN_PROGRESS_POLLS = 2;

interface SimulatedStack {
  id: string;
  name: string;
  regionId: string;
  resources: Array<{ logicalId: string; type: string }>;
  polls: number;
  deleting: boolean;
}

function resourcesOf(body: string): Array<{ logicalId: string; type: string }> {
  try {
    const template = YAML.parse(body) as { Resources?: Record<string, { Type?: unknown }> };
    return Object.entries(template.Resources ?? {}).map(([logicalId, r]) => ({
      logicalId,
      type: typeof r?.Type === "string" ? r.Type : "UNKNOWN",
    }));
  } catch {
    return [];
  }
}

export class SimulatedRos implements RosApi {
  private readonly stacks = new Map<string, SimulatedStack>();

  /** Answers like ROS would, after a short pause; nothing leaves the process. */
  async call(
    action: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    await sleep(20, signal);
    const base = { RequestId: `simulated-${randomUUID()}`, Simulated: true };
    const body = typeof params.TemplateBody === "string" ? params.TemplateBody : "";
    const regionId = typeof params.RegionId === "string" ? params.RegionId : DEFAULT_REGION;
    switch (action) {
      case "ValidateTemplate":
        return { ...base, ResourceTypes: { Resources: [...new Set(resourcesOf(body).map((r) => r.type))] } };
      case "GetTemplateEstimateCost":
        return {
          ...base,
          Resources: Object.fromEntries(
            resourcesOf(body).map((r) => [
              r.logicalId,
              {
                Type: r.type,
                Result: { Order: { TradeAmount: MONTHLY_PRICE[r.type] ?? 0, Currency: "CNY" } },
              },
            ]),
          ),
        };
      case "GetTemplateParameterConstraints":
        // The RPC form of list parameters (ParametersKeyFilter.1 = ...), as the HTTP endpoint receives them.
        if (!body) throw new RosApiError("MissingParameter", "TemplateBody is required.", 400);
        return { ...base, ParameterConstraints: simulatedParameterConstraints(body, flattenParams(params)) };
      case "PreviewStack":
        return {
          ...base,
          Stack: {
            StackName: params.StackName,
            Resources: resourcesOf(body).map((r) => ({
              LogicalResourceId: r.logicalId,
              ResourceType: r.type,
              Action: "Add",
            })),
          },
        };
      case "CreateStack": {
        const id = `sim-${randomUUID()}`;
        this.stacks.set(id, {
          id,
          name: String(params.StackName),
          regionId,
          resources: resourcesOf(body),
          polls: 0,
          deleting: false,
        });
        return { ...base, StackId: id };
      }
      case "GetStack": {
        const stack = this.find(params.StackId);
        if (stack.deleting) {
          this.stacks.delete(stack.id);
          return { ...base, StackId: stack.id, StackName: stack.name, Status: "DELETE_COMPLETE" };
        }
        stack.polls++;
        const done = stack.polls > IN_PROGRESS_POLLS;
        return {
          ...base,
          StackId: stack.id,
          StackName: stack.name,
          RegionId: stack.regionId,
          Status: done ? "CREATE_COMPLETE" : "CREATE_IN_PROGRESS",
          StatusReason: done
            ? "Stack CREATE completed successfully (simulated)"
            : "Stack CREATE started (simulated)",
          Outputs: [],
        };
      }
      case "ListStackResources": {
        const stack = this.find(params.StackId);
        const done = stack.polls > IN_PROGRESS_POLLS;
        return {
          ...base,
          Resources: stack.resources.map((r, i) => ({
            LogicalResourceId: r.logicalId,
            PhysicalResourceId: `sim-${r.logicalId.toLowerCase()}`,
            ResourceType: r.type,
            Status: done || i < stack.polls ? "CREATE_COMPLETE" : "CREATE_IN_PROGRESS",
          })),
        };
      }
      case "DeleteStack":
        this.find(params.StackId).deleting = true;
        return base;
      default:
        throw new RosApiError(
          "InvalidAction.NotFound",
          `The simulated ROS endpoint does not offer ${action}.`,
        );
    }
  }

  private find(id: unknown): SimulatedStack {
    const stack = typeof id === "string" ? this.stacks.get(id) : undefined;
    if (!stack) throw new RosApiError("StackNotFound", `The Stack (${String(id)}) could not be found.`, 404);
    return stack;
  }
}

/** The cloud context of a demo pipeline run: simulated credentials and endpoint, quick polls. */
export function simulatedCloud(ros: SimulatedRos): CloudContext {
  return {
    credentials: {
      accessKeyId: "simulated",
      accessKeySecret: "simulated",
      regionId: DEFAULT_REGION,
      source: "simulated",
    },
    ros,
    pollIntervalMs: 300,
    maxPollMs: 60_000,
  };
}
