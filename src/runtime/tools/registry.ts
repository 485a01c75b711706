// The tool set of a turn and the JSON Schema validation of tool inputs.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { aliyunApiTool } from "./aliyun-api.js";
import { askUserQuestionTool } from "./ask-user-question.js";
import { fileTools } from "./files.js";
import { rosParameterConstraintsTool } from "./ros-constraints.js";
import { cloudTools, rosValidateTemplateTool } from "./ros.js";
import { terraformPackageTool } from "./terraform-package.js";
import type { AnyTool } from "./types.js";

/** Tools that call Alibaba Cloud: registered only when a credential resolves. */
const credentialTools: AnyTool[] = [...cloudTools, rosParameterConstraintsTool, aliyunApiTool];

/** Local tools (Terraform packaging included) are always there; cloud API tools only with a credential. */
export function turnTools(withCloud: boolean): AnyTool[] {
  return [
    ...fileTools,
    askUserQuestionTool,
    rosValidateTemplateTool,
    terraformPackageTool,
    ...(withCloud ? credentialTools : []),
  ];
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
