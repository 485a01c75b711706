// Error classes of the runtime and the redaction that keeps secrets out of
// logs and tool texts. A client only ever sees a fixed, localised text per
// error kind (plus an error id); the detail goes to the server log, redacted.
import type { RuntimeErrorKind } from "./seam.js";

/** Configuration that cannot work (unknown provider, unreadable settings, bad script). */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * A provider failure. `kind` decides what the client sees; `detail` is for
 * the logs only (status code, vendor message), never for clients.
 */
export class ProviderError extends Error {
  override name = "ProviderError";
  constructor(
    readonly kind: RuntimeErrorKind,
    readonly detail: string,
    readonly status?: number,
  ) {
    super(`${kind}: ${detail}`);
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
