// aliyun_api: a narrow generic Alibaba Cloud OpenAPI caller over the product
// table of cloud/aliyun-products.ts (ROS plus a few common products), signed
// with ACS3-HMAC-SHA256. Read actions (Describe/List/Get/Query/Validate,
// ROS PreviewStack) are allowed without asking; any other action is a cloud
// mutation: asked, and pre-approved only by the exact rule
// `aliyun_api(<product>:<Action>)`.
import { t } from "../../i18n/index.js";
import {
  ACTION_NAME,
  ALIYUN_PRODUCTS,
  aliyunProduct,
  isReadOnlyAction,
  REGION_ID,
} from "../cloud/aliyun-products.js";
import { credentialSecrets } from "../cloud/credentials.js";
import { AliyunApiError } from "../cloud/rpc-call.js";
import { redactSecrets, ToolError } from "../errors.js";
import { readOnlyDescription } from "./describe.js";
import type { Tool, ToolContext } from "./types.js";

interface AliyunApiInput {
  product: string;
  action: string;
  params?: Record<string, unknown>;
  region_id?: string;
}

/** The operation a rule names: lower-case product, action as spelled by the API. */
function operation(input: AliyunApiInput): string {
  return `${String(input.product).toLowerCase()}:${String(input.action)}`;
}

function failure(op: string, error: unknown, ctx: ToolContext): ToolError {
  const secrets = credentialSecrets(ctx.cloud?.credentials);
  if (error instanceof AliyunApiError) {
    const request = error.requestId ? ` (RequestId ${error.requestId})` : "";
    return new ToolError(redactSecrets(`${op} failed: ${error.code}: ${error.message}${request}`, secrets));
  }
  return error instanceof ToolError ? error : new ToolError(`${op} failed.`);
}

/** The redacted answer as JSON again (a redaction can leave a bare [REDACTED] where a number was). */
function parsedOrText(content: string): unknown {
  try {
    return JSON.parse(content) as unknown;
  } catch {
    return content;
  }
}

export const aliyunApiTool: Tool<AliyunApiInput> = {
  name: "aliyun_api",
  description:
    "Call an Alibaba Cloud OpenAPI action (RPC style) of one of these products: " +
    ALIYUN_PRODUCTS.map((p) => `${p.code} (${p.name}, ${p.version})`).join(", ") +
    ". Read actions (Describe*, List*, Get*, Query*, Validate*, ros PreviewStack) run without asking; any other action changes the cloud and needs the user's approval. params are the action's request parameters (lists and objects are flattened the RPC way, e.g. Parameters.1.ParameterKey). RegionId defaults to the configured region.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["product", "action"],
    properties: {
      product: { enum: ALIYUN_PRODUCTS.map((p) => p.code), description: "Product code." },
      action: {
        type: "string",
        pattern: ACTION_NAME.source,
        description: "API action, e.g. DescribeInstances.",
      },
      params: {
        type: "object",
        description: "Request parameters of the action, name to value.",
        additionalProperties: { type: ["string", "number", "boolean", "array", "object"] },
      },
      region_id: { type: "string", pattern: REGION_ID.source, description: "Region, e.g. cn-hangzhou." },
    },
  },
  supportsBlanketAllow: false,
  isCloudMutation: true,
  isReadOnly: (input) => isReadOnlyAction(String(input.product), String(input.action)),
  isConcurrencySafe: (input) => isReadOnlyAction(String(input.product), String(input.action)),
  ruleContent: (input) => operation(input),
  describe: (input, lang) => {
    const target = operation(input);
    if (isReadOnlyAction(String(input.product), String(input.action)))
      return readOnlyDescription("aliyun_api", lang, target);
    return {
      title: t(lang, "runtime.tool.aliyunApi.write.title", { target }),
      purpose: t(lang, "runtime.tool.aliyunApi.write.purpose"),
      effect: "cloud_change",
      target,
    };
  },
  async run(input, ctx) {
    const cloud = ctx.cloud;
    if (!cloud) throw new ToolError("No Alibaba Cloud credentials are configured.");
    const product = aliyunProduct(input.product);
    if (!product)
      throw new ToolError(`product ${JSON.stringify(input.product)} is not in the aliyun_api table.`);
    const op = operation(input);
    const regionId = input.region_id ?? cloud.credentials.regionId;
    const params: Record<string, unknown> = { ...(input.params ?? {}) };
    if (product.takesRegionId && params.RegionId === undefined) params.RegionId = regionId;
    let answer: Record<string, unknown>;
    try {
      if (product.code === "ros") {
        answer = await cloud.ros.call(input.action, params, ctx.signal);
      } else if (cloud.api) {
        answer = await cloud.api.call(
          { product: product.code, action: input.action, params, regionId },
          ctx.signal,
        );
      } else {
        throw new ToolError(`${op} failed: the simulated Alibaba Cloud endpoint only answers ROS actions.`);
      }
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      throw failure(op, error, ctx);
    }
    // Some answers carry credentials (sts AssumeRole, RAM access keys): they never reach the session.
    const content = redactSecrets(JSON.stringify(answer), credentialSecrets(cloud.credentials));
    return { content, data: parsedOrText(content) };
  },
};
