// Turning an admitted RunAgentInput into what A2A receives: the resolved
// workspace, the parts of the last user message (text and inline images within
// their limits) and metadata.iac_code (secrets forwarded, never stored).
import { isObject, type JsonObject } from "../upstream/a2a-items.js";
import { AguiError, MSG, type MessageKey } from "../errors.js";
import { compact } from "../events.js";
import type { IacCodeProps } from "../../contract/index.js";
import { isStrictBase64 } from "../../server/base64.js";
import { isPortableFileName } from "../../server/file-names.js";
import {
  checkWorkspace,
  defaultRoots,
  existingRoots,
  rootList,
  type WorkspaceRefusal,
} from "../../server/workspace-roots.js";
import { expandUserPath } from "../../server/paths.js";
import { llmHeadersProblem, MAX_LLM_HEADERS } from "../../server/llm-headers.js";

export const REQUEST_LIMIT = 12 * 1024 * 1024;
export const IMAGE_LIMIT = 8 * 1024 * 1024;
export const IMAGES_TOTAL_LIMIT = 10 * 1024 * 1024;
export const CANCEL_BODY_LIMIT = 64 * 1024;

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** The iacCode extension as validated by the contract. */
export type IacCode = IacCodeProps;

/** Allowed workspace roots: configured, else the env lists, else <config-dir>/workspace, the process cwd and temp dir. */
export function allowedRoots(
  configured: string[] | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  if (configured?.length) return existingRoots(configured);
  const listed = rootList(env.IAC_CODE_AGUI_ALLOWED_CWDS || env.IACCODE_A2A_ALLOWED_CWDS, []);
  return existingRoots(listed.length > 0 ? listed : defaultRoots(process.cwd(), env));
}

const WORKSPACE_MESSAGES: Record<WorkspaceRefusal, MessageKey> = {
  notAbsolute: MSG.workspaceNotAbsolute,
  invalid: MSG.workspaceInvalid,
  outsideRoots: MSG.workspaceOutsideRoots,
  missing: MSG.workspaceMissing,
  notDirectory: MSG.workspaceNotDirectory,
};

/**
 * Resolves the requested workspace (a leading ~ expanded) by the rule both
 * protocols share; a refusal is an INVALID_INPUT naming forwardedProps.iacCode.cwd.
 */
export function resolveWorkspace(cwd: string, roots: string[]): string {
  const checked = checkWorkspace(expandUserPath(cwd), roots);
  if (checked.ok) return checked.path;
  throw new AguiError("INVALID_INPUT", WORKSPACE_MESSAGES[checked.reason], {
    field: "forwardedProps.iacCode.cwd",
  });
}

const LLM_HEADERS_FIELD = "forwardedProps.iacCode.llmHeaders";

/**
 * Refuses llmHeaders the providers could not send or must not take (the
 * contract already checked the types): INVALID_INPUT naming the header, never
 * repeating its value.
 */
export function checkLlmHeaders(iac: IacCode): void {
  if (iac.llmHeaders === undefined || iac.llmHeaders === null) return;
  const problem = llmHeadersProblem(iac.llmHeaders);
  if (!problem) return;
  if (!("name" in problem)) {
    throw new AguiError("INVALID_INPUT", MSG.llmHeadersTooMany, {
      field: LLM_HEADERS_FIELD,
      limit: String(MAX_LLM_HEADERS),
    });
  }
  const key =
    problem.reason === "name"
      ? MSG.llmHeaderName
      : problem.reason === "value"
        ? MSG.llmHeaderValue
        : MSG.llmHeaderReserved;
  throw new AguiError("INVALID_INPUT", key, { field: `${LLM_HEADERS_FIELD}.${problem.name}` });
}

/** The last message with role user, if any. */
export function lastUserMessage(messages: unknown[]): JsonObject | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (isObject(m) && m.role === "user") return m;
  }
  return undefined;
}

function decodedSize(b64: string): number {
  const pad = b64.endsWith("==") ? 2 : b64.endsWith("=") ? 1 : 0;
  return (b64.length / 4) * 3 - pad;
}

