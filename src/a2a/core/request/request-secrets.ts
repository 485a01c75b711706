// Per-request secrets (metadata.iac_code.iac_code_api_key, the Alibaba Cloud
// AccessKey pair and STS token, the model headers llm_headers, and anything
// else named like a credential)
// serve one turn, in memory. The message a task keeps in its history, and so
// every answer that echoes it (streams, GetTask, ListTasks, after a restart
// too), is the request's message without them.
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { pb } from "../../../contract/index.js";
import { iacCode } from "../task-record.js";

/** metadata.iac_code keys that carry credentials a turn uses. */
export const CREDENTIAL_KEYS = [
  "iac_code_api_key",
  "alibaba_cloud_access_key_id",
  "alibaba_cloud_access_key_secret",
  "alibaba_cloud_security_token",
] as const;

/** Key names treated as secret wherever they appear in message metadata. */
const SECRET_NAME =
  /(?:api[_-]?key|secret|passw(?:or)?d|credential|(?:access|auth|bearer|id|refresh|security|session)[_-]?token|^token$|^authorization$|access[_-]?key|^llm[_-]?headers$)/i;

export function isSecretKey(key: string): boolean {
  return SECRET_NAME.test(key);
}

function withoutSecretKeys(value: JsonValue, depth: number): JsonValue {
  if (depth > 64 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => withoutSecretKeys(item, depth + 1));
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    if (!isSecretKey(key)) out[key] = withoutSecretKeys(item, depth + 1);
  }
  return out;
}

function cleanMetadata(metadata: JsonObject | undefined): JsonObject | undefined {
  return metadata && (withoutSecretKeys(metadata, 0) as JsonObject);
}

/** The message as it may be stored and echoed: secret-named metadata keys removed (message and parts). */
export function storableMessage(message: pb.Message): pb.Message {
  return {
    ...message,
    metadata: cleanMetadata(message.metadata),
    parts: message.parts.map((part) =>
      part.metadata ? { ...part, metadata: cleanMetadata(part.metadata) } : part,
    ),
  };
}

/**
 * Which credentials of CREDENTIAL_KEYS the message brings (names only), and
 * `llm_headers` when it names at least one model header (a turn resumed after
 * a restart needs them again as much as the key).
 */
export function credentialNamesOf(message: pb.Message): string[] {
  const iac = iacCode(message.metadata);
  const names: string[] = CREDENTIAL_KEYS.filter((key) => {
    const value = iac[key];
    return typeof value === "string" && value.trim() !== "";
  });
  const headers = iac.llm_headers;
  if (headers && typeof headers === "object" && !Array.isArray(headers) && Object.keys(headers).length > 0)
    names.push("llm_headers");
  return names;
}
