// Per-request model headers (AG-UI forwardedProps.iacCode.llmHeaders, A2A
// metadata.iac_code.llm_headers): what a caller may send with one turn's model
// requests, for gateways that want a tenant, a trace id or a quota key. The
// same rules on both surfaces: names are HTTP tokens (RFC 9110 §5.6.2), values
// visible ASCII with spaces and tabs (no CR, LF or NUL: no header injection),
// at most 64 of them, and none of the headers the provider sets itself (its
// key, the body's type, the connection's own headers), so a request can add
// headers but never replace the provider's. The values are secrets: they live
// in the turn's memory only and no refusal repeats them.

/** An HTTP field name: a token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** An HTTP field value as fetch() sends it: visible ASCII, spaces and tabs. */
const VALUE = /^[\t\x20-\x7e]*$/;

export const MAX_LLM_HEADERS = 64;
export const MAX_LLM_HEADER_NAME = 256;
export const MAX_LLM_HEADER_VALUE = 8192;

/** Headers the providers set (auth, body, framing) or fetch() owns: a request never gives them. */
export const RESERVED_LLM_HEADERS: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "x-api-key",
  "api-key",
  "anthropic-version",
  "content-type",
  "content-length",
  "content-encoding",
  "accept",
  "accept-encoding",
  "host",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
]);

export type LlmHeadersProblem =
  { reason: "type" | "tooMany" } | { reason: "name" | "value" | "reserved"; name: string };

/**
 * Why a value is not a usable set of model headers (undefined: it is one).
 * `name` is the offending header's name (safe to show; never the value).
 */
export function llmHeadersProblem(value: unknown): LlmHeadersProblem | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { reason: "type" };
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_LLM_HEADERS) return { reason: "tooMany" };
  for (const [name, v] of entries) {
    if (!TOKEN.test(name) || name.length > MAX_LLM_HEADER_NAME) return { reason: "name", name };
    if (typeof v !== "string" || !VALUE.test(v) || v.length > MAX_LLM_HEADER_VALUE)
      return { reason: "value", name };
    if (RESERVED_LLM_HEADERS.has(name.toLowerCase())) return { reason: "reserved", name };
  }
  return undefined;
}

/**
 * The headers a provider adds to its requests: the valid entries, reserved
 * names dropped (whatever their case), as a second guard behind admission.
 */
export function forwardableLlmHeaders(value: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!value) return out;
  for (const [name, v] of Object.entries(value)) {
    if (TOKEN.test(name) && VALUE.test(v) && !RESERVED_LLM_HEADERS.has(name.toLowerCase())) out[name] = v;
  }
  return out;
}
