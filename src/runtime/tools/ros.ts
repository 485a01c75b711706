// ROS tools that read a template: ros_validate_template always exists (local
// static checks, plus ValidateTemplate when a credential resolves); the cost
// estimate and the preview call ROS and are registered only with a
// credential. Also what every ROS tool shares: the template source (a
// workspace file or a body), the parameter list, the credential check and
// the ROS error text. ros_stack is in ros-stack.ts.
import { readFile } from "node:fs/promises";
import type { CloudContext } from "../cloud/context.js";
import { RosApiError } from "../cloud/ros-client.js";
import { redactSecrets, ToolError } from "../errors.js";
import { displayPath, readOnlyDescription, readOnlyPolicy } from "./describe.js";
import { formatReport, validateRosTemplate, type Finding } from "./ros-validator.js";
import type { Tool, ToolContext } from "./types.js";

const MAX_TEMPLATE_BYTES = 512 * 1024;

export interface TemplateSource {
  path?: string;
  template_body?: string;
}

export const templateSourceProperties = {
  path: { type: "string", minLength: 1, description: "Template file in the workspace (YAML or JSON)." },
  template_body: { type: "string", minLength: 1, description: "Template text, when there is no file." },
} as const;

export const parametersProperty = {
  type: "object",
  description: "Template parameters, name to value.",
  additionalProperties: { type: ["string", "number", "boolean", "array", "object"] },
} as const;

export async function loadTemplate(
  source: TemplateSource,
  ctx: ToolContext,
): Promise<{ body: string; label: string }> {
  if ((source.path === undefined) === (source.template_body === undefined)) {
    throw new ToolError("Give exactly one of path or template_body.");
  }
  if (source.template_body !== undefined) return { body: source.template_body, label: "template_body" };
  const absolute = await ctx.workspace.resolveExisting(source.path as string);
  const label = ctx.workspace.relative(absolute);
  const buffer = await readFile(absolute).catch(() => {
    throw new ToolError(`Cannot read ${label}.`);
  });
  if (buffer.length > MAX_TEMPLATE_BYTES)
    throw new ToolError(`${label} is larger than ROS accepts (512 KiB).`);
  return { body: buffer.toString("utf8"), label };
}

export function requireCloud(ctx: ToolContext): CloudContext {
  if (!ctx.cloud) throw new ToolError("No Alibaba Cloud credentials are configured.");
  return ctx.cloud;
}

function rosFailure(action: string, error: unknown): ToolError {
  if (error instanceof RosApiError) {
    const request = error.requestId ? ` (RequestId ${error.requestId})` : "";
    return new ToolError(redactSecrets(`ROS ${action} failed: ${error.code}: ${error.message}${request}`));
  }
  return error instanceof ToolError ? error : new ToolError(`ROS ${action} failed.`);
}

/** Runs ROS calls; a failure becomes the ROS error text for the model, unless the turn was cancelled. */
export async function guard<T>(action: string, ctx: ToolContext, job: () => Promise<T>): Promise<T> {
  try {
    return await job();
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    throw rosFailure(action, error);
  }
}

export function parameterList(parameters: Record<string, unknown> | undefined) {
  return Object.entries(parameters ?? {}).map(([key, value]) => ({
    ParameterKey: key,
    ParameterValue: typeof value === "string" ? value : JSON.stringify(value),
  }));
}

interface ValidateInput extends TemplateSource {
  region_id?: string;
}

