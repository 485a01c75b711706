// ProtoJSON in and out for the A2A wire: lowerCamelCase names and enum names on
// output; camelCase or proto snake_case names accepted on input, unknown fields
// ignored (A2A 1.0 asks servers to tolerate them).
import { fromJson, toJson, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";

export class ProtoJsonError extends Error {
  override readonly name = "ProtoJsonError";
}

/** Parses a ProtoJSON value into a message; throws ProtoJsonError with the parser's reason. */
export function decodeProtoJson<Desc extends DescMessage>(schema: Desc, json: unknown): MessageShape<Desc> {
  try {
    return fromJson(schema, json as JsonValue, { ignoreUnknownFields: true });
  } catch (error) {
    throw new ProtoJsonError(error instanceof Error ? error.message : String(error));
  }
}

/** Canonical ProtoJSON of a message (implicit defaults omitted). */
export function encodeProtoJson<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
): JsonValue {
  return toJson(schema, message, { alwaysEmitImplicit: false });
}
