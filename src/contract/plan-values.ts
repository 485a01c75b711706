// What the plan-compiled codecs (fast-binary.ts, fast-protojson.ts,
// fast-protojson-decode.ts) share:
// a message as the plans read it, a schema's fields compiled in number order,
// and protobuf-es's notion of a zero value.
import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { Edition } from "@bufbuild/protobuf/wkt";

/** A protobuf-es message read by field name. */
export type Fields = Record<string, unknown>;

/**
 * The value a proto3 field without `optional` omits (protobuf-es's
 * isScalarZeroValue: -0 is not a zero; 64-bit integers may be 0n or "0").
 */
export function isZeroScalar(scalar: ScalarType, value: unknown): boolean {
  switch (scalar) {
    case ScalarType.BOOL:
      return value === false;
    case ScalarType.STRING:
      return value === "";
    case ScalarType.BYTES:
      return (value as Uint8Array).byteLength === 0;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return Object.is(value, 0);
    default:
      return value == 0;
  }
}

/** proto3: no field defaults on the message's prototype (proto2 and editions keep them there). */
export function isProto3(desc: DescMessage): boolean {
  return desc.file.edition === Edition.EDITION_PROTO3;
}

/**
 * Compiles a proto3 schema's fields, in field-number order (the order
 * protobuf-es writes them), into `into`; false when the schema is not proto3
 * (proto2 and editions keep defaults on the message's prototype) or a field
 * has no plan.
 */
export function planFields<F>(desc: DescMessage, into: F[], plan: (field: DescField) => F | null): boolean {
  if (!isProto3(desc)) return false;
  for (const field of [...desc.fields].sort((a, b) => a.number - b.number)) {
    const compiled = plan(field);
    if (!compiled) return false;
    into.push(compiled);
  }
  return true;
}

/** A field's value in a message (a oneof member's when its case is this field); undefined when absent. */
export function fieldValue(message: Fields, field: { oneof?: string; localName: string }): unknown {
  if (field.oneof === undefined) return message[field.localName];
  const oneof = message[field.oneof] as { case: string | undefined; value?: unknown };
  return oneof.case === field.localName ? oneof.value : undefined;
}
