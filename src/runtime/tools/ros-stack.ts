// ros_stack: create a ROS stack from a template, delete one, or read one.
// create and delete poll GetStack (and ListStackResources) until the stack
// reaches a final status, reporting progress; a failed or rolled-back stack
// is an error result. Both are cloud mutations: they always ask unless an
// exact rule allows them.
import { t } from "../../i18n/index.js";
import { sleep } from "../abort.js";
import type { CloudContext } from "../cloud/context.js";
import { RosApiError } from "../cloud/ros-client.js";
import { redactSecrets, ToolError } from "../errors.js";
import { readOnlyDescription } from "./describe.js";
import {
  guard,
  loadTemplate,
  parameterList,
  parametersProperty,
  requireCloud,
  templateSourceProperties,
  type TemplateSource,
} from "./ros.js";
import type { Tool, ToolContext } from "./types.js";

interface StackInput extends TemplateSource {
  action: "create" | "delete" | "get";
  stack_name?: string;
  stack_id?: string;
  parameters?: Record<string, unknown>;
  region_id?: string;
  timeout_in_minutes?: number;
}

interface StackResource {
  logicalId: string;
  physicalId?: string;
  type?: string;
  status?: string;
  /** Why the resource is where it is (a failed resource's reason). */
  statusReason?: string;
}

function isTerminal(status: string): boolean {
  return !status.endsWith("_IN_PROGRESS");
}

function isFailure(status: string): boolean {
  return status.endsWith("_FAILED") || status.includes("ROLLBACK");
}

/** A stack as GetStack and ListStackResources report it. */
interface StackSnapshot {
  status: string;
  statusReason?: string;
  stackName?: string;
  outputs?: unknown;
  parameters?: Record<string, string>;
  resources: StackResource[];
}

async function stackSnapshot(
  cloud: CloudContext,
  stackId: string,
  regionId: string,
  signal: AbortSignal,
  deleting: boolean,
): Promise<StackSnapshot> {
  let stack: Record<string, unknown>;
  try {
    stack = await cloud.ros.call("GetStack", { StackId: stackId, RegionId: regionId }, signal);
  } catch (error) {
    if (deleting && error instanceof RosApiError && error.code.startsWith("StackNotFound")) {
      return { status: "DELETE_COMPLETE", resources: [] };
    }
    throw error;
  }
  const status = typeof stack.Status === "string" ? stack.Status : "UNKNOWN";
  let resources: StackResource[] = [];
  if (status !== "DELETE_COMPLETE") {
    const listed = await cloud.ros.call(
      "ListStackResources",
      { StackId: stackId, RegionId: regionId },
      signal,
    );
    const raw = Array.isArray(listed.Resources) ? (listed.Resources as Record<string, unknown>[]) : [];
    resources = raw.map((r) => ({
      logicalId: typeof r.LogicalResourceId === "string" ? r.LogicalResourceId : "",
      ...(typeof r.PhysicalResourceId === "string" ? { physicalId: r.PhysicalResourceId } : {}),
      ...(typeof r.ResourceType === "string" ? { type: r.ResourceType } : {}),
      ...(typeof r.Status === "string" ? { status: r.Status } : {}),
      ...(typeof r.StatusReason === "string" && r.StatusReason
        ? { statusReason: redactSecrets(r.StatusReason) }
        : {}),
    }));
  }
  return {
    status,
    ...(typeof stack.StatusReason === "string" ? { statusReason: stack.StatusReason } : {}),
    ...(typeof stack.StackName === "string" ? { stackName: stack.StackName } : {}),
    ...(stack.Outputs !== undefined ? { outputs: stack.Outputs } : {}),
    ...parametersOf(stack.Parameters),
    resources,
  };
}

/** The parameters GetStack reports (ROS masks NoEcho ones), without the ALIYUN:: pseudo parameters. */
function parametersOf(list: unknown): { parameters?: Record<string, string> } {
  if (!Array.isArray(list)) return {};
  const out: Record<string, string> = {};
  for (const p of list as Array<Record<string, unknown>>) {
    if (typeof p.ParameterKey !== "string" || p.ParameterKey.startsWith("ALIYUN::")) continue;
    out[p.ParameterKey] = redactSecrets(typeof p.ParameterValue === "string" ? p.ParameterValue : "");
  }
  return Object.keys(out).length ? { parameters: out } : {};
}

function progressPercentage(status: string, resources: StackResource[]): number {
  if (isTerminal(status)) return 100;
  if (resources.length === 0) return 0;
  const done = resources.filter((r) => r.status !== undefined && isTerminal(r.status)).length;
  return Math.floor((done / resources.length) * 100);
}

