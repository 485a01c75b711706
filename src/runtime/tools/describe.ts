// Shared permission-request descriptions, and how a read-only tool is classified.
import { t, type Language } from "../../i18n/index.js";
import type { ToolDescription } from "./types.js";

/** A read-only tool: a blanket rule may allow it, and it runs beside other calls. */
export const readOnlyPolicy = {
  supportsBlanketAllow: true,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
};

export function readOnlyDescription(tool: string, lang: Language, target?: string): ToolDescription {
  return {
    title: t(lang, "runtime.tool.generic.readTitle", { tool }),
    purpose: t(lang, "runtime.tool.generic.readPurpose", { tool }),
    effect: "read",
    ...(target !== undefined ? { target } : {}),
  };
}

/** Where a path argument points, for display: workspace-relative when it can be told without I/O. */
export function displayPath(input: unknown): string {
  if (typeof input !== "string" || input.length === 0) return "?";
  const cleaned = input.replace(/\\/g, "/");
  return cleaned.length > 200 ? `…${cleaned.slice(-199)}` : cleaned;
}
