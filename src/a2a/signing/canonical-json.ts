// RFC 8785 JSON Canonicalization Scheme (JCS) and the canonical form of an agent
// card that a signature covers (A2A spec §8.4.1).
import { decodeProtoJson, encodeProtoJson, pb } from "../../contract/index.js";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Serialises a JSON value per RFC 8785. ECMAScript's number and string
 * serialisation is exactly what JCS prescribes, and the default string sort
 * compares UTF-16 code units, which is the JCS key order.
 */
export function canonicalizeJson(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError("JCS: numbers must be finite");
      return JSON.stringify(value);
    case "string":
      if (LONE_SURROGATE.test(value)) throw new TypeError("JCS: strings must be well-formed Unicode");
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) return `[${value.map((item: unknown) => canonicalizeJson(item)).join(",")}]`;
      const record = value as Record<string, unknown>;
      const members: string[] = [];
      for (const key of Object.keys(record).sort()) {
        const member = record[key];
        if (member === undefined) continue;
        members.push(`${canonicalizeJson(key)}:${canonicalizeJson(member)}`);
      }
      return `{${members.join(",")}}`;
    }
    default:
      throw new TypeError(`JCS: cannot serialise a ${typeof value}`);
  }
}

/** Drops empty strings, arrays and objects, innermost first (they carry no meaning in ProtoJSON). */
function withoutEmpties(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(withoutEmpties).filter((item) => item !== undefined);
    return items.length === 0 ? undefined : items;
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      const kept = withoutEmpties(member);
      if (kept !== undefined) out[key] = kept;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  if (value === "") return undefined;
  return value;
}

/**
 * The bytes a card signature covers: the card read as an A2A 1.0 AgentCard
 * (fields outside the schema dropped, defaults omitted), without `signatures`,
 * empty values removed, serialised with JCS. Signing and verification both go
 * through here, so two ProtoJSON emitters that differ only in defaults agree.
 */
export function canonicalCardPayload(card: unknown): string {
  const message = decodeProtoJson(pb.AgentCardSchema, card);
  const json = encodeProtoJson(pb.AgentCardSchema, message) as Record<string, unknown>;
  delete json.signatures;
  return canonicalizeJson(withoutEmpties(json) ?? {});
}
