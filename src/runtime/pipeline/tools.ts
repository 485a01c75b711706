// The tools only pipeline steps get: complete_step (always), which hands the
// step's conclusion to the engine after checking it against the step's
// conclusion schema and completion guards, and ros_deploy (deploying), a ROS
// stack creation that the cleanup ledger follows.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { ToolError } from "../errors.js";
import { readOnlyDescription } from "../tools/describe.js";
import { loadTemplate, requireCloud } from "../tools/ros.js";
import { rosStackTool, stackCallPolicy } from "../tools/ros-stack.js";
import { deployStackGroup } from "../tools/ros-stack-group.js";
import type { Tool } from "../tools/types.js";
import { checkGuards, type ToolLogEntry } from "./guards.js";
import type { LoadedStep } from "./loader.js";

export interface RollbackRequest {
  target_step: string;
  reason: string;
}

export interface CompleteStepInput {
  conclusion?: Record<string, unknown>;
  rollback_request?: RollbackRequest;
}

/** A deployment the user confirmed (confirm_deployment): exactly what ros_deploy may create next. */
export interface ConfirmedDeployment {
  /** The confirm_deployment call that asked. */
  toolUseId: string;
  stackName: string;
  templatePath: string;
  regionId: string;
  /** A stack group deployment to these regions. */
  regionIds?: string[];
  parameters: Record<string, string | number | boolean>;
}

/**
 * What the attempt's tools decided (read by the step executor after each
 * round): complete_step's conclusion or rollback, the user's decisions of a
 * deployment confirmation (a reselect is a rollback; cancelled ends the step).
 */
export interface CompletionState {
  conclusion?: Record<string, unknown>;
  rollback?: RollbackRequest;
  confirmed?: ConfirmedDeployment;
  /** The user cancelled the deployment: the message the run ends with. */
  cancelled?: string;
}

const ajv = new Ajv2020({ strict: false, allErrors: true, allowUnionTypes: true });
const compiled = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** Schema problems of a conclusion as short, actionable lines; empty when it fits. */
export function conclusionProblems(schema: Record<string, unknown>, conclusion: unknown): string[] {
  const validate = validatorFor(schema);
  if (validate(conclusion)) return [];
  return (validate.errors ?? []).slice(0, 8).map((e) => {
    const extra =
      e.keyword === "additionalProperties"
        ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})`
        : "";
    return `conclusion${e.instancePath} ${e.message ?? "is invalid"}${extra}`;
  });
}

export function completeStepTool(args: {
  step: LoadedStep;
  conclusionSchema: Record<string, unknown>;
  state: CompletionState;
  /** The tool calls of this attempt so far (for the guards). */
  toolLog: () => readonly ToolLogEntry[];
  /** Why a rollback to the step is not possible; undefined when it is. */
  rollbackRefusal: (target: string) => string | undefined;
  /** Extra checks the engine makes (e.g. options naming evaluated candidates). */
  extraCheck?: (conclusion: Record<string, unknown>) => string[];
}): Tool<CompleteStepInput> {
  const { step, state } = args;
  return {
    name: "complete_step",
    description:
      `Finish the pipeline step "${step.id}" (${step.def.description ?? step.conclusionField}): submit its ` +
      `conclusion (the "${step.conclusionField}" field of the pipeline). It is checked against the step's ` +
      "schema and completion checks; fix what an error names and call it again. To go back to an earlier step " +
      "instead, send rollback_request {target_step, reason} without a conclusion.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        conclusion: args.conclusionSchema,
        rollback_request: {
          type: "object",
          additionalProperties: false,
          required: ["target_step", "reason"],
          properties: {
            target_step: { type: "string", minLength: 1 },
            reason: { type: "string", minLength: 1 },
          },
        },
      },
    },
    supportsBlanketAllow: true,
    isReadOnly: () => true,
    isConcurrencySafe: () => false,
    describe: (_input, lang) => readOnlyDescription("complete_step", lang),
    run(input) {
      if (input.rollback_request) {
        if (input.conclusion)
          throw new ToolError("Send either a conclusion or a rollback_request, not both.");
        const refusal = args.rollbackRefusal(input.rollback_request.target_step);
        if (refusal) throw new ToolError(`The rollback is refused: ${refusal}.`);
        state.rollback = input.rollback_request;
        return Promise.resolve({
          content: `Rollback to ${input.rollback_request.target_step} accepted; this step ends now.`,
        });
      }
      if (!input.conclusion) throw new ToolError("Send a conclusion (or a rollback_request).");
      const problems = [
        ...conclusionProblems(args.conclusionSchema, input.conclusion),
        ...checkGuards(step.def.completion_guards ?? [], input.conclusion, args.toolLog()),
        ...(args.extraCheck?.(input.conclusion) ?? []),
      ];
      if (problems.length > 0) {
        throw new ToolError(`The conclusion is not accepted:\n- ${problems.join("\n- ")}`);
      }
      state.conclusion = input.conclusion;
      return Promise.resolve({ content: "Conclusion accepted." });
    },
  };
}

interface DeployInput {
  action: "create" | "get";
  stack_name?: string;
  stack_id?: string;
  template_path?: string;
  parameters?: Record<string, unknown>;
  region_id?: string;
  /** Deploy to several regions at once: a stack group with one stack instance per region. */
  region_ids?: string[];
  timeout_in_minutes?: number;
}

