// Error classes of the runtime and the redaction that keeps secrets out of
// logs and tool texts. A client only ever sees a fixed, localised text per
// error kind (plus an error id); the detail goes to the server log, redacted.
import type { RuntimeErrorCode, RuntimeErrorKind } from "./seam.js";

/** Configuration that cannot work (unknown provider, unreadable settings, bad script). */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * A provider failure. `kind` says whether retrying may help, `code` what the
 * client is told; `detail` and `endpoint` (host:port) are for the logs only
 * (status code, vendor message), never for clients.
 */
export class ProviderError extends Error {
  override name = "ProviderError";
  readonly code: RuntimeErrorCode;
  constructor(
    readonly kind: RuntimeErrorKind,
    readonly detail: string,
    readonly status?: number,
    code?: RuntimeErrorCode,
    readonly endpoint?: string,
  ) {
    super(`${kind}: ${detail}`);
    this.code = code ?? errorCodeFor(kind, status);
  }
}

/** The code of a failure that names none: by kind, and 429 as rate limiting. */
export function errorCodeFor(kind: RuntimeErrorKind, status?: number): RuntimeErrorCode {
  if (kind === "authentication") return "MODEL_AUTHENTICATION_FAILED";
  if (status === 429) return "MODEL_RATE_LIMITED";
  // A 404 is a model name or a base URL that is wrong: the client text names both settings.
  if (status === 404) return "MODEL_NOT_FOUND";
  return kind === "retryable" ? "MODEL_UNAVAILABLE" : "MODEL_REQUEST_REJECTED";
}

/** The i18n key of each failure's client text (errors domain; `{errorId}` ties it to the log line). */
export const ERROR_CODE_MESSAGES: Record<RuntimeErrorCode, string> = {
  MODEL_UNREACHABLE: "model.error.unreachable",
  MODEL_AUTHENTICATION_FAILED: "model.error.authentication",
  MODEL_RATE_LIMITED: "model.error.rateLimited",
  MODEL_UNAVAILABLE: "model.error.unavailable",
  MODEL_REQUEST_REJECTED: "model.error.rejected",
  MODEL_NOT_FOUND: "model.error.notFound",
  RUNTIME_ERROR: "turn.error.internal",
};

/** host:port of a URL (for log lines; never sent to clients). */
export function endpointOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol === "https:" ? "443" : "80");
    return `${u.hostname}:${port}`;
  } catch {
    return undefined;
  }
}

/** A tool failure whose message is safe to hand to the model and to clients. */
export class ToolError extends Error {
  override name = "ToolError";
}

/** An answer that does not fit the pending input request; the input stays pending. */
export class InvalidInputAnswerError extends Error {
  override name = "InvalidInputAnswerError";
}

export function isAbortError(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === "AbortError" || (error as NodeJS.ErrnoException).code === "ABORT_ERR")
  );
}

const SECRET_PATTERNS: Array<[RegExp, string]> = [
  [/(authorization\s*[:=]\s*)(bearer\s+)?[^\s,;"']+/gi, "$1[REDACTED]"],
  [/\bbearer\s+[A-Za-z0-9._~+/=-]{8,}/gi, "Bearer [REDACTED]"],
  [/(x-acs-[a-z-]*(signature|token)[a-z-]*\s*[:=]\s*)[^\s,;"']+/gi, "$1[REDACTED]"],
  [/(Signature=)[A-Za-z0-9+/=%]+/g, "$1[REDACTED]"],
  [/\bsk-[A-Za-z0-9_-]{8,}/g, "sk-[REDACTED]"],
  [/\bsk-ant-[A-Za-z0-9_-]{8,}/g, "sk-ant-[REDACTED]"],
  [/\b(LTAI|AKIA|STS\.)[A-Za-z0-9]{8,}/g, "$1[REDACTED]"],
  [
    /\b((?:api[_-]?key|apikey|secret|password|passwd|token|access[_-]?key[_-]?secret|security[_-]?token)["']?\s*[:=]\s*["']?)[^\s,;"'&]+/gi,
    "$1[REDACTED]",
  ],
];

/** Removes credentials from a text (for logs and model-facing tool errors). */
export function redactSecrets(text: string, extraSecrets: readonly string[] = []): string {
  let out = text;
  for (const secret of extraSecrets) {
    if (secret.length >= 4) out = out.split(secret).join("[REDACTED]");
  }
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : JSON.stringify(error);
}
