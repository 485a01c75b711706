// The tool set of a turn and the JSON Schema validation of tool inputs.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { aliyunApiTool } from "./aliyun-api.js";
import { askUserQuestionTool } from "./ask-user-question.js";
import { fileTools } from "./files.js";
import type { SkillCatalog } from "../skills/discovery.js";
import { rosParameterConstraintsTool } from "./ros-constraints.js";
import { rosEstimateCostTool, rosPreviewTemplateTool, rosValidateTemplateTool } from "./ros.js";
import { rosStackTool } from "./ros-stack.js";
import { skillTool } from "./skill.js";
import { terraformPackageTool } from "./terraform-package.js";
import type { AnyTool } from "./types.js";

/** Tools that call Alibaba Cloud: registered only when a credential resolves. */
const credentialTools: AnyTool[] = [
  rosEstimateCostTool,
  rosPreviewTemplateTool,
  rosStackTool,
  rosParameterConstraintsTool,
  aliyunApiTool,
];

/**
 * The tools safe mode keeps (reference: A2A safe mode's registry): read-only file
 * tools, skills, memory and the Alibaba Cloud tools. Our ROS template tools are
 * named ros_<verb>_template..., hence ros_*template*. No writes, no shell, no MCP.
 */
const SAFE_MODE_TOOLS = [
  /^(read_file|list_files|glob|grep|skill|read_memory|write_memory)$/,
  /^(aliyun_api|aliyun_doc_search|aliyun_api_doc)$/,
  /^ros_stack/,
  /^ros_.*template/,
  /^(ros_diagnostic|ros_resource_type_registration|ros_tag)$/,
];

export const safeModeAllows = (name: string): boolean => SAFE_MODE_TOOLS.some((p) => p.test(name));

/**
 * Local tools (the `skill` tool listing the turn's skills, Terraform packaging)
 * are always there; cloud API tools only when a credential resolves; safe mode
 * keeps its allow-list.
 */
export function turnTools(
  withCloud: boolean,
  skills: SkillCatalog,
  options: { safeMode?: boolean } = {},
): AnyTool[] {
  const tools = [
    ...fileTools,
    askUserQuestionTool,
    rosValidateTemplateTool,
    skillTool(skills),
    terraformPackageTool,
    ...(withCloud ? credentialTools : []),
  ];
  return options.safeMode ? tools.filter((tool) => safeModeAllows(tool.name)) : tools;
}

const ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true });
const validators = new WeakMap<AnyTool, ValidateFunction>();

/** undefined when the input is valid, otherwise a message for the model. */
export function validateToolInput(tool: AnyTool, input: unknown): string | undefined {
  let validate = validators.get(tool);
  if (!validate) {
    validate = ajv.compile(tool.inputSchema);
    validators.set(tool, validate);
  }
  if (validate(input)) return undefined;
  const problems = (validate.errors ?? []).slice(0, 8).map((e) => {
    const where = e.instancePath || "input";
    const extra =
      e.keyword === "additionalProperties"
        ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})`
        : e.keyword === "enum"
          ? ` (${((e.params as { allowedValues?: unknown[] }).allowedValues ?? []).join(", ")})`
          : "";
    return `${where} ${e.message ?? "is invalid"}${extra}`;
  });
  return `Invalid input for ${tool.name}: ${problems.join("; ")}. Fix the arguments and call the tool again.`;
}
