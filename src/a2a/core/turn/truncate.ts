// Bounds for tool data in metadata.iac_code: every string cut to 4000
// characters, nesting cut at depth 32, non-JSON values stringified.
export const MAX_FIELD_CHARS = 4000;
export const MAX_DEPTH = 32;

export function truncateString(s: string, max = MAX_FIELD_CHARS): string {
  return s.length > max ? s.slice(0, max) : s;
}

export type JsonLike = null | boolean | number | string | JsonLike[] | { [key: string]: JsonLike };

export function boundJson(value: unknown, depth = 0): JsonLike {
  if (depth >= MAX_DEPTH) return "[truncated-depth]";
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return truncateString(value);
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (typeof value === "boolean") return value;
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return value.map((v) => boundJson(v, depth + 1));
  if (value instanceof Uint8Array) return `[${value.byteLength} bytes]`;
  if (typeof value === "object") {
    const out: Record<string, JsonLike> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      out[truncateString(k)] = boundJson(v, depth + 1);
    }
    return out;
  }
  return typeof value === "symbol" ? value.toString() : "[function]";
}
