// confirm_deployment: before the deploying step creates a stack, the user sees
// what will be created (the template's parameters with their values, secrets
// masked; the candidate, region, stack name and monthly cost) and decides:
// confirm (deploy; ros_deploy's own permission is still asked), adjust
// (change parameter values, then confirm again: a new input each time),
// reselect (back to the candidate selection) or cancel (nothing is created,
// the run ends). The decision is the engine's to apply, not the model's:
// confirm records exactly what ros_deploy may deploy, reselect is a rollback,
// cancel ends the step.
import YAML from "yaml";
import { t, type Language } from "../../i18n/index.js";
import { DEFAULT_REGION } from "../cloud/credentials.js";
import { ToolError } from "../errors.js";
import { resolveConfirmation } from "../permissions/choice-answers.js";
import type {
  ConfirmationAction,
  DeploymentSummary,
  DisplayParameter,
  InputOption,
  InputRequest,
} from "../seam.js";
import { readOnlyDescription } from "../tools/describe.js";
import { loadTemplate } from "../tools/ros.js";
import type { Tool } from "../tools/types.js";
import { REGION_IDS_SCHEMA, type CompletionState, type ConfirmedDeployment } from "./tools.js";

export const SECRET_MASK = "******";
const SECRET_NAME = /(password|passwd|secret|token|accesskey|privatekey|credential)/i;

interface ConfirmInput {
  stack_name: string;
  template_path: string;
  parameters?: Record<string, string | number | boolean>;
  region_id?: string;
  region_ids?: string[];
}

interface DeclaredParameter {
  name: string;
  default?: unknown;
  secret: boolean;
  label?: string;
}

/** The template's Parameters, in order. */
function declaredParameters(body: string): DeclaredParameter[] {
  let template: unknown;
  try {
    template = YAML.parse(body);
  } catch {
    throw new ToolError("The template cannot be read as YAML or JSON.");
  }
  const params = (template as { Parameters?: unknown } | null)?.Parameters;
  if (!params || typeof params !== "object") return [];
  return Object.entries(params as Record<string, Record<string, unknown> | null>).map(([name, spec]) => ({
    name,
    ...(spec && "Default" in spec ? { default: spec.Default } : {}),
    secret: spec?.NoEcho === true || spec?.NoEcho === "true" || SECRET_NAME.test(name),
    ...(spec && typeof spec.Label === "string" ? { label: spec.Label } : {}),
  }));
}

const shown = (value: unknown): string =>
  value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);

export function confirmationOptions(lang: Language, reselect: boolean): InputOption[] {
  const actions: ConfirmationAction[] = [
    "confirm",
    "adjust",
    ...(reselect ? (["reselect"] as const) : []),
    "cancel",
  ];
  return actions.map((action) => ({
    id: action,
    label: t(lang, `runtime.pipeline.confirm.option.${action}`),
    action,
  }));
}

export function confirmationRequest(args: {
  inputId: string;
  toolUseId: string;
  lang: Language;
  display: DisplayParameter[];
  summary: DeploymentSummary;
  reselect: boolean;
  /** Shown above the prompt (the parameters an adjustment changed). */
  note?: string;
}): InputRequest {
  const { lang, summary } = args;
  const options = confirmationOptions(lang, args.reselect);
  const prompt = [
    args.note,
    t(lang, "runtime.pipeline.confirm.prompt", {
      stack: summary.stackName ?? "",
      region: summary.region ?? "",
      candidate: summary.candidateName ?? "",
    }),
  ]
    .filter(Boolean)
    .join("\n\n")
    .slice(0, 1000);
  const list = args.display.map((p) => `${p.name}=${p.value}`).join(", ");
  return {
    inputId: args.inputId,
    kind: "deployment_confirmation",
    toolUseId: args.toolUseId,
    toolName: "confirm_deployment",
    title: t(lang, "runtime.pipeline.confirm.title"),
    purpose: t(lang, "runtime.pipeline.confirm.purpose"),
    effect: "cloud_change",
    target: summary.stackName ?? "",
    isReadOnly: false,
    prompt,
    safeSummary:
      `create ${summary.stackName ?? ""} in ${summary.region ?? ""} from ${summary.template ?? ""}: ${list}`.slice(
        0,
        1200,
      ),
    options,
    allowFreeText: false,
    responseSchema: {
      type: "object",
      additionalProperties: false,
      minProperties: 1,
      properties: {
        action: { enum: options.map((o) => o.action) },
        selectedId: { enum: options.map((o) => o.id) },
        parameterOverrides: {
          type: "object",
          propertyNames: { enum: args.display.map((p) => p.name) },
          additionalProperties: { type: ["string", "number", "boolean"] },
        },
      },
    },
    language: lang,
    operation: "create",
    displayParameters: args.display,
    deploymentSummary: summary,
  };
}

export interface ConfirmationEnv {
  state: CompletionState;
  /** The selected plan (candidate name, monthly cost). */
  plan: () => Record<string, unknown> | undefined;
  /** The candidate selection step a reselect goes back to; undefined when it cannot. */
  reselectTarget: () => string | undefined;
}