export const rosValidateTemplateTool: Tool<ValidateInput> = {
  name: "ros_validate_template",
  description:
    "Validate a ROS template (YAML or JSON): local static checks (format version, ALIYUN::* resource types, parameters, outputs, Ref/Fn::GetAtt/Fn::Sub targets) and, when Alibaba Cloud credentials are configured, the ROS ValidateTemplate API.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: { ...templateSourceProperties, region_id: { type: "string", minLength: 1 } },
  },
  ...readOnlyPolicy,
  ruleContent: (input) => input.path,
  describe: (input, lang) =>
    readOnlyDescription("ros_validate_template", lang, input.path && displayPath(input.path)),
  async run(input, ctx) {
    const { body, label } = await loadTemplate(input, ctx);
    const report = validateRosTemplate(body);
    const findings: Finding[] = [...report.findings];
    let remote: Record<string, unknown> | undefined;
    if (report.valid && ctx.cloud) {
      try {
        const answer = await ctx.cloud.ros.call(
          "ValidateTemplate",
          { TemplateBody: body, RegionId: input.region_id ?? ctx.cloud.credentials.regionId },
          ctx.signal,
        );
        remote = { checked: true, requestId: answer.RequestId, resourceTypes: answer.ResourceTypes };
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        const failure = rosFailure("ValidateTemplate", error);
        findings.push({ severity: "error", path: "/", message: failure.message });
        remote = { checked: true, error: failure.message };
      }
    }
    const valid = findings.every((f) => f.severity !== "error");
    const text = formatReport({ ...report, valid, findings });
    const remoteNote = remote
      ? remote.error
        ? ""
        : "\nROS ValidateTemplate accepted the template."
      : "\n(Remote ValidateTemplate skipped: no Alibaba Cloud credentials.)";
    return {
      content: `${label}: ${text}${remoteNote}`,
      isError: !valid,
      data: { template: label, valid, findings, remote: remote ?? { checked: false } },
    };
  },
};

interface EstimateInput extends TemplateSource {
  parameters?: Record<string, unknown>;
  region_id?: string;
}

export const rosEstimateCostTool: Tool<EstimateInput> = {
  name: "ros_estimate_template_cost",
  description: "Estimate the cost of a ROS template's resources with the ROS GetTemplateEstimateCost API.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      ...templateSourceProperties,
      parameters: parametersProperty,
      region_id: { type: "string", minLength: 1 },
    },
  },
  ...readOnlyPolicy,
  ruleContent: (input) => input.path,
  describe: (input, lang) =>
    readOnlyDescription("ros_estimate_template_cost", lang, input.path && displayPath(input.path)),
  async run(input, ctx) {
    const cloud = requireCloud(ctx);
    const { body } = await loadTemplate(input, ctx);
    const answer = await guard("GetTemplateEstimateCost", ctx, () =>
      cloud.ros.call(
        "GetTemplateEstimateCost",
        {
          TemplateBody: body,
          RegionId: input.region_id ?? cloud.credentials.regionId,
          Parameters: parameterList(input.parameters),
        },
        ctx.signal,
      ),
    );
    const result = { requestId: answer.RequestId, resources: answer.Resources ?? {} };
    return { content: JSON.stringify(result), data: result };
  },
};

interface PreviewInput extends TemplateSource {
  stack_name: string;
  parameters?: Record<string, unknown>;
  region_id?: string;
}

export const rosPreviewTemplateTool: Tool<PreviewInput> = {
  name: "ros_preview_template",
  description: "Preview the resources a ROS template would create (ROS PreviewStack). Creates nothing.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["stack_name"],
    properties: {
      ...templateSourceProperties,
      stack_name: { type: "string", minLength: 1, maxLength: 255 },
      parameters: parametersProperty,
      region_id: { type: "string", minLength: 1 },
    },
  },
  ...readOnlyPolicy,
  ruleContent: (input) => input.stack_name,
  describe: (input, lang) => readOnlyDescription("ros_preview_template", lang, input.stack_name),
  async run(input, ctx) {
    const cloud = requireCloud(ctx);
    const { body } = await loadTemplate(input, ctx);
    const answer = await guard("PreviewStack", ctx, () =>
      cloud.ros.call(
        "PreviewStack",
        {
          StackName: input.stack_name,
          TemplateBody: body,
          RegionId: input.region_id ?? cloud.credentials.regionId,
          Parameters: parameterList(input.parameters),
        },
        ctx.signal,
      ),
    );
    const stack = (answer.Stack ?? {}) as Record<string, unknown>;
    const result = { requestId: answer.RequestId, resources: stack.Resources ?? [] };
    return { content: JSON.stringify(result), data: result };
  },
};
