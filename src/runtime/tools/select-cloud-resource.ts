// select_cloud_resource: lets the user choose an existing cloud resource for a
// template parameter (e.g. the VPC a stack goes into). The resources are
// listed through the turn's cloud context (DescribeVpcs, signed like every
// cloud call; demo mode's simulated endpoint answers it too), and an input of
// kind cloud_resource_selection asks for one: an offered one, an id typed by
// hand (the selector's profile must accept it), or none. A run restarted while
// the question waits asks the same input again without listing again.
import { t } from "../../i18n/index.js";
import { selectorProfile, SELECTOR_IDS, type SelectorProfile } from "../cloud/resource-selectors.js";
import { AliyunApiError } from "../cloud/rpc-call.js";
import { credentialSecrets } from "../cloud/credentials.js";
import { redactSecrets, ToolError } from "../errors.js";
import { resolveSelection } from "../permissions/choice-answers.js";
import type { InputRequest, ResourceSelector } from "../seam.js";
import { readOnlyDescription } from "./describe.js";
import type { Tool, ToolContext } from "./types.js";

interface SelectInput {
  selector: string;
  parameter?: string;
  region_id?: string;
  prompt?: string;
}

/** What clients may send back: an offered or typed resource id (with its label), or a typed text. */
const RESPONSE_SCHEMA = {
  oneOf: [
    {
      type: "object",
      properties: { value: { type: "string", minLength: 1 }, label: { type: "string" } },
      required: ["value"],
      additionalProperties: false,
    },
    {
      type: "object",
      properties: { freeText: { type: "string", minLength: 1 } },
      required: ["freeText"],
      additionalProperties: false,
    },
  ],
};

async function listOptions(profile: SelectorProfile, ctx: ToolContext, regionId: string) {
  const cloud = ctx.cloud;
  if (!cloud?.api) throw new ToolError("Listing cloud resources needs Alibaba Cloud credentials.");
  let answer: Record<string, unknown>;
  try {
    answer = await cloud.api.call(
      {
        product: profile.product,
        action: profile.action,
        params: { RegionId: regionId, PageSize: 50 },
        regionId,
      },
      ctx.signal,
    );
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    const op = `${profile.product}:${profile.action}`;
    if (!(error instanceof AliyunApiError)) throw new ToolError(`${op} failed.`);
    const request = error.requestId ? ` (RequestId ${error.requestId})` : "";
    throw new ToolError(
      redactSecrets(
        `${op} failed: ${error.code}: ${error.message}${request}`,
        credentialSecrets(cloud.credentials),
      ),
    );
  }
  return profile.options(answer).slice(0, 50);
}

function selectionRequest(
  input: SelectInput,
  profile: SelectorProfile,
  ctx: ToolContext,
  regionId: string,
  options: InputRequest["options"],
): InputRequest {
  const lang = ctx.language;
  const parameter = input.parameter ?? profile.parameter;
  const selector: ResourceSelector = {
    id: profile.id,
    parameter,
    resourceType: profile.resourceType,
    source: {
      provider: "aliyun",
      product: profile.product,
      action: profile.action,
      regionId,
      ...(ctx.cloud?.credentials.source === "simulated" ? { simulated: true } : {}),
    },
  };
  const prompt = (
    input.prompt ??
    t(
      lang,
      options.length ? `runtime.selector.${profile.id}.prompt` : `runtime.selector.${profile.id}.none`,
      {
        region: regionId,
      },
    )
  ).slice(0, 1000);
  return {
    inputId: `select-${ctx.toolUseId}`,
    kind: "cloud_resource_selection",
    toolUseId: ctx.toolUseId,
    toolName: "select_cloud_resource",
    title: t(lang, "runtime.selector.title"),
    purpose: t(lang, "runtime.selector.purpose", { parameter }),
    effect: "read",
    isReadOnly: true,
    prompt,
    safeSummary: `${profile.id} in ${regionId}: ${options.length} option(s)`,
    options,
    allowFreeText: true,
    freeTextPrompt: t(lang, `runtime.selector.${profile.id}.freeText`),
    responseSchema: RESPONSE_SCHEMA,
    language: lang,
    selector,
  };
}

export const selectCloudResourceTool: Tool<SelectInput> = {
  name: "select_cloud_resource",
  description:
    "Ask the user to choose an existing cloud resource for a template parameter (selector vpc.vpc: the VPC, " +
    "parameter VpcId). Lists the resources of the region and waits for the choice. The result says which " +
    "resource was chosen (use its id as the parameter's value) or that none was (leave the parameter out: " +
    "the template then creates its own).",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["selector"],
    properties: {
      selector: { enum: SELECTOR_IDS },
      parameter: { type: "string", minLength: 1, maxLength: 200 },
      region_id: { type: "string", minLength: 1 },
      prompt: { type: "string", minLength: 1, maxLength: 1000 },
    },
  },
  supportsBlanketAllow: true,
  // It waits for a person.
  timeoutMs: 0,
  isReadOnly: () => true,
  // Questions are asked one at a time.
  isConcurrencySafe: () => false,
  describe: (input, lang) => readOnlyDescription("select_cloud_resource", lang, input.selector),
  async run(input, ctx) {
    const profile = selectorProfile(input.selector);
    if (!profile)
      throw new ToolError(`Unknown selector ${input.selector}; known: ${SELECTOR_IDS.join(", ")}.`);
    const regionId = input.region_id ?? ctx.cloud?.credentials.regionId;
    if (!regionId) throw new ToolError("Listing cloud resources needs Alibaba Cloud credentials.");
    const inputId = `select-${ctx.toolUseId}`;
    const request =
      ctx.asked?.(inputId) ??
      selectionRequest(input, profile, ctx, regionId, await listOptions(profile, ctx, regionId));
    const answer = await ctx.askUser(request);
    if (answer.kind !== "cloud_resource_selection")
      throw new ToolError("The answer is not a resource selection.");
    const selection = resolveSelection(request, answer);
    const selector = request.selector as ResourceSelector;
    const parameter = selector.parameter ?? profile.parameter;
    if (selection.status === "canceled") {
      const why = selection.optionsEmpty ? " (no resource was offered)" : "";
      return {
        content:
          `The user chose no existing resource for ${parameter}${why}. Leave ${parameter} out of the ` +
          "parameters: the template creates what it needs (a new VPC).",
        data: {
          status: "canceled",
          selectorId: selector.id,
          parameter,
          ...(selection.optionsEmpty ? { optionsEmpty: true } : {}),
        },
      };
    }
    return {
      content: `The user chose ${selection.value} (${selection.label}) for ${parameter}. Use ${parameter}=${selection.value}.`,
      data: {
        status: "selected",
        selectorId: selector.id,
        parameter,
        value: selection.value,
        label: selection.label,
        source: selector.source,
      },
    };
  },
};
