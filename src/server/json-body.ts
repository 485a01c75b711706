// JSON request bodies read safely: bounded in bytes while they stream in,
// strict UTF-8, and bounded in nesting depth and in number of values before
// JSON.parse builds anything, so hostile input is refused with a clear reason
// instead of reaching recursive validators (a stack overflow) or filling memory.
// Every HTTP entry point (AG-UI, A2A JSON-RPC and HTTP+JSON) reads through here.
import type { IncomingMessage } from "node:http";
import { readBoundedBody, TOO_LARGE } from "./bounded-body.js";

/** Deepest accepted nesting of arrays and objects. */
export const MAX_JSON_DEPTH = 64;
/** Most values (array elements, object members, containers) in one body. */
export const MAX_JSON_VALUES = 500_000;

export type JsonBodyFailure =
  | "too-large"
  | "not-utf8"
  | "invalid-json"
  | "too-deep"
  | "too-many-values"
  /** The client went away or the request timeout dropped it: nobody is left to answer. */
  | "aborted";

export type JsonBody =
  | { ok: true; /** undefined for an empty (or all-whitespace) body */ value: unknown }
  | { ok: false; failure: JsonBodyFailure; /** English, safe to send to the client */ message: string };

export interface JsonLimits {
  maxBytes: number;
  maxDepth?: number;
  maxValues?: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Index of the quote that closes the string opened just before `start`, or -1. */
function closingQuote(text: string, start: number): number {
  let from = start;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let slash = quote - 1;
    while (slash >= start && text.charCodeAt(slash) === 0x5c) slash--;
    // An even run of backslashes escapes itself, not the quote.
    if ((quote - 1 - slash) % 2 === 0) return quote;
    from = quote + 1;
  }
}

/**
 * Scans JSON text for its nesting depth and value count without parsing it
 * (string contents are skipped with indexOf). Malformed text is left for
 * JSON.parse to report; only the two limits are judged here.
 */
export function jsonShapeFailure(
  text: string,
  maxDepth = MAX_JSON_DEPTH,
  maxValues = MAX_JSON_VALUES,
): "too-deep" | "too-many-values" | undefined {
  let depth = 0;
  let values = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = closingQuote(text, i + 1);
      if (i < 0) return undefined;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return "too-deep";
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    } else if (c === 0x2c || c === 0x3a) {
      // A comma starts one more element or member; a colon one more member value.
      if (++values > maxValues) return "too-many-values";
    }
  }
  return undefined;
}

/** Parses JSON text within the depth and value limits. */
export function parseJsonText(text: string, limits: Omit<JsonLimits, "maxBytes"> = {}): JsonBody {
  if (text.trim() === "") return { ok: true, value: undefined };
  const maxDepth = limits.maxDepth ?? MAX_JSON_DEPTH;
  const maxValues = limits.maxValues ?? MAX_JSON_VALUES;
  const shape = jsonShapeFailure(text, maxDepth, maxValues);
  if (shape === "too-deep")
    return { ok: false, failure: shape, message: `JSON nested deeper than ${maxDepth} levels` };
  if (shape === "too-many-values")
    return { ok: false, failure: shape, message: `JSON with more than ${maxValues} values` };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, failure: "invalid-json", message: "Invalid JSON payload" };
  }
}

/** Reads and parses a request body within `limits`; never throws for what the client sent. */
export async function readJsonBody(req: IncomingMessage, limits: JsonLimits): Promise<JsonBody> {
  let raw: Buffer | typeof TOO_LARGE;
  try {
    raw = await readBoundedBody(req, limits.maxBytes);
  } catch {
    return { ok: false, failure: "aborted", message: "The request body was not received in full" };
  }
  if (raw === TOO_LARGE)
    return { ok: false, failure: "too-large", message: `Payload larger than ${limits.maxBytes} bytes` };
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return { ok: false, failure: "not-utf8", message: "The body is not valid UTF-8" };
  }
  return parseJsonText(text, limits);
}
