// Per-turn runtime overrides read from message.metadata.iac_code (a2a-iaccode
// §6.3). They apply to one turn only and are never persisted. Values that do
// not parse are ignored rather than failing the turn, as the reference does;
// llm_headers alone is refused when unusable (headers a provider could not
// send, or would have to drop, must not pass silently).
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Language } from "../../../i18n/index.js";
import type { TurnOverrides } from "../../../runtime/seam.js";
import { llmHeadersProblem, MAX_LLM_HEADERS } from "../../../server/llm-headers.js";
import { invalidParams } from "../request/errors.js";

const TRUE_WORDS = new Set(["1", "true", "t", "yes", "y", "on", "enable", "enabled"]);
const FALSE_WORDS = new Set(["0", "false", "f", "no", "n", "off", "disable", "disabled"]);

function pick(meta: JsonObject, keys: string[]): JsonValue | undefined {
  for (const key of keys) if (meta[key] !== undefined && meta[key] !== null) return meta[key];
  return undefined;
}

function text(meta: JsonObject, ...keys: string[]): string | undefined {
  const value = pick(meta, keys);
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function flag(value: JsonValue | undefined): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (typeof value !== "string") return undefined;
  const word = value.trim().toLowerCase();
  return TRUE_WORDS.has(word) ? true : FALSE_WORDS.has(word) ? false : undefined;
}

function positiveInt(value: JsonValue | undefined): number | undefined {
  const n = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  return typeof n === "number" && Number.isInteger(n) && n > 0 ? n : undefined;
}

function thinkingFrom(meta: JsonObject): TurnOverrides["thinking"] {
  const nested = meta.thinking;
  const source: JsonObject = nested && typeof nested === "object" && !Array.isArray(nested) ? nested : {};
  // Nested keys first, then the flat aliases at the iac_code level.
  const enabled = flag(
    pick(source, ["enabled", "thinking_enabled", "thinkingEnabled"]) ??
      pick(meta, ["thinking_enabled", "thinkingEnabled"]),
  );
  const effort =
    text(source, "effort", "thinking_effort", "thinkingEffort") ??
    text(meta, "thinking_effort", "thinkingEffort");
  const budget = positiveInt(
    pick(source, ["budget", "thinking_budget", "thinkingBudget"]) ??
      pick(meta, ["thinking_budget", "thinkingBudget"]),
  );
  const thinking: NonNullable<TurnOverrides["thinking"]> = {};
  if (enabled !== undefined) thinking.enabled = enabled;
  if (effort !== undefined) thinking.effort = effort;
  if (budget !== undefined) thinking.budget = budget;
  return Object.keys(thinking).length > 0 ? thinking : undefined;
}

function alibabaCloudFrom(meta: JsonObject): TurnOverrides["alibabaCloud"] {
  const accessKeyId = text(meta, "alibaba_cloud_access_key_id");
  const accessKeySecret = text(meta, "alibaba_cloud_access_key_secret");
  // Request credentials count only as a pair; the region alone never switches accounts.
  if (!accessKeyId || !accessKeySecret) return undefined;
  const credentials: NonNullable<TurnOverrides["alibabaCloud"]> = { accessKeyId, accessKeySecret };
  const securityToken = text(meta, "alibaba_cloud_security_token");
  if (securityToken) credentials.securityToken = securityToken;
  const regionId = text(meta, "alibaba_cloud_region_id");
  if (regionId) credentials.regionId = regionId;
  return credentials;
}

const LLM_HEADERS_FIELD = "metadata.iac_code.llm_headers";

/** metadata.iac_code.llm_headers: an object of header name to value (even empty), or absent/null. */
function llmHeadersFrom(meta: JsonObject): Record<string, string> | undefined {
  const value = meta.llm_headers;
  if (value === undefined || value === null) return undefined;
  const problem = llmHeadersProblem(value);
  if (!problem) return { ...(value as Record<string, string>) };
  // The refusal names the header, never its value.
  switch (problem.reason) {
    case "type":
      throw invalidParams(`${LLM_HEADERS_FIELD} must be an object of header names to string values.`, {
        field: LLM_HEADERS_FIELD,
      });
    case "tooMany":
      throw invalidParams(`${LLM_HEADERS_FIELD} may hold at most ${MAX_LLM_HEADERS} headers.`, {
        field: LLM_HEADERS_FIELD,
      });
    case "name":
      throw invalidParams(`${LLM_HEADERS_FIELD} has a name that is not a valid HTTP header name.`, {
        field: LLM_HEADERS_FIELD,
      });
    case "value":
      throw invalidParams(`${LLM_HEADERS_FIELD}.${problem.name} must be a valid HTTP header value string.`, {
        field: `${LLM_HEADERS_FIELD}.${problem.name}`,
      });
    case "reserved":
      throw invalidParams(
        `${LLM_HEADERS_FIELD}.${problem.name} cannot be given: the model provider sets this header itself.`,
        { field: `${LLM_HEADERS_FIELD}.${problem.name}` },
      );
  }
}

/** The requested display language as sent (normalised later by i18n). */
export function preferredLanguageOf(meta: JsonObject): string | undefined {
  return text(meta, "preferredLanguage", "preferred_language");
}

export function turnOverridesFrom(meta: JsonObject, language: Language): TurnOverrides {
  const overrides: TurnOverrides = { language };
  const model = text(meta, "iac_code_model", "model");
  if (model) overrides.model = model;
  const apiKey = text(meta, "iac_code_api_key");
  if (apiKey) overrides.apiKey = apiKey;
  const llmHeaders = llmHeadersFrom(meta);
  if (llmHeaders) overrides.llmHeaders = llmHeaders;
  const thinking = thinkingFrom(meta);
  if (thinking) overrides.thinking = thinking;
  const alibabaCloud = alibabaCloudFrom(meta);
  if (alibabaCloud) overrides.alibabaCloud = alibabaCloud;
  const userId = text(meta, "user_id", "userId");
  if (userId) overrides.userId = userId;
  const channel = text(meta, "channel");
  if (channel) overrides.channel = channel.slice(0, 128);
  const runMode = text(meta, "run_mode", "runMode");
  if (runMode === "normal" || runMode === "pipeline") overrides.runMode = runMode;
  const pipelineName = text(meta, "pipeline_name", "pipelineName");
  if (pipelineName) overrides.pipelineName = pipelineName;
  if (meta.cleanupOnly === true) overrides.cleanupOnly = true;
  const presentation = text(meta, "candidatePresentation", "candidate_presentation");
  if (presentation) overrides.candidatePresentation = presentation;
  return overrides;
}
