// Demo mode's simulated ROS endpoint: what the ROS tools call in a pipeline
// run when no model and no Alibaba Cloud account are configured, so a
// newcomer sees a whole pipeline (validation, costs, a stack that goes from
// CREATE_IN_PROGRESS to CREATE_COMPLETE, deletion) without creating anything.
// Every answer says so: RequestId "simulated-…", Simulated: true, stack ids
// "sim-…", and the tools' texts name the endpoint "simulated".
//
// It behaves like ROS where a demo needs it to fail: a region has an ECS
// instance quota (a stack asking for more ends CREATE_FAILED at that
// resource, with its reason), a resource with deletion protection on makes
// DeleteStack end DELETE_FAILED, and stacks of stack groups deploy to several
// regions (simulated-stack-groups.ts). One endpoint serves a whole runtime,
// so a later turn finds the stacks of an earlier one; it keeps them in
// memory only, so after a restart it no longer knows them and says so
// (StackNotFound), which deletion takes as "already gone".
import { randomUUID } from "node:crypto";
import { sleep } from "../abort.js";
import type { CloudContext } from "./context.js";
import { DEFAULT_REGION } from "./credentials.js";
import { flattenParams, RosApiError, type RosApi } from "./ros-client.js";
import { SimulatedAliyunApi } from "./simulated-aliyun.js";
import { simulatedParameterConstraints } from "./simulated-constraints.js";
import { SimulatedStackGroups } from "./simulated-stack-groups.js";
import {
  createdResources,
  givenParameters,
  hasDeletionProtection,
  instancesOf,
  resourcesOf,
  type SimulatedResource,
} from "./simulated-template.js";

/** Monthly list prices (CNY) the simulation uses per resource type; unknown types cost 0. */
/** An instance group costs an instance's price per instance it runs (MaxAmount). */
const MONTHLY_PRICE: Record<string, number> = {
  "ALIYUN::ECS::Instance": 180,
  "ALIYUN::RDS::DBInstance": 420,
  "ALIYUN::SLB::LoadBalancer": 60,
  "ALIYUN::REDIS::Instance": 160,
  "ALIYUN::OSS::Bucket": 10,
  "ALIYUN::VPC::EIP": 25,
};

function monthlyPrice(resource: SimulatedResource): number {
  const instances = instancesOf(resource);
  if (instances > 0) return instances * MONTHLY_PRICE["ALIYUN::ECS::Instance"];
  return MONTHLY_PRICE[resource.type] ?? 0;
}

/** GetStack polls a simulated stack spends in progress before it is complete. */
const IN_PROGRESS_POLLS = 2;
/** GetStack polls a deletion spends in progress. */
const DELETE_POLLS = 1;
/** ECS instances one region of the simulated account may run. */
export const SIMULATED_ECS_QUOTA = 10;

interface SimulatedStack {
  id: string;
  name: string;
  regionId: string;
  resources: SimulatedResource[];
  /** The parameter values the stack was created with. */
  parameters: Record<string, string>;
  /** The resource whose creation fails, and why. */
  failure?: { index: number; reason: string };
  phase: "creating" | "created" | "deleting" | "delete_failed";
  /** GetStack polls since the phase began. */
  polls: number;
}

const FAILED_CANCELLED = "Resource creation cancelled: another resource of the stack failed (simulated).";