export function confirmDeploymentTool(env: ConfirmationEnv): Tool<ConfirmInput> {
  return {
    name: "confirm_deployment",
    description:
      "Before deploying, show the user what will be created (the template's parameters and their values, the " +
      "stack name, region and cost) and wait for the decision: confirmed (then call ros_deploy with action " +
      "create: it deploys exactly what was confirmed), or the user chose another candidate or cancelled (the " +
      "step then ends by itself).",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      required: ["stack_name", "template_path"],
      properties: {
        stack_name: { type: "string", pattern: "^[a-zA-Z0-9][a-zA-Z0-9_-]{0,254}$" },
        template_path: { type: "string", minLength: 1 },
        parameters: { type: "object", additionalProperties: { type: ["string", "number", "boolean"] } },
        region_id: { type: "string", minLength: 1 },
        region_ids: REGION_IDS_SCHEMA,
      },
    },
    supportsBlanketAllow: true,
    // It waits for a person.
    timeoutMs: 0,
    isReadOnly: () => true,
    isConcurrencySafe: () => false,
    describe: (input, lang) => readOnlyDescription("confirm_deployment", lang, input.stack_name),
    async run(input, ctx) {
      const { body, label } = await loadTemplate({ path: input.template_path }, ctx);
      const declared = declaredParameters(body);
      const names = declared.map((p) => p.name);
      const unknown = Object.keys(input.parameters ?? {}).filter((k) => !names.includes(k));
      if (unknown.length)
        throw new ToolError(
          `${label} has no parameter ${unknown.join(", ")} (its parameters: ${names.join(", ") || "none"}).`,
        );
      const chosen: Record<string, string | number | boolean> = { ...(input.parameters ?? {}) };
      const regionId = input.region_id ?? ctx.cloud?.credentials.regionId ?? DEFAULT_REGION;
      const plan = env.plan() ?? {};
      const summary: DeploymentSummary = {
        ...(typeof plan.name === "string" ? { candidateName: plan.name } : {}),
        action: "create",
        region: input.region_ids ? input.region_ids.join(", ") : regionId,
        stackName: input.stack_name,
        template: label,
        ...(typeof plan.total_monthly_cost === "number" ? { totalMonthlyCost: plan.total_monthly_cost } : {}),
      };
      const displayed = (): DisplayParameter[] =>
        declared.map((p) => ({
          name: p.name,
          value:
            p.secret && shown(chosen[p.name] ?? p.default) !== ""
              ? SECRET_MASK
              : shown(chosen[p.name] ?? p.default),
          ...(p.label ? { label: p.label } : {}),
        }));
      let note: string | undefined;
      for (let asked = 1; ; asked++) {
        const reselect = env.reselectTarget();
        const request = confirmationRequest({
          inputId: `confirm-${ctx.toolUseId}-${asked}`,
          toolUseId: ctx.toolUseId,
          lang: ctx.language,
          display: displayed(),
          summary,
          reselect: reselect !== undefined,
          ...(note ? { note } : {}),
        });
        const answer = await ctx.askUser(request);
        if (answer.kind !== "deployment_confirmation")
          throw new ToolError("The answer is not a deployment confirmation.");
        const { action, overrides } = resolveConfirmation(request, answer);
        Object.assign(chosen, overrides);
        const shownParameters = Object.fromEntries(displayed().map((p) => [p.name, p.value]));
        if (action === "adjust") {
          note = t(ctx.language, "runtime.pipeline.confirm.adjusted", {
            names: Object.keys(overrides).join(", "),
          });
          continue;
        }
        if (action === "confirm") {
          const confirmed: ConfirmedDeployment = {
            toolUseId: ctx.toolUseId,
            stackName: input.stack_name,
            templatePath: input.template_path,
            regionId,
            ...(input.region_ids ? { regionIds: input.region_ids } : {}),
            parameters: { ...chosen },
          };
          env.state.confirmed = confirmed;
          return {
            content:
              `The user confirmed: create the stack ${input.stack_name} in ${summary.region ?? regionId} from ${label} with ` +
              `${JSON.stringify(shownParameters)}. Call ros_deploy with action create now; it deploys exactly this.`,
            data: {
              decision: "confirm",
              stackName: input.stack_name,
              templatePath: label,
              regionId,
              parameters: shownParameters,
              asked,
            },
          };
        }
        if (action === "reselect" && reselect !== undefined) {
          const reason = `The user chose not to deploy ${summary.candidateName ?? input.stack_name} and wants to choose another candidate.`;
          env.state.rollback = { target_step: reselect, reason };
          return {
            content: `${reason} The pipeline goes back to ${reselect}; this step ends now.`,
            data: { decision: "reselect", targetStep: reselect, reason, asked },
          };
        }
        const message = t(ctx.language, "runtime.pipeline.confirm.cancelled", { stack: input.stack_name });
        env.state.cancelled = message;
        return {
          content: "The user cancelled the deployment: nothing was created. This step ends now.",
          data: { decision: "cancel", message, asked },
        };
      }
    },
  };
}
