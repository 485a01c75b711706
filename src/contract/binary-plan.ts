// The plans fast-binary.ts writes by: each message schema compiled once into
// its fields in number order, each with its tag bytes and how to write it
// (scalar, packed list, nested message, Struct, map). A schema using what the
// writer does not cover (wrapper types, maps not keyed by strings, delimited
// encoding) has no plan (null): toBinary writes it.
import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { planFields } from "./plan-values.js";

// Wire types.
const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;
const WRAPPERS = new Set(
  ["Double", "Float", "Int64", "UInt64", "Int32", "UInt32", "Bool", "String", "Bytes"].map(
    (name) => `google.protobuf.${name}Value`,
  ),
);

export interface FieldPlan {
  /** The tag as varint bytes. */
  tag: number[];
  localName: string;
  /** The oneof's property when the field belongs to one. */
  oneof?: string;
  implicit: boolean;
  kind: "scalar" | "message" | "struct" | "list" | "map";
  scalar: ScalarType;
  /** Repeated scalars of a numeric type: one packed LEN record. */
  packed: boolean;
  /** Repeated messages, a message field, or a map's message values. */
  message?: Plan;
  /** A map's value: its tag (field 2) and scalar type when it is not a message. */
  mapValue?: { tag: number[]; scalar: ScalarType };
}

export interface Plan {
  fields: FieldPlan[];
}

const plans = new WeakMap<DescMessage, Plan | null>();

export function planOf(desc: DescMessage): Plan | null {
  const known = plans.get(desc);
  if (known !== undefined) return known;
  // A recursive schema finds itself being planned: the object is filled below.
  const plan: Plan = { fields: [] };
  plans.set(desc, plan);
  if (!planFields(desc, plan.fields, fieldPlan)) {
    plans.set(desc, null);
    return null;
  }
  return plan;
}

export function tagBytes(number: number, wireType: number): number[] {
  const bytes: number[] = [];
  let value = (number << 3) | wireType;
  while (value > 127) {
    bytes.push((value & 127) | 128);
    value >>>= 7;
  }
  bytes.push(value);
  return bytes;
}

function wireTypeOf(scalar: ScalarType): number {
  switch (scalar) {
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return LEN;
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return FIXED64;
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return FIXED32;
    default:
      return VARINT;
  }
}

function fieldPlan(field: DescField): FieldPlan | null {
  const base = {
    localName: field.localName,
    oneof: field.oneof?.localName,
    implicit: field.presence === FeatureSet_FieldPresence.IMPLICIT,
    packed: false,
    scalar: ScalarType.INT32,
  };
  switch (field.fieldKind) {
    case "scalar":
      return {
        ...base,
        kind: "scalar",
        scalar: field.scalar,
        tag: tagBytes(field.number, wireTypeOf(field.scalar)),
      };
    case "enum":
      return { ...base, kind: "scalar", tag: tagBytes(field.number, VARINT) };
    case "message": {
      if (field.delimitedEncoding) return null;
      const typeName = field.message.typeName;
      if (typeName === "google.protobuf.Struct" && field.parent.typeName !== "google.protobuf.Value")
        return { ...base, kind: "struct", tag: tagBytes(field.number, LEN) };
      // Wrapper types are unwrapped in singular fields outside oneofs: toBinary writes those.
      if (WRAPPERS.has(typeName)) return null;
      const message = planOf(field.message);
      return message ? { ...base, kind: "message", message, tag: tagBytes(field.number, LEN) } : null;
    }
    case "list": {
      if (field.listKind === "message") {
        if (field.delimitedEncoding) return null;
        const message = planOf(field.message);
        return message ? { ...base, kind: "list", message, tag: tagBytes(field.number, LEN) } : null;
      }
      const scalar = field.listKind === "enum" ? ScalarType.INT32 : field.scalar;
      return field.packed
        ? { ...base, kind: "list", scalar, packed: true, tag: tagBytes(field.number, LEN) }
        : { ...base, kind: "list", scalar, tag: tagBytes(field.number, wireTypeOf(scalar)) };
    }
    case "map": {
      // Object keys are strings: a map keyed by numbers or booleans goes to toBinary.
      if (field.mapKey !== ScalarType.STRING) return null;
      const tag = tagBytes(field.number, LEN);
      if (field.mapKind === "message") {
        if (
          field.message.typeName.startsWith("google.protobuf.") &&
          field.message.typeName !== "google.protobuf.Value"
        )
          return null;
        const message = planOf(field.message);
        return message
          ? { ...base, kind: "map", message, tag, mapValue: { tag: tagBytes(2, LEN), scalar: base.scalar } }
          : null;
      }
      const scalar = field.mapKind === "enum" ? ScalarType.INT32 : field.scalar;
      return { ...base, kind: "map", tag, mapValue: { tag: tagBytes(2, wireTypeOf(scalar)), scalar } };
    }
  }
}
