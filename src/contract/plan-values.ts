// What the plan-compiled encoders (fast-binary.ts, fast-protojson.ts) share:
// a message as the plans read it, and protobuf-es's notion of a zero value.
import { ScalarType } from "@bufbuild/protobuf";

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
