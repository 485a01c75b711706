// ProtoJSON requests into messages, equal to protobuf-es's fromJson (unknown
// fields ignored) for what clients send every time: objects whose fields
// have the JSON types the schema asks for, enums by name. Each schema is
// compiled once into a table of its fields by JSON name and proto name. Any
// value the fast path is not sure of (null, a number for an enum, a string
// for an integer, bytes, 64-bit integers, timestamps, a field given twice, a
// second member of a oneof) makes it give up, and fromJson decodes the
// request (or refuses it, with its own message) as before.
import {
  create,
  ScalarType,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type MessageShape,
} from "@bufbuild/protobuf";
import { isProto3, type Fields } from "./plan-values.js";

/** The fast path gives up: fromJson decodes. */
const GIVE_UP = Symbol("give up");

interface FieldReader {
  field: DescField;
  /** Reads one value (a singular field's, a list item's, a map value's); GIVE_UP when unsure. */
  read: (json: unknown) => unknown;
}

interface Plan {
  desc: DescMessage;
  /** By JSON name and proto name; null for a field the fast path never reads (fromJson decodes a request using it). */
  byName: Map<string, FieldReader | null>;
}

const plans = new WeakMap<DescMessage, Plan | null>();

/** A lone surrogate: text fromJson refuses (invalid UTF-8) wherever it stands, keys included. */
const LONE_SURROGATE = /\p{Cs}/u;

class Unsure extends Error {}

const isObject = (json: unknown): json is Fields =>
  json !== null && typeof json === "object" && !Array.isArray(json);

function planOf(desc: DescMessage): Plan | null {
  const known = plans.get(desc);
  if (known !== undefined) return known;
  if (desc.typeName.startsWith("google.protobuf.") || !isProto3(desc)) {
    plans.set(desc, null);
    return null;
  }
  const plan: Plan = { desc, byName: new Map() };
  plans.set(desc, plan);
  for (const field of desc.fields) {
    const read = readerOf(field);
    const reader = read ? { field, read } : null;
    plan.byName.set(field.jsonName, reader).set(field.name, reader);
  }
  return plan;
}

function scalarReader(scalar: ScalarType): ((json: unknown) => unknown) | undefined {
  switch (scalar) {
    case ScalarType.STRING:
      return (json) => (typeof json === "string" && !LONE_SURROGATE.test(json) ? json : GIVE_UP);
    case ScalarType.BOOL:
      return (json) => (typeof json === "boolean" ? json : GIVE_UP);
    case ScalarType.DOUBLE:
      return (json) => (typeof json === "number" ? json : GIVE_UP);
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return (json) =>
        typeof json === "number" && Number.isInteger(json) && json >= -0x80000000 && json <= 0x7fffffff
          ? json
          : GIVE_UP;
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return (json) =>
        typeof json === "number" && Number.isInteger(json) && json >= 0 && json <= 0xffffffff
          ? json
          : GIVE_UP;
    default:
      return undefined; // float (range), 64-bit integers, bytes
  }
}

function readerOf(field: DescField): ((json: unknown) => unknown) | undefined {
  const item = itemReader(field);
  if (!item) return undefined;
  switch (field.fieldKind) {
    case "list":
      return (json) => {
        if (!Array.isArray(json)) return GIVE_UP;
        const out: unknown[] = [];
        for (const value of json) {
          const read = item(value);
          if (read === GIVE_UP) return GIVE_UP;
          out.push(read);
        }
        return out;
      };
    case "map":
      if (field.mapKey !== ScalarType.STRING) return undefined;
      return (json) => {
        if (!isObject(json)) return GIVE_UP;
        const out: Fields = {};
        for (const key of Object.keys(json)) {
          if (LONE_SURROGATE.test(key) || key === "__proto__") return GIVE_UP;
          const read = item(json[key]);
          if (read === GIVE_UP) return GIVE_UP;
          out[key] = read;
        }
        return out;
      };
    default:
      return item;
  }
}

