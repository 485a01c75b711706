// ProtoJSON of the messages every request answers with (tasks, stream
// events), equal to protobuf-es's toJson (implicit defaults omitted) at a
// fraction of its cost, the same way as fast-binary.ts: each schema compiled
// once into a plan of its fields in number order, a message walked once
// without the reflection layer (toJson turns a JsonObject metadata into
// google.protobuf.Struct messages and back). Bytes are base64 by Buffer.
// Anything the plan does not cover (Any, Duration, FieldMask, wrappers,
// proto2) and anything toJson would refuse (a non-finite number in a Struct,
// a Timestamp out of range) is handed to toJson, which answers or throws
// exactly as before.
import {
  ScalarType,
  toJson,
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type MessageShape,
} from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { fieldValue, isZeroScalar, planFields, type Fields } from "./plan-values.js";

interface FieldPlan {
  jsonName: string;
  localName: string;
  oneof?: string;
  implicit: boolean;
  kind: "scalar" | "enum" | "message" | "list" | "map";
  scalar: ScalarType;
  enum?: DescEnum;
  /** The value's plan when it is a message (a field, list items or map values). */
  message?: Plan;
}

type Plan =
  | { kind: "fields"; fields: FieldPlan[] }
  | { kind: "timestamp" }
  /** google.protobuf.Struct as a JsonObject (a field outside google.protobuf.Value). */
  | { kind: "json-struct" }
  /** google.protobuf.Struct, Value and ListValue as messages (inside google.protobuf.Value). */
  | { kind: "struct" }
  | { kind: "value" }
  | { kind: "list-value" };

/** toJson answers (or throws) for this message. */
class Unplanned extends Error {}

const plans = new WeakMap<DescMessage, Plan | null>();

function planOf(desc: DescMessage, parent?: DescMessage): Plan | null {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return { kind: "timestamp" };
    case "google.protobuf.Struct":
      return parent?.typeName === "google.protobuf.Value" ? { kind: "struct" } : { kind: "json-struct" };
    case "google.protobuf.Value":
      return { kind: "value" };
    case "google.protobuf.ListValue":
      return { kind: "list-value" };
  }
  if (desc.typeName.startsWith("google.protobuf.")) return null;
  const known = plans.get(desc);
  if (known !== undefined) return known;
  const plan: Plan = { kind: "fields", fields: [] };
  plans.set(desc, plan);
  if (!planFields(desc, plan.fields, fieldPlan)) {
    plans.set(desc, null);
    return null;
  }
  return plan;
}

function fieldPlan(field: DescField): FieldPlan | null {
  const base = {
    jsonName: field.jsonName,
    localName: field.localName,
    oneof: field.oneof?.localName,
    implicit: field.presence === FeatureSet_FieldPresence.IMPLICIT,
    scalar: ScalarType.INT32,
  };
  switch (field.fieldKind) {
    case "scalar":
      return { ...base, kind: "scalar", scalar: field.scalar };
    case "enum":
      return { ...base, kind: "enum", enum: field.enum };
    case "message": {
      const message = planOf(field.message, field.parent);
      return message ? { ...base, kind: "message", message } : null;
    }
    case "list": {
      if (field.listKind === "scalar") return { ...base, kind: "list", scalar: field.scalar };
      if (field.listKind === "enum") return { ...base, kind: "list", enum: field.enum };
      const message = planOf(field.message, field.parent);
      return message ? { ...base, kind: "list", message } : null;
    }
    case "map": {
      if (field.mapKind === "scalar") return { ...base, kind: "map", scalar: field.scalar };
      if (field.mapKind === "enum") return { ...base, kind: "map", enum: field.enum };
      const message = planOf(field.message, field.parent);
      return message ? { ...base, kind: "map", message } : null;
    }
  }
}

function scalarJson(scalar: ScalarType, value: unknown): JsonValue {
  switch (scalar) {
    case ScalarType.STRING:
      if (typeof value !== "string") throw new Unplanned();
      return value;
    case ScalarType.BOOL:
      if (typeof value !== "boolean") throw new Unplanned();
      return value;
    case ScalarType.BYTES:
      if (!(value instanceof Uint8Array)) throw new Unplanned();
      return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64");
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      if (typeof value !== "number") throw new Unplanned();
      if (Number.isNaN(value)) return "NaN";
      if (value === Infinity) return "Infinity";
      if (value === -Infinity) return "-Infinity";
      return value;
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      if (typeof value === "bigint" || typeof value === "string") return value.toString();
      if (typeof value === "number" && Number.isInteger(value)) return value.toString();
      throw new Unplanned();
    default:
      if (typeof value !== "number") throw new Unplanned();
      return value;
  }
}

function enumJson(desc: DescEnum, value: unknown): JsonValue {
  if (typeof value !== "number") throw new Unplanned();
  if (desc.typeName === "google.protobuf.NullValue") return null;
  return desc.value[value]?.name ?? value;
}

/** An object key that assigning sets as an own property ("__proto__" would set the prototype). */
function plainKey(key: string): string {
  if (key === "__proto__") throw new Unplanned();
  return key;
}

