// ProtoJSON in and out for the A2A wire: lowerCamelCase names and enum names on
// output; camelCase or proto snake_case names accepted on input, unknown fields
// ignored (A2A 1.0 asks servers to tolerate them).
import {
  fromJson,
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonValue,
  type MessageShape,
} from "@bufbuild/protobuf";
import { encodeJson } from "./fast-protojson.js";
import { decodeJsonFast } from "./fast-protojson-decode.js";

export class ProtoJsonError extends Error {
  override readonly name = "ProtoJsonError";

  /** The offending field's path (`message.role`), when known. */
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

const fieldMaps = new WeakMap<DescMessage, Map<string, DescField>>();

/** A message's fields by JSON name and proto name. */
function fieldsOf(schema: DescMessage): Map<string, DescField> {
  let map = fieldMaps.get(schema);
  if (!map) {
    map = new Map();
    for (const field of schema.fields) map.set(field.jsonName, field).set(field.name, field);
    fieldMaps.set(schema, map);
  }
  return map;
}

/**
 * "UNRECOGNIZED" is what ts-proto clients (the @a2a-js/sdk one among them)
 * write for an enum left undefined: it means "not set", and decodes as unset.
 */
const UNSET_BY_TS_PROTO = "UNRECOGNIZED";

function checkEnumValue(desc: DescEnum, value: unknown, where: string): void {
  if (value === UNSET_BY_TS_PROTO) return;
  const known =
    typeof value === "string"
      ? desc.values.some((v) => v.name === value)
      : typeof value !== "number" || desc.values.some((v) => v.number === value);
  if (known) return;
  const allowed = desc.values.filter((v) => !v.name.endsWith("_UNSPECIFIED")).map((v) => v.name);
  throw new ProtoJsonError(
    `${where} has no value ${String(value).slice(0, 64)} (expected one of ${allowed.join(", ")})`,
    where,
  );
}

/**
 * Refuses enum values the schema does not have, at any depth: the decoder
 * would drop them silently (ignoreUnknownFields), so a filter would widen and
 * a wrong role read as a missing one. google.protobuf.* values are left to the decoder.
 */
function checkEnums(schema: DescMessage, json: unknown, path: string): void {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return;
  if (schema.typeName.startsWith("google.protobuf.")) return;
  const fields = fieldsOf(schema);
  for (const [key, value] of Object.entries(json as Record<string, unknown>)) {
    const field = fields.get(key);
    if (!field || value === null) continue;
    const where = path ? `${path}.${field.jsonName}` : field.jsonName;
    if (field.fieldKind === "enum") checkEnumValue(field.enum, value, where);
    else if (field.fieldKind === "message") checkEnums(field.message, value, where);
    else if (field.fieldKind === "list" && Array.isArray(value)) {
      value.forEach((item, i) => {
        if (field.listKind === "enum") checkEnumValue(field.enum, item, `${where}[${i}]`);
        else if (field.listKind === "message") checkEnums(field.message, item, `${where}[${i}]`);
      });
    } else if (field.fieldKind === "map" && typeof value === "object" && !Array.isArray(value)) {
      for (const [k, item] of Object.entries(value as Record<string, unknown>)) {
        if (field.mapKind === "enum") checkEnumValue(field.enum, item, `${where}.${k}`);
        else if (field.mapKind === "message") checkEnums(field.message, item, `${where}.${k}`);
      }
    }
  }
}

/**
 * Parses a ProtoJSON value into a message; throws ProtoJsonError with the
 * parser's reason. `strictEnums` (what a server asks of requests) also refuses
 * enum values the schema does not have, naming the field.
 */
export function decodeProtoJson<Desc extends DescMessage>(
  schema: Desc,
  json: unknown,
  options: { strictEnums?: boolean } = {},
): MessageShape<Desc> {
  // What the fast path decodes has known enum names only: strictEnums holds.
  const fast = decodeJsonFast(schema, json);
  if (fast) return fast;
  if (options.strictEnums) checkEnums(schema, json, "");
  try {
    return fromJson(schema, json as JsonValue, { ignoreUnknownFields: true });
  } catch (error) {
    throw new ProtoJsonError(error instanceof Error ? error.message : String(error));
  }
}

/** Canonical ProtoJSON of a message (implicit defaults omitted): toJson's, from a compiled plan. */
export function encodeProtoJson<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
): JsonValue {
  return encodeJson(schema, message);
}