/** How one value of the field is read (the field's own for a singular one, an item's for a list or map). */
function itemReader(field: DescField): ((json: unknown) => unknown) | undefined {
  const kind =
    field.fieldKind === "list" ? field.listKind : field.fieldKind === "map" ? field.mapKind : field.fieldKind;
  if (kind === "scalar") return scalarReader(field.scalar!);
  if (kind === "enum") {
    const values = new Map(field.enum!.values.map((v) => [v.name, v.number]));
    return (json) => (typeof json === "string" ? (values.get(json) ?? GIVE_UP) : GIVE_UP);
  }
  const message = field.message!;
  if (message.typeName === "google.protobuf.Struct" && field.fieldKind === "message")
    return (json) => (isObject(json) ? jsonCopy(json) : GIVE_UP);
  if (message.typeName === "google.protobuf.Value" && field.fieldKind !== "map") return valueMessage;
  if (message.typeName.startsWith("google.protobuf.")) return undefined;
  return (json) => {
    const plan = planOf(message);
    return plan && isObject(json) ? readMessage(plan, json) : GIVE_UP;
  };
}

/** A Struct field's JsonObject: a copy of the parsed JSON (which holds JSON values only). */
function jsonCopy(json: Fields): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(json)) out[checkedKey(key)] = jsonValueCopy(json[key]);
  return out;
}

function jsonValueCopy(json: unknown): JsonValue {
  if (Array.isArray(json)) return json.map(jsonValueCopy);
  if (typeof json === "string") return checkedText(json);
  return isObject(json) ? jsonCopy(json) : (json as JsonValue);
}

function checkedText(text: string): string {
  if (LONE_SURROGATE.test(text)) throw new Unsure();
  return text;
}

/** A key assigning sets as an own property ("__proto__" would set the prototype). */
function checkedKey(key: string): string {
  if (key === "__proto__") throw new Unsure();
  return checkedText(key);
}

/** google.protobuf.Value as fromJson builds it (the message form, in Part.data). */
function valueMessage(json: unknown): unknown {
  const kind = valueKind(json);
  return { $typeName: "google.protobuf.Value", kind };
}

function valueKind(json: unknown): { case: string; value: unknown } {
  switch (typeof json) {
    case "number":
      return { case: "numberValue", value: json };
    case "string":
      return { case: "stringValue", value: checkedText(json) };
    case "boolean":
      return { case: "boolValue", value: json };
  }
  if (json === null) return { case: "nullValue", value: 0 };
  if (Array.isArray(json))
    return {
      case: "listValue",
      value: { $typeName: "google.protobuf.ListValue", values: json.map(valueMessage) },
    };
  const fields: Fields = {};
  for (const key of Object.keys(json as Fields))
    fields[checkedKey(key)] = valueMessage((json as Fields)[key]);
  return { case: "structValue", value: { $typeName: "google.protobuf.Struct", fields } };
}

function readMessage(plan: Plan, json: Fields): unknown {
  const message = create(plan.desc) as unknown as Fields;
  const seen = new Set<DescField>();
  for (const key of Object.keys(json)) {
    const reader = plan.byName.get(key);
    if (reader === null) return GIVE_UP;
    if (reader === undefined) continue; // an unknown field (ignored)
    const { field } = reader;
    if (seen.has(field)) return GIVE_UP;
    seen.add(field);
    const value = json[key];
    // null clears a field, except a google.protobuf.Value's (its null value).
    if (value === null && field.message?.typeName !== "google.protobuf.Value") return GIVE_UP;
    const read = reader.read(value);
    if (read === GIVE_UP) return GIVE_UP;
    if (field.oneof) {
      const oneof = message[field.oneof.localName] as { case: string | undefined };
      if (oneof.case !== undefined) return GIVE_UP;
      message[field.oneof.localName] = { case: field.localName, value: read };
    } else message[field.localName] = read;
  }
  return message;
}

/** fromJson(schema, json, { ignoreUnknownFields: true }) when the fast path is sure of it; undefined otherwise. */
export function decodeJsonFast<Desc extends DescMessage>(
  schema: Desc,
  json: unknown,
): MessageShape<Desc> | undefined {
  const plan = planOf(schema);
  if (!plan || !isObject(json)) return undefined;
  try {
    const message = readMessage(plan, json);
    return message === GIVE_UP ? undefined : (message as MessageShape<Desc>);
  } catch (error) {
    if (error instanceof Unsure) return undefined;
    throw error;
  }
}