/** A copy of a JsonObject metadata, as toJson's round trip through Struct makes it (no undefined, finite numbers). */
function jsonCopy(value: unknown, depth: number): JsonValue {
  if (depth > 100) throw new Unplanned();
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw new Unplanned();
      return value;
    case "object": {
      if (value === null) return null;
      if (Array.isArray(value)) return value.map((item) => jsonCopy(item, depth + 1));
      const out: JsonObject = {};
      for (const key of Object.keys(value)) out[plainKey(key)] = jsonCopy((value as Fields)[key], depth + 1);
      return out;
    }
    default:
      throw new Unplanned();
  }
}

interface ValueMessage {
  kind: { case: string | undefined; value?: unknown };
}

function valueJson(value: ValueMessage): JsonValue {
  const kind = value.kind;
  switch (kind.case) {
    case "nullValue":
      return null;
    case "numberValue":
      if (!Number.isFinite(kind.value)) throw new Unplanned();
      return kind.value as number;
    case "boolValue":
    case "stringValue":
      return kind.value as boolean | string;
    case "structValue":
      return structJson(kind.value as { fields: Record<string, ValueMessage> });
    case "listValue":
      return (kind.value as { values: ValueMessage[] }).values.map(valueJson);
    default:
      throw new Unplanned();
  }
}

function structJson(struct: { fields: Record<string, ValueMessage> }): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(struct.fields)) out[plainKey(key)] = valueJson(struct.fields[key]);
  return out;
}

const MIN_TIMESTAMP_MS = Date.parse("0001-01-01T00:00:00Z");
const MAX_TIMESTAMP_MS = Date.parse("9999-12-31T23:59:59Z");

function timestampJson(timestamp: { seconds: bigint; nanos: number }): string {
  const ms = Number(timestamp.seconds) * 1000;
  const nanos = timestamp.nanos;
  if (!(ms >= MIN_TIMESTAMP_MS && ms <= MAX_TIMESTAMP_MS) || !(nanos >= 0 && nanos <= 999_999_999))
    throw new Unplanned();
  let fraction = "Z";
  if (nanos > 0) {
    const digits = (nanos + 1_000_000_000).toString().substring(1);
    if (digits.endsWith("000000")) fraction = `.${digits.substring(0, 3)}Z`;
    else if (digits.endsWith("000")) fraction = `.${digits.substring(0, 6)}Z`;
    else fraction = `.${digits}Z`;
  }
  return new Date(ms).toISOString().replace(".000Z", fraction);
}

function messageJson(plan: Plan, message: unknown): JsonValue {
  switch (plan.kind) {
    case "timestamp":
      return timestampJson(message as { seconds: bigint; nanos: number });
    case "json-struct":
      if (message === null || typeof message !== "object" || Array.isArray(message)) throw new Unplanned();
      return jsonCopy(message, 0);
    case "struct":
      return structJson(message as { fields: Record<string, ValueMessage> });
    case "value":
      return valueJson(message as ValueMessage);
    case "list-value":
      return (message as { values: ValueMessage[] }).values.map(valueJson);
    case "fields":
      return fieldsJson(plan.fields, message as Fields);
  }
}

function itemJson(field: FieldPlan, value: unknown): JsonValue {
  if (field.message) return messageJson(field.message, value);
  if (field.enum) return enumJson(field.enum, value);
  return scalarJson(field.scalar, value);
}

function fieldsJson(fields: FieldPlan[], message: Fields): JsonObject {
  const out: JsonObject = {};
  for (const field of fields) {
    const value = fieldValue(message, field);
    if (value === undefined) continue;
    switch (field.kind) {
      case "scalar":
        if (field.implicit && field.oneof === undefined && isZeroScalar(field.scalar, value)) continue;
        out[field.jsonName] = scalarJson(field.scalar, value);
        break;
      case "enum":
        if (field.implicit && field.oneof === undefined && value === field.enum!.values[0].number) continue;
        out[field.jsonName] = enumJson(field.enum!, value);
        break;
      case "message":
        out[field.jsonName] = messageJson(field.message!, value);
        break;
      case "list": {
        const items = value as unknown[];
        if (items.length === 0) continue;
        out[field.jsonName] = items.map((item) => itemJson(field, item));
        break;
      }
      case "map": {
        const entries = value as Fields;
        const keys = Object.keys(entries);
        if (keys.length === 0) continue;
        const json: JsonObject = {};
        for (const key of keys) json[plainKey(key)] = itemJson(field, entries[key]);
        out[field.jsonName] = json;
        break;
      }
    }
  }
  return out;
}

/** toJson(schema, message, { alwaysEmitImplicit: false }), without its reflection. */
export function encodeJson<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): JsonValue {
  const plan = planOf(schema);
  if (plan) {
    try {
      return messageJson(plan, message);
    } catch (error) {
      if (!(error instanceof Unplanned)) throw error;
    }
  }
  return toJson(schema, message, { alwaysEmitImplicit: false });
}
