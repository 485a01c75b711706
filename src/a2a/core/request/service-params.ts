// A2A service parameters: the A2A-Version gate and the A2A-Extensions list.
import { A2AError } from "./errors.js";

export const SUPPORTED_VERSION = "1.0";

/**
 * Accepts "1", "1.0" and "1.0.<patch>" (patch numbers are ignored). A missing or
 * empty header means 0.3, which this server does not offer (DECISIONS.md).
 */
export function checkVersion(header: string | undefined | null): void {
  const requested = (header ?? "").trim() || "0.3";
  if (/^1(\.0(\.\d+)?)?$/.test(requested)) return;
  throw new A2AError(
    "VersionNotSupportedError",
    `A2A version '${requested}' is not supported by this handler. Expected version '${SUPPORTED_VERSION}'.`,
    { requestedVersion: requested, supportedVersions: SUPPORTED_VERSION },
  );
}

/** Splits comma-separated (possibly repeated) A2A-Extensions values. */
export function parseExtensions(values: string | string[] | undefined | null): string[] {
  const list = Array.isArray(values) ? values : values ? [values] : [];
  return list
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
}

/** Throws ExtensionSupportRequiredError when a required extension was not requested. */
export function checkRequiredExtensions(required: readonly string[], requested: readonly string[]): void {
  const missing = required.filter((uri) => !requested.includes(uri)).sort();
  if (missing.length === 0) return;
  throw new A2AError(
    "ExtensionSupportRequiredError",
    `Required A2A extensions were not requested: ${missing.join(", ")}`,
    { extensions: missing.join(",") },
  );
}
