// AG-UI 1.0 event shapes as this adapter emits them: camelCase, integer epoch-ms
// timestamps, optional fields left out (never null).
import type { AguiEvent, Interrupt, TokenUsage } from "../contract/index.js";

export type { AguiEvent };

/** One aggregated usage record of RUN_FINISHED / RUN_ERROR (the token-usage contract). */
export type UsageEntry = TokenUsage;

/** One message of MESSAGES_SNAPSHOT (the thread's conversation). */
export type SnapshotMessage = Extract<AguiEvent, { type: "MESSAGES_SNAPSHOT" }>["messages"][number];

/** The interrupt object of RUN_FINISHED's interrupt outcome (the interrupt contract). */
export type InterruptObject = Interrupt;

export const CUSTOM_SESSION = "iac-code.session.v1";
export const CUSTOM_ARTIFACT = "iac-code.artifact.v1";
export const CUSTOM_TOOL_PROGRESS = "iac-code.tool-progress.v1";
export const CUSTOM_PIPELINE = "iac-code.pipeline.v1";
/** The interrupt judge's events (interrupt_received, interrupt_classified) for guidance, outside §4.6's allowlist. */
export const CUSTOM_GUIDANCE = "iac-code.guidance.v1";
export const ACTIVITY_PIPELINE = "iac-code.pipeline.v1";

/** Drops keys whose value is undefined or null (AG-UI 1.0 rejects null optionals). */
export function compact<T extends Record<string, unknown>>(obj: T): T {
  const out: Record<string, unknown> = {};
  // for-in over an own-keys object literal: no entry arrays on the path of every event.
  for (const k in obj) {
    const v = obj[k];
    if (v !== undefined && v !== null) out[k] = v;
  }
  return out as T;
}

/** The value of a CUSTOM event (one of the iac-code custom payloads). */
export type CustomValue = Extract<AguiEvent, { type: "CUSTOM" }>["value"];

/** Recursively drops null/undefined object members (arrays keep their length); the shape is kept. */
export function dropNulls<T>(value: T): T {
  return dropNullsDeep(value) as T;
}

function dropNullsDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNullsDeep);
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined && v !== null) out[k] = dropNullsDeep(v);
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
