// Derives JSON Schemas (draft 2020-12) of the ProtoJSON wire form from the
// compiled A2A proto descriptors, so the .proto stays the single source of
// truth for A2A shapes while OpenAPI documents and payload validators can
// still $ref plain JSON Schema.
import {
  getOption,
  hasOption,
  ScalarType,
  type DescField,
  type DescFile,
  type DescMessage,
} from "@bufbuild/protobuf";
import { FieldBehavior, field_behavior } from "../../generated/proto/google/api/field_behavior_pb.js";

type Schema = Record<string, unknown>;

const WELL_KNOWN: Record<string, Schema> = {
  "google.protobuf.Struct": { type: "object" },
  "google.protobuf.Value": {},
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Empty": { type: "object", maxProperties: 0 },
};

function scalarSchema(scalar: ScalarType): Schema {
  switch (scalar) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", minimum: -2147483648, maximum: 2147483647 };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", minimum: 0, maximum: 4294967295 };
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return { type: "number" };
    default:
      // 64-bit integers travel as decimal strings in ProtoJSON.
      return { type: "string", pattern: "^-?[0-9]+$" };
  }
}

function messageRef(message: DescMessage): Schema {
  return WELL_KNOWN[message.typeName] ?? { $ref: `#/$defs/${message.name}` };
}

function fieldValueSchema(field: DescField): Schema {
  switch (field.fieldKind) {
    case "scalar":
      return scalarSchema(field.scalar);
    case "enum":
      return { $ref: `#/$defs/${field.enum.name}` };
    case "message":
      return messageRef(field.message);
    case "list":
      if (field.listKind === "scalar") return { type: "array", items: scalarSchema(field.scalar) };
      if (field.listKind === "enum") return { type: "array", items: { $ref: `#/$defs/${field.enum.name}` } };
      return { type: "array", items: messageRef(field.message) };
    case "map": {
      const value =
        field.mapKind === "scalar"
          ? scalarSchema(field.scalar)
          : field.mapKind === "enum"
            ? { $ref: `#/$defs/${field.enum.name}` }
            : messageRef(field.message);
      return { type: "object", additionalProperties: value };
    }
  }
}

function isRequired(field: DescField): boolean {
  if (!hasOption(field, field_behavior)) return false;
  return getOption(field, field_behavior).includes(FieldBehavior.REQUIRED);
}

function messageSchema(message: DescMessage): Schema {
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const field of message.fields) {
    const schema = fieldValueSchema(field);
    if (field.deprecated) schema.deprecated = true;
    properties[field.jsonName] = schema;
    if (isRequired(field)) required.push(field.jsonName);
  }
  const schema: Schema = { type: "object", properties, additionalProperties: false };
  if (required.length > 0) schema.required = required;
  // A oneof allows at most one of its members on the wire.
  const dependent: Record<string, Schema> = {};
  for (const oneof of message.oneofs) {
    for (const member of oneof.fields) {
      const others = oneof.fields.filter((f) => f !== member).map((f) => [f.jsonName, false]);
      if (others.length > 0) dependent[member.jsonName] = { properties: Object.fromEntries(others) };
    }
  }
  if (Object.keys(dependent).length > 0) schema.dependentSchemas = dependent;
  return schema;
}

/** One schema document whose $defs hold every message and enum of the file. */
export function protoFileToJsonSchema(file: DescFile, id: string, title: string): Schema {
  const defs: Record<string, Schema> = {};
  for (const e of file.enums) {
    // Canonical ProtoJSON never writes the zero value of an implicit-presence enum.
    defs[e.name] = { type: "string", enum: e.values.filter((v) => v.number !== 0).map((v) => v.name) };
  }
  for (const m of file.messages) defs[m.name] = messageSchema(m);
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: id,
    title,
    description: `ProtoJSON wire form of ${file.proto.package} (derived from ${file.name}.proto by npm run generate).`,
    $defs: defs,
  };
}
