// ros_get_template_parameter_constraints: ROS GetTemplateParameterConstraints,
// the values each template parameter may take in a region (zones, instance
// types, engine versions...), so the model proposes values that exist.
import { readOnlyDescription, readOnlyPolicy, displayPath } from "./describe.js";
import {
  guard,
  loadTemplate,
  parameterList,
  parametersProperty,
  requireCloud,
  templateSourceProperties,
  type TemplateSource,
} from "./ros.js";
import type { Tool } from "./types.js";

interface ConstraintsInput extends TemplateSource {
  parameters_key_filter?: string[];
  parameters?: Record<string, unknown>;
  region_id?: string;
}

interface Constraint {
  parameterKey: string;
  type?: string;
  allowedValues?: unknown[];
  associationParameterNames?: unknown[];
  behavior?: string;
  behaviorReason?: string;
}

function summary(raw: unknown): Constraint[] {
  const list = Array.isArray(raw) ? (raw as Record<string, unknown>[]) : [];
  return list
    .filter((c) => c && typeof c.ParameterKey === "string")
    .map((c) => ({
      parameterKey: c.ParameterKey as string,
      ...(typeof c.Type === "string" ? { type: c.Type } : {}),
      ...(Array.isArray(c.AllowedValues) ? { allowedValues: c.AllowedValues as unknown[] } : {}),
      ...(Array.isArray(c.AssociationParameterNames)
        ? { associationParameterNames: c.AssociationParameterNames as unknown[] }
        : {}),
      ...(typeof c.Behavior === "string" ? { behavior: c.Behavior } : {}),
      ...(typeof c.BehaviorReason === "string" ? { behaviorReason: c.BehaviorReason } : {}),
    }));
}

export const rosParameterConstraintsTool: Tool<ConstraintsInput> = {
  name: "ros_get_template_parameter_constraints",
  description:
    "Ask ROS (GetTemplateParameterConstraints) which values the parameters of a ROS template may take in a region, e.g. the zones and instance types an ALIYUN::ECS::Instance accepts. parameters_key_filter limits the answer to some parameters; parameters gives values already chosen (they narrow associated parameters).",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      ...templateSourceProperties,
      parameters_key_filter: {
        type: "array",
        items: { type: "string", minLength: 1 },
        maxItems: 100,
        description: "Parameter names to ask about (default: all).",
      },
      parameters: parametersProperty,
      region_id: { type: "string", minLength: 1 },
    },
  },
  ...readOnlyPolicy,
  ruleContent: (input) => input.path,
  describe: (input, lang) =>
    readOnlyDescription(
      "ros_get_template_parameter_constraints",
      lang,
      input.path && displayPath(input.path),
    ),
  async run(input, ctx) {
    const cloud = requireCloud(ctx);
    const { body, label } = await loadTemplate(input, ctx);
    const answer = await guard("GetTemplateParameterConstraints", ctx, () =>
      cloud.ros.call(
        "GetTemplateParameterConstraints",
        {
          TemplateBody: body,
          RegionId: input.region_id ?? cloud.credentials.regionId,
          ParametersKeyFilter: input.parameters_key_filter,
          Parameters: parameterList(input.parameters),
        },
        ctx.signal,
      ),
    );
    const constraints = summary(answer.ParameterConstraints);
    const result = { template: label, requestId: answer.RequestId, constraints };
    return { content: JSON.stringify(result), data: result };
  },
};