async function pollStack(
  cloud: CloudContext,
  ctx: ToolContext,
  stackId: string,
  stackName: string | undefined,
  regionId: string,
  deleting: boolean,
) {
  const started = Date.now();
  for (;;) {
    const snapshot = await stackSnapshot(cloud, stackId, regionId, ctx.signal, deleting);
    const name = snapshot.stackName ?? stackName;
    ctx.progress({
      stackId,
      ...(name ? { stackName: name } : {}),
      status: snapshot.status,
      progressPercentage: progressPercentage(snapshot.status, snapshot.resources),
      resources: snapshot.resources,
      elapsedSeconds: Math.round((Date.now() - started) / 1000),
      regionId,
    });
    if (isTerminal(snapshot.status)) return { ...snapshot, stackName: name };
    if (Date.now() - started > cloud.maxPollMs) {
      throw new ToolError(`Stack ${stackId} is still ${snapshot.status}; stopped waiting.`);
    }
    await sleep(cloud.pollIntervalMs, ctx.signal);
  }
}

/** How a stack call is classified for permissions (ros_deploy is classified the same way). */
export const stackCallPolicy = {
  supportsBlanketAllow: false,
  isCloudMutation: true,
  timeoutMs: 3_600_000,
  isReadOnly: (input: { action: string }) => input.action === "get",
  isConcurrencySafe: (input: { action: string }) => input.action === "get",
  ruleContent: (input: { action: string; stack_name?: string; stack_id?: string }) =>
    `${input.action}:${input.action === "create" ? (input.stack_name ?? "") : (input.stack_id ?? "")}`,
};

export const rosStackTool: Tool<StackInput> = {
  name: "ros_stack",
  description:
    "Create a ROS stack from a template (action create: stack_name plus path or template_body), delete one (action delete: stack_id), or read one (action get: stack_id). create and delete wait until the stack reaches a final status and report progress.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["action"],
    properties: {
      action: { enum: ["create", "delete", "get"] },
      stack_name: { type: "string", minLength: 1, maxLength: 255 },
      stack_id: { type: "string", minLength: 1 },
      ...templateSourceProperties,
      parameters: parametersProperty,
      region_id: { type: "string", minLength: 1 },
      timeout_in_minutes: { type: "integer", minimum: 10, maximum: 1440 },
    },
  },
  ...stackCallPolicy,
  describe: (input, lang) => {
    if (input.action === "get") return readOnlyDescription("ros_stack", lang, input.stack_id);
    const target = input.action === "create" ? (input.stack_name ?? "?") : (input.stack_id ?? "?");
    const key = input.action === "create" ? "runtime.tool.rosStack.create" : "runtime.tool.rosStack.delete";
    return {
      title: t(lang, `${key}.title`, { target }),
      purpose: t(lang, `${key}.purpose`, { region: input.region_id ?? "" }),
      effect: "cloud_change",
      target,
    };
  },
  async run(input, ctx) {
    const cloud = requireCloud(ctx);
    const regionId = input.region_id ?? cloud.credentials.regionId;
    if (input.action === "create") {
      if (!input.stack_name) throw new ToolError("action create needs stack_name.");
      const { body } = await loadTemplate(input, ctx);
      const stackId = await guard("CreateStack", ctx, async () => {
        const answer = await cloud.ros.call(
          "CreateStack",
          {
            StackName: input.stack_name,
            TemplateBody: body,
            RegionId: regionId,
            TimeoutInMinutes: input.timeout_in_minutes ?? 60,
            Parameters: parameterList(input.parameters),
          },
          ctx.signal,
        );
        if (typeof answer.StackId !== "string" || !answer.StackId)
          throw new ToolError("ROS CreateStack returned no StackId.");
        return answer.StackId;
      });
      return finish(
        await guard("GetStack", ctx, () => pollStack(cloud, ctx, stackId, input.stack_name, regionId, false)),
        stackId,
      );
    }
    if (!input.stack_id) throw new ToolError(`action ${input.action} needs stack_id.`);
    const stackId = input.stack_id;
    if (input.action === "delete") {
      const gone = await guard("DeleteStack", ctx, () =>
        cloud.ros.call("DeleteStack", { StackId: stackId, RegionId: regionId }, ctx.signal).then(
          () => false,
          (error: unknown) => {
            // A stack that no longer exists is deleted: nothing is left to clean up.
            if (error instanceof RosApiError && error.code.startsWith("StackNotFound")) return true;
            throw error;
          },
        ),
      );
      if (gone)
        return finish(
          { status: "DELETE_COMPLETE", statusReason: "The stack no longer exists.", resources: [] },
          stackId,
        );
      return finish(
        await guard("GetStack", ctx, () => pollStack(cloud, ctx, stackId, undefined, regionId, true)),
        stackId,
      );
    }
    const snapshot = await guard("GetStack", ctx, () =>
      stackSnapshot(cloud, stackId, regionId, ctx.signal, false),
    );
    return finish(snapshot, stackId, false);
  },
};

function finish(snapshot: StackSnapshot, stackId: string, failOnStatus = true) {
  const result = { stackId, ...snapshot };
  const failed = failOnStatus && isFailure(snapshot.status);
  const reason = snapshot.statusReason ? ` (${redactSecrets(snapshot.statusReason)})` : "";
  return {
    content: `Stack ${stackId}${snapshot.stackName ? ` (${snapshot.stackName})` : ""} is ${snapshot.status}${reason}.\n${JSON.stringify({ outputs: snapshot.outputs ?? [], resources: snapshot.resources })}`,
    isError: failed,
    data: result,
  };
}
