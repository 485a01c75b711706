// Query strings of the HTTP+JSON binding (GET /tasks, GET /tasks/{id}) as
// ProtoJSON: keys are the camelCase JSON names (proto names accepted too),
// booleans come as "true"/"false", enums as names or numbers, repeated fields
// as repeated parameters or comma lists. Nested messages other than
// Timestamp are not allowed in queries.
import {
  ScalarType,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
} from "@bufbuild/protobuf";
import { invalidParams, type A2AError } from "../core/request/errors.js";

type QueryValue = string | string[] | undefined;

/** InvalidParams naming the query field and what is wrong with it. */
const refused = (field: DescField, why: string): A2AError =>
  invalidParams(`Invalid params: ${field.jsonName} ${why}`, { field: field.jsonName });

function fieldFor(schema: DescMessage, key: string): DescField | undefined {
  return schema.fields.find((field) => field.jsonName === key || field.name === key);
}

function scalarValue(field: DescField, type: ScalarType | "enum", raw: string): JsonValue {
  if (type === ScalarType.BOOL) {
    if (raw === "true") return true;
    if (raw === "false") return false;
    throw refused(field, "must be true or false");
  }
  if (type === "enum") {
    if (/^-?\d+$/.test(raw)) return Number(raw);
    // The JSON decoder drops unknown enum names silently; in a query that would widen a filter.
    const known = field.fieldKind === "enum" || (field.fieldKind === "list" && field.listKind === "enum");
    // UNRECOGNIZED: a ts-proto client's "not set" (src/contract/protojson.ts), read as unset on every binding.
    if (known && raw !== "UNRECOGNIZED" && !field.enum.values.some((value) => value.name === raw)) {
      throw refused(field, `has no value ${raw.slice(0, 64)}`);
    }
    return raw;
  }
  return raw;
}

/** Builds the ProtoJSON object of `schema` from a parsed query string; unknown keys are ignored. */
export function queryToProtoJson(schema: DescMessage, query: Record<string, QueryValue>): JsonObject {
  const json: JsonObject = {};
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    const field = fieldFor(schema, key);
    if (!field) continue;
    const values = Array.isArray(value) ? value : [value];
    switch (field.fieldKind) {
      case "scalar":
      case "enum": {
        if (values.length !== 1) throw refused(field, "may be given once");
        json[field.jsonName] = scalarValue(
          field,
          field.fieldKind === "enum" ? "enum" : field.scalar,
          values[0],
        );
        break;
      }
      case "message": {
        if (field.message.typeName !== "google.protobuf.Timestamp" || values.length !== 1)
          throw refused(field, "cannot be given in a query");
        json[field.jsonName] = values[0];
        break;
      }
      case "list": {
        const items = values.flatMap((v) => v.split(",")).filter((v) => v !== "");
        if (field.listKind === "message") throw refused(field, "cannot be given in a query");
        json[field.jsonName] = items.map((item) =>
          scalarValue(field, field.listKind === "enum" ? "enum" : field.scalar, item),
        );
        break;
      }
      default:
        throw refused(field, "cannot be given in a query");
    }
  }
  return json;
}