/**
 * Checks the user message content and builds the A2A parts: text parts and
 * inline images (raw bytes as base64). Throws AguiError INVALID_INPUT.
 */
export function userParts(message: JsonObject): JsonObject[] {
  const content = message.content;
  if (typeof content === "string") {
    if (content.trim() === "") throw new AguiError("INVALID_INPUT", MSG.userMessageEmpty);
    return [{ text: content }];
  }
  if (!Array.isArray(content)) throw new AguiError("INVALID_INPUT", MSG.contentInvalid);
  const parts: JsonObject[] = [];
  let total = 0;
  for (const part of content) {
    if (!isObject(part)) throw new AguiError("INVALID_INPUT", MSG.contentInvalid);
    if (part.type === "text") {
      parts.push({ text: typeof part.text === "string" ? part.text : "" });
      continue;
    }
    if (part.type !== "image") throw new AguiError("INVALID_INPUT", MSG.onlyTextAndImages);
    const source = isObject(part.source) ? part.source : {};
    if (source.type !== "data") throw new AguiError("INVALID_INPUT", MSG.remoteMedia);
    const mediaType = typeof source.mimeType === "string" ? source.mimeType.toLowerCase() : "";
    if (!IMAGE_TYPES.has(mediaType)) throw new AguiError("INVALID_INPUT", MSG.imageMediaType);
    const value = typeof source.value === "string" ? source.value : "";
    if (!value || !isStrictBase64(value)) throw new AguiError("INVALID_INPUT", MSG.imageBase64);
    const size = decodedSize(value);
    if (size > IMAGE_LIMIT) throw new AguiError("INVALID_INPUT", MSG.imageTooLarge);
    total += size;
    if (total > IMAGES_TOTAL_LIMIT) throw new AguiError("INVALID_INPUT", MSG.imagesTooLarge);
    const meta = isObject(part.metadata) ? part.metadata : {};
    const filename = isPortableFileName(meta.filename) ? meta.filename : `agui-image-${parts.length + 1}`;
    parts.push({ raw: value, mediaType, filename });
  }
  if (parts.length === 0) throw new AguiError("INVALID_INPUT", MSG.contentInvalid);
  if (parts.every((p) => typeof p.text === "string" && p.text.trim() === ""))
    throw new AguiError("INVALID_INPUT", MSG.userMessageEmpty);
  return parts;
}

function trimmed(v: string | null | undefined): string | undefined {
  const s = typeof v === "string" ? v.trim() : "";
  return s || undefined;
}

/** metadata.iac_code of every A2A message the adapter sends for a run. */
export function iacMetadata(iac: IacCode, cwd: string, language: string): JsonObject {
  const thinking = iac.thinking
    ? compact({
        enabled: iac.thinking.enabled,
        effort: trimmed(iac.thinking.effort),
        budget:
          typeof iac.thinking.budget === "number" && iac.thinking.budget > 0
            ? iac.thinking.budget
            : undefined,
      })
    : undefined;
  const cloud = iac.alibabaCloud ?? {};
  return compact({
    cwd,
    iac_code_model: trimmed(iac.model),
    iac_code_api_key: trimmed(iac.llmApiKey),
    // Forwarded as given, an empty object too (agui-iaccode.md §3.2); null is "not given".
    llm_headers: iac.llmHeaders ?? undefined,
    thinking: thinking && Object.keys(thinking).length ? thinking : undefined,
    user_id: iac.userId ?? undefined,
    channel: iac.channel ?? undefined,
    preferredLanguage: language,
    candidatePresentation: iac.candidatePresentation ?? undefined,
    run_mode: iac.runMode ?? undefined,
    pipeline_name: iac.pipelineName ?? undefined,
    cleanupOnly: iac.cleanupOnly === true,
    rosInvocationId: iac.rosInvocationId,
    alibaba_cloud_access_key_id: cloud.accessKeyId ?? undefined,
    alibaba_cloud_access_key_secret: cloud.accessKeySecret ?? undefined,
    alibaba_cloud_security_token: cloud.securityToken ?? undefined,
    alibaba_cloud_region_id: cloud.regionId ?? undefined,
  });
}