export class SimulatedRos implements RosApi {
  private readonly stacks = new Map<string, SimulatedStack>();
  private readonly groups = new SimulatedStackGroups();

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
                Result: { Order: { TradeAmount: monthlyPrice(r), Currency: "CNY" } },
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
            Resources: createdResources(body, givenParameters(params.Parameters)).map((r) => ({
              LogicalResourceId: r.logicalId,
              ResourceType: r.type,
              Action: "Add",
            })),
          },
        };
      case "CreateStack": {
        const id = `sim-${randomUUID()}`;
        const parameters = givenParameters(params.Parameters);
        const resources = createdResources(body, parameters);
        this.stacks.set(id, {
          id,
          name: String(params.StackName),
          regionId,
          resources,
          parameters,
          ...this.quotaFailure(resources, regionId),
          phase: "creating",
          polls: 0,
        });
        return { ...base, StackId: id };
      }
      case "GetStack":
        return { ...base, ...this.getStack(this.find(params.StackId)) };
      case "ListStackResources": {
        const stack = this.find(params.StackId);
        return {
          ...base,
          Resources: stack.resources.map((r, i) => ({
            LogicalResourceId: r.logicalId,
            PhysicalResourceId: `sim-${r.logicalId.toLowerCase()}`,
            ResourceType: r.type,
            ...resourceStatus(stack, i),
          })),
        };
      }
      case "DeleteStack": {
        const stack = this.find(params.StackId);
        stack.phase = "deleting";
        stack.polls = 0;
        return base;
      }
      default: {
        const answer = this.groups.call(action, params, regionId);
        if (answer) return { ...base, ...answer };
        throw new RosApiError(
          "InvalidAction.NotFound",
          `The simulated ROS endpoint does not offer ${action}.`,
        );
      }
    }
  }

  /**
   * The first resource that would take the stack's ECS instances past the
   * region's quota, if any. Each stack has the quota to itself: other stacks
   * do not count, so a demo server never runs out however often it deploys.
   */
  private quotaFailure(
    resources: SimulatedResource[],
    regionId: string,
  ): { failure?: { index: number; reason: string } } {
    let asked = 0;
    for (const [index, r] of resources.entries()) {
      const n = instancesOf(r);
      asked += n;
      if (n > 0 && asked > SIMULATED_ECS_QUOTA) {
        return {
          failure: {
            index,
            reason:
              `QuotaExceeded.Instance: ${r.logicalId} asks for ${n} ECS instance${n === 1 ? "" : "s"}, which ` +
              `exceeds the ECS instance quota of ${regionId} (${SIMULATED_ECS_QUOTA} instances) (simulated).`,
          },
        };
      }
    }
    return {};
  }

  private getStack(stack: SimulatedStack): Record<string, unknown> {
    const head = {
      StackId: stack.id,
      StackName: stack.name,
      RegionId: stack.regionId,
      Parameters: Object.entries(stack.parameters).map(([ParameterKey, ParameterValue]) => ({
        ParameterKey,
        ParameterValue,
      })),
      Outputs: [],
    };
    stack.polls++;
    if (stack.phase === "creating" && stack.polls > IN_PROGRESS_POLLS) stack.phase = "created";
    if (stack.phase === "deleting" && stack.polls > DELETE_POLLS) {
      const blocker = protectedResource(stack);
      if (!blocker) {
        this.stacks.delete(stack.id);
        return {
          ...head,
          Status: "DELETE_COMPLETE",
          StatusReason: "Stack DELETE completed successfully (simulated)",
        };
      }
      stack.phase = "delete_failed";
    }
    switch (stack.phase) {
      case "creating":
        return { ...head, Status: "CREATE_IN_PROGRESS", StatusReason: "Stack CREATE started (simulated)" };
      case "created": {
        const f = stack.failure;
        if (!f)
          return {
            ...head,
            Status: "CREATE_COMPLETE",
            StatusReason: "Stack CREATE completed successfully (simulated)",
          };
        const r = stack.resources[f.index];
        return {
          ...head,
          Status: "CREATE_FAILED",
          StatusReason: `Resource ${r.logicalId} (${r.type}) CREATE_FAILED: ${f.reason}`,
        };
      }
      case "deleting":
        return { ...head, Status: "DELETE_IN_PROGRESS", StatusReason: "Stack DELETE started (simulated)" };
      case "delete_failed": {
        const r = protectedResource(stack) as SimulatedResource;
        return {
          ...head,
          Status: "DELETE_FAILED",
          StatusReason: `Resource ${r.logicalId} (${r.type}) DELETE_FAILED: ${deletionProtectionReason(r)}`,
        };
      }
    }
  }

  private find(id: unknown): SimulatedStack {
    const stack = typeof id === "string" ? this.stacks.get(id) : undefined;
    if (!stack)
      throw new RosApiError(
        "StackNotFound",
        `The Stack (${String(id)}) could not be found. The simulated ROS endpoint keeps stacks in memory only: ` +
          "a stack of an earlier process, or one already deleted, is gone (nothing ever existed in Alibaba Cloud).",
        404,
      );
    return stack;
  }
}

function deletionProtectionReason(r: SimulatedResource): string {
  return (
    `OperationDenied.DeletionProtection: ${r.logicalId} has deletion protection on; turn it off ` +
    "(DeletionProtection), then delete the stack again (simulated)."
  );
}

/** Whether resource i of a stack was created. */
function created(stack: SimulatedStack, i: number): boolean {
  return !stack.failure || i < stack.failure.index;
}

/** A created resource with deletion protection on: it stops the stack's deletion. */
function protectedResource(stack: SimulatedStack): SimulatedResource | undefined {
  return stack.resources.find((r, i) => created(stack, i) && hasDeletionProtection(r));
}

function resourceStatus(stack: SimulatedStack, i: number): { Status: string; StatusReason?: string } {
  const f = stack.failure;
  switch (stack.phase) {
    case "creating": {
      const done = i < stack.polls && (!f || i < f.index);
      return { Status: done ? "CREATE_COMPLETE" : "CREATE_IN_PROGRESS" };
    }
    case "created":
      if (!f || i < f.index) return { Status: "CREATE_COMPLETE" };
      return { Status: "CREATE_FAILED", StatusReason: i === f.index ? f.reason : FAILED_CANCELLED };
    case "deleting":
      return { Status: "DELETE_IN_PROGRESS" };
    case "delete_failed": {
      const r = stack.resources[i];
      if (created(stack, i) && hasDeletionProtection(r))
        return { Status: "DELETE_FAILED", StatusReason: deletionProtectionReason(r) };
      return { Status: "DELETE_COMPLETE" };
    }
  }
}

/**
 * The cloud context of a demo pipeline run: simulated credentials, the
 * runtime's one simulated ROS endpoint and simulated VPC / STS answers, quick polls.
 */
export function simulatedCloud(ros: SimulatedRos, api = new SimulatedAliyunApi()): CloudContext {
  return {
    credentials: {
      // Not a secret, but redacted from answers like one: a word no answer uses ("simulated" would be).
      accessKeyId: "demo-simulated-key-id",
      accessKeySecret: "demo-simulated-key-secret",
      regionId: DEFAULT_REGION,
      source: "simulated",
    },
    ros,
    api,
    pollIntervalMs: 300,
    maxPollMs: 60_000,
  };
}