/** ros_deploy: creates the chosen plan's stack (asks first) and waits for its final status; get reads it. */
/** A deployment to several regions at once (a stack group): its regions. */
export const REGION_IDS_SCHEMA = {
  type: "array",
  minItems: 2,
  maxItems: 10,
  uniqueItems: true,
  items: { type: "string", minLength: 1 },
};

export const rosDeployTool: Tool<DeployInput> = {
  name: "ros_deploy",
  description:
    "Deploy the selected plan: action create makes a ROS stack from template_path (stack_name, parameters) and " +
    "waits until it reaches a final status, reporting progress (with region_ids: a stack group with one stack " +
    "instance per region, whose stack_id is the group's id); action get reads a stack (stack_id).",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["action"],
    properties: {
      action: { enum: ["create", "get"] },
      stack_name: { type: "string", pattern: "^[a-zA-Z0-9][a-zA-Z0-9_-]{0,254}$" },
      stack_id: { type: "string", minLength: 1 },
      template_path: { type: "string", minLength: 1 },
      parameters: {
        type: "object",
        additionalProperties: { type: ["string", "number", "boolean", "array", "object"] },
      },
      region_id: { type: "string", minLength: 1 },
      region_ids: REGION_IDS_SCHEMA,
      timeout_in_minutes: { type: "integer", minimum: 10, maximum: 1440 },
    },
  },
  ...stackCallPolicy,
  describe: (input, lang, workspace) =>
    input.action === "get"
      ? readOnlyDescription("ros_deploy", lang, input.stack_id)
      : rosStackTool.describe(
          { action: "create", stack_name: input.stack_name, region_id: input.region_id },
          lang,
          workspace,
        ),
  async run(input, ctx) {
    if (input.action === "create") {
      if (!input.stack_name || !input.template_path)
        throw new ToolError("action create needs stack_name and template_path.");
      if (input.region_ids) {
        const cloud = requireCloud(ctx);
        const { body } = await loadTemplate({ path: input.template_path }, ctx);
        return deployStackGroup(cloud, ctx, {
          stackGroupName: input.stack_name,
          body,
          ...(input.parameters ? { parameters: input.parameters } : {}),
          regionId: input.region_id ?? cloud.credentials.regionId,
          regionIds: input.region_ids,
        });
      }
      return rosStackTool.run(
        {
          action: "create",
          stack_name: input.stack_name,
          path: input.template_path,
          ...(input.parameters ? { parameters: input.parameters } : {}),
          ...(input.region_id ? { region_id: input.region_id } : {}),
          ...(input.timeout_in_minutes ? { timeout_in_minutes: input.timeout_in_minutes } : {}),
        },
        ctx,
      );
    }
    if (!input.stack_id) throw new ToolError("action get needs stack_id.");
    return rosStackTool.run(
      { action: "get", stack_id: input.stack_id, ...(input.region_id ? { region_id: input.region_id } : {}) },
      ctx,
    );
  },
};

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * ros_deploy in a step that confirms deployments first: once the user
 * confirmed a deployment (confirm_deployment), action create deploys exactly
 * that, once (stack_name, template_path, parameters and regions may be left
 * out; given, they must be the confirmed ones). Without a confirmation it is
 * the plain ros_deploy: its permission prompt stays the gate (a model that
 * skipped the confirmation is still asked for permission, see DECISIONS).
 */
export function confirmedDeployTool(state: CompletionState): Tool<DeployInput> {
  const effective = (input: DeployInput): DeployInput => {
    const c = state.confirmed;
    if (input.action !== "create" || !c) return input;
    return {
      action: "create",
      stack_name: c.stackName,
      template_path: c.templatePath,
      parameters: c.parameters,
      region_id: c.regionId,
      ...(c.regionIds ? { region_ids: c.regionIds } : {}),
      ...(input.timeout_in_minutes ? { timeout_in_minutes: input.timeout_in_minutes } : {}),
    };
  };
  return {
    ...rosDeployTool,
    description:
      `${rosDeployTool.description} In this step, after the user confirmed with confirm_deployment, action ` +
      "create deploys what was confirmed: leave stack_name, template_path and parameters out (given, they must " +
      "be the confirmed ones).",
    ruleContent: (input, workspace) => rosDeployTool.ruleContent?.(effective(input), workspace),
    describe: (input, lang, workspace) => rosDeployTool.describe(effective(input), lang, workspace),
    run(input, ctx) {
      const c = state.confirmed;
      if (input.action !== "create" || !c) return rosDeployTool.run(input, ctx);
      const mismatch: string[] = (
        [
          ["stack_name", input.stack_name, c.stackName],
          ["template_path", input.template_path, c.templatePath],
          ["region_id", input.region_id, c.regionId],
        ] as const
      )
        .filter(([, given, confirmed]) => given !== undefined && given !== confirmed)
        .map(([name]) => name);
      if (input.parameters !== undefined && !same(input.parameters, c.parameters))
        mismatch.push("parameters");
      if (input.region_ids !== undefined && !same(input.region_ids, c.regionIds)) mismatch.push("region_ids");
      if (mismatch.length)
        throw new ToolError(
          `${mismatch.join(", ")} differ from what the user confirmed; call confirm_deployment again to change them.`,
        );
      const deploy = effective(input);
      // One deployment per confirmation.
      state.confirmed = undefined;
      return rosDeployTool.run(deploy, ctx);
    },
  };
}
