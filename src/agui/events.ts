// AG-UI 1.0 event shapes as this adapter emits them: camelCase, integer epoch-ms
// timestamps, optional fields left out (never null).
import type { JsonObject } from "./a2a-items.js";

export interface AguiEvent {
  type: string;
  timestamp: number;
  [key: string]: unknown;
}

export interface UsageEntry {
  provider?: string;
  model?: string;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cachedInputTokens?: number;
}

export interface InterruptObject {
  id: string;
  reason: "tool_call" | "input_required";
  message: string;
  toolCallId?: string;
  responseSchema: JsonObject;
  expiresAt: string;
  metadata: JsonObject;
}

export const CUSTOM_SESSION = "iac-code.session.v1";
export const CUSTOM_ARTIFACT = "iac-code.artifact.v1";
export const CUSTOM_TOOL_PROGRESS = "iac-code.tool-progress.v1";
export const CUSTOM_PIPELINE = "iac-code.pipeline.v1";
export const ACTIVITY_PIPELINE = "iac-code.pipeline.v1";

/** Drops keys whose value is undefined or null (AG-UI 1.0 rejects null optionals). */
export function compact<T extends Record<string, unknown>>(obj: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined && v !== null) out[k] = v;
  return out as T;
}

/** Recursively drops null/undefined object members (arrays keep their length). */
export function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined && v !== null) out[k] = dropNulls(v);
    return out;
  }
  return value;
}

/** Canonical JSON: keys sorted recursively, no spaces (request and answer digests). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
