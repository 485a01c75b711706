// Non-finite numbers (JSON `1e400` parses as Infinity; binary doubles may be
// NaN) cannot be written back as ProtoJSON: one in a stored task would break
// every answer that includes it. Requests carrying one are refused at decode,
// and the store checks what it reads back.
import { invalidParams, type A2AError } from "./errors.js";

const MAX_DEPTH = 200;

/** Path of `key` below `parent`, in the JSON form a client wrote. */
function child(parent: string, key: string): string {
  return parent === "" ? key : `${parent}.${key}`;
}

/**
 * The path of the first non-finite number in a decoded protobuf-es message
 * (or plain JSON), named as in ProtoJSON: google.protobuf.Value/Struct add no
 * segment, a oneof is named by its case. undefined when every number is finite.
 */
export function nonFinitePath(value: unknown, at = "", depth = 0): string | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : at || "(root)";
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return undefined;
  if (value instanceof Uint8Array) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nonFinitePath(value[i], `${at}[${i}]`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  const record = value as Record<string, unknown>;
  const typeName = record.$typeName;
  if (typeName === "google.protobuf.Value") {
    const kind = record.kind as { value?: unknown } | undefined;
    return nonFinitePath(kind?.value, at, depth + 1);
  }
  if (typeName === "google.protobuf.Struct") return nonFinitePath(record.fields, at, depth + 1);
  if (typeName === "google.protobuf.ListValue") return nonFinitePath(record.values, at, depth + 1);
  for (const key of Object.keys(record)) {
    if (key === "$typeName") continue;
    const item = record[key];
    // A oneof ({case, value}) appears in ProtoJSON under its case's name.
    const found = isOneof(item)
      ? nonFinitePath(item.value, child(at, item.case), depth + 1)
      : nonFinitePath(item, child(at, key), depth + 1);
    if (found) return found;
  }
  return undefined;
}

function isOneof(value: unknown): value is { case: string; value: unknown } {
  if (!value || typeof value !== "object" || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return (
    keys.length === 2 && typeof (value as { case?: unknown }).case === "string" && keys.includes("value")
  );
}

/** InvalidParams naming the field, when the request holds a non-finite number. */
export function nonFiniteError(request: unknown): A2AError | undefined {
  const path = nonFinitePath(request);
  if (!path) return undefined;
  return invalidParams(
    `Invalid params: ${path} is not a finite number (NaN, Infinity and overflowing values such as 1e400 are refused)`,
    { field: path },
  );
}
