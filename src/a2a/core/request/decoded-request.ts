// What every binding checks of a request once it is decoded, before the core
// method runs: enum values the schema has, and finite numbers. ProtoJSON
// refuses an unknown enum name or number at decode (contract/protojson.ts),
// but the binary decoder keeps an unknown number in an open enum (proto3): a
// gRPC ListTasks with status 99 would filter on a state that does not exist,
// a message with role 7 would be stored. The same text names the field on
// every binding.
import {
  createRegistry,
  type DescEnum,
  type DescField,
  type DescMessage,
  type Message,
} from "@bufbuild/protobuf";
import { pb } from "../../../contract/index.js";
import { invalidParams, type A2AError } from "./errors.js";
import { nonFiniteError } from "./finite.js";

const registry = createRegistry(pb.file_lf_a2a_v1_a2a);

/**
 * Whether a message type holds an enum field at some depth (google.protobuf.*
 * left to the decoder). The A2A types form no cycle, so each answer is final.
 */
const bearsEnums = new WeakMap<DescMessage, boolean>();

function holdsEnums(desc: DescMessage): boolean {
  let found = bearsEnums.get(desc);
  if (found !== undefined) return found;
  bearsEnums.set(desc, false); // a cycle, were there one, ends here
  found =
    !desc.typeName.startsWith("google.protobuf.") &&
    desc.fields.some(
      (field) => field.enum !== undefined || (field.message !== undefined && holdsEnums(field.message)),
    );
  bearsEnums.set(desc, found);
  return found;
}

/** A field's value in a protobuf-es message (a oneof member lives under the oneof's name). */
function valueOf(message: Record<string, unknown>, field: DescField): unknown {
  if (!field.oneof) return message[field.localName];
  const oneof = message[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
  return oneof?.case === field.localName ? oneof.value : undefined;
}

function unknownValue(desc: DescEnum, value: unknown, where: string): A2AError | undefined {
  if (typeof value !== "number" || desc.values.some((v) => v.number === value)) return undefined;
  const allowed = desc.values.filter((v) => !v.name.endsWith("_UNSPECIFIED")).map((v) => v.name);
  return invalidParams(
    `Invalid params: ${where} has no value ${value} (expected one of ${allowed.join(", ")})`,
    { field: where },
  );
}

/** The first enum field (by ProtoJSON path) holding a number its enum does not have. */
function unknownEnum(desc: DescMessage, message: Record<string, unknown>, at: string): A2AError | undefined {
  if (!holdsEnums(desc)) return undefined;
  for (const field of desc.fields) {
    const value = valueOf(message, field);
    if (value === undefined) continue;
    const where = at ? `${at}.${field.jsonName}` : field.jsonName;
    let error: A2AError | undefined;
    if (field.fieldKind === "enum") error = unknownValue(field.enum, value, where);
    else if (field.fieldKind === "message")
      error = unknownEnum(field.message, value as Record<string, unknown>, where);
    else if (field.fieldKind === "list")
      (value as unknown[]).some((item, i) => {
        if (field.listKind === "enum") error = unknownValue(field.enum, item, `${where}[${i}]`);
        else if (field.listKind === "message")
          error = unknownEnum(field.message, item as Record<string, unknown>, `${where}[${i}]`);
        return error !== undefined;
      });
    else if (field.fieldKind === "map")
      Object.entries(value as Record<string, unknown>).some(([key, item]) => {
        if (field.mapKind === "enum") error = unknownValue(field.enum, item, `${where}.${key}`);
        else if (field.mapKind === "message")
          error = unknownEnum(field.message, item as Record<string, unknown>, `${where}.${key}`);
        return error !== undefined;
      });
    if (error) return error;
  }
  return undefined;
}

/**
 * Throws InvalidParams naming the field when a decoded A2A request holds an
 * enum number its schema does not have, or a non-finite number.
 */
export function checkDecodedRequest(request: Message): void {
  const desc = registry.getMessage(request.$typeName);
  const error = (desc && unknownEnum(desc, request, "")) ?? nonFiniteError(request);
  if (error) throw error;
}
