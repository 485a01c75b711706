// Protobuf binary encoding of the messages the server writes on every turn
// (stored tasks, the events relayed to other replicas), byte for byte what
// protobuf-es's toBinary writes, at a fraction of its cost. toBinary walks
// each message through its reflection layer (a wrapper object per message,
// a JsonObject metadata turned into google.protobuf.Struct messages first),
// and writes nested messages through forks of chunk lists. Here each schema
// is compiled once into a plan (its fields in number order with how to write
// each), and a message is written in one pass into one reused buffer: a
// nested message reserves one byte for its length and moves up only when it
// turns out longer than 127 bytes. Schemas the plan does not cover
// (binary-plan.ts) are written by toBinary.
import { ScalarType, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { planOf, tagBytes, type FieldPlan, type Plan } from "./binary-plan.js";
import { fieldValue, isZeroScalar, type Fields } from "./plan-values.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The reused output buffer: encoding is synchronous, so one is enough. */
let buf = Buffer.allocUnsafe(64 * 1024);
let pos = 0;

function reserve(bytes: number): void {
  if (pos + bytes <= buf.length) return;
  const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + bytes));
  buf.copy(bigger, 0, 0, pos);
  buf = bigger;
}

function writeTag(tag: number[]): void {
  reserve(tag.length);
  for (const byte of tag) buf[pos++] = byte;
}

/** An unsigned value below 2^53. */
function writeVarint(value: number): void {
  reserve(10);
  while (value > 127) {
    buf[pos++] = (value % 128) | 128;
    value = Math.floor(value / 128);
  }
  buf[pos++] = value;
}

function writeVarint64(value: bigint): void {
  let v = BigInt.asUintN(64, value);
  reserve(10);
  while (v > 127n) {
    buf[pos++] = Number(v & 127n) | 128;
    v >>= 7n;
  }
  buf[pos++] = Number(v);
}

function writeInt32(value: number): void {
  // Negative int32 values are sign-extended to 64 bits: ten bytes.
  if (value >= 0) writeVarint(value);
  else writeVarint64(BigInt(value));
}

function varintSize(value: number): number {
  let size = 1;
  while (value > 127) {
    value = Math.floor(value / 128);
    size += 1;
  }
  return size;
}

/** Starts a length-delimited record: one byte kept for its length, where its body starts. */
function openLength(): number {
  reserve(1);
  pos += 1;
  return pos;
}

/** Writes the length of the record started at `start`, moving its body up when the length needs more than a byte. */
function closeLength(start: number): void {
  const length = pos - start;
  if (length < 128) {
    buf[start - 1] = length;
    return;
  }
  const extra = varintSize(length) - 1;
  reserve(extra);
  buf.copy(buf, start + extra, start, pos);
  pos = start - 1;
  writeVarint(length);
  pos += length;
}

function writeString(value: string): void {
  // At most 3 bytes per UTF-16 unit: a length below 128 fits in one byte.
  if (value.length < 43) {
    reserve(1 + value.length * 3);
    const at = pos;
    const length = buf.write(value, at + 1, "utf8");
    buf[at] = length;
    pos = at + 1 + length;
    return;
  }
  const length = Buffer.byteLength(value, "utf8");
  writeVarint(length);
  reserve(length);
  pos += buf.write(value, pos, length, "utf8");
}

function writeBytes(value: Uint8Array): void {
  writeVarint(value.byteLength);
  reserve(value.byteLength);
  buf.set(value, pos);
  pos += value.byteLength;
}

function writeScalar(scalar: ScalarType, value: unknown): void {
  switch (scalar) {
    case ScalarType.STRING:
      return writeString(value as string);
    case ScalarType.BYTES:
      return writeBytes(value as Uint8Array);
    case ScalarType.BOOL:
      reserve(1);
      buf[pos++] = value ? 1 : 0;
      return;
    case ScalarType.DOUBLE:
      reserve(8);
      pos = buf.writeDoubleLE(value as number, pos);
      return;
    case ScalarType.FLOAT:
      reserve(4);
      pos = buf.writeFloatLE(value as number, pos);
      return;
    case ScalarType.INT32:
      return writeInt32(value as number);
    case ScalarType.UINT32:
      return writeVarint((value as number) >>> 0);
    case ScalarType.SINT32: {
      const n = value as number;
      return writeVarint(((n << 1) ^ (n >> 31)) >>> 0);
    }
    case ScalarType.FIXED32:
      reserve(4);
      pos = buf.writeUInt32LE((value as number) >>> 0, pos);
      return;
    case ScalarType.SFIXED32:
      reserve(4);
      pos = buf.writeInt32LE(value as number, pos);
      return;
    case ScalarType.INT64:
    case ScalarType.UINT64: {
      // Timestamps' seconds: a safe non-negative number takes the number path.
      const n = Number(value);
      if (Number.isSafeInteger(n) && n >= 0) return writeVarint(n);
      return writeVarint64(BigInt(value as bigint | string));
    }
    case ScalarType.SINT64: {
      const n = BigInt(value as bigint | string);
      return writeVarint64((n << 1n) ^ (n >> 63n));
    }
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      reserve(8);
      pos = buf.writeBigUInt64LE(BigInt.asUintN(64, BigInt(value as bigint | string)), pos);
      return;
  }
}

// google.protobuf.Struct { map<string, Value> fields = 1 }, Value { oneof kind:
// null_value = 1, number_value = 2, string_value = 3, bool_value = 4,
// struct_value = 5, list_value = 6 }, ListValue { repeated Value values = 1 }.
function writeStruct(object: { [key: string]: Json }): void {
  for (const key of Object.keys(object)) {
    reserve(3); // the entry's tag and length byte, the key's tag
    buf[pos++] = 0x0a; // fields (a map entry), LEN
    const entry = openLength();
    buf[pos++] = 0x0a; // key, LEN
    writeString(key);
    reserve(1);
    buf[pos++] = 0x12; // value, LEN
    const value = openLength();
    writeValue(object[key]);
    closeLength(value);
    closeLength(entry);
  }
}

function writeValue(value: Json): void {
  reserve(10);
  if (value === null) {
    buf[pos++] = 0x08; // null_value
    buf[pos++] = 0;
  } else if (typeof value === "number") {
    buf[pos++] = 0x11; // number_value, FIXED64
    pos = buf.writeDoubleLE(value, pos);
  } else if (typeof value === "string") {
    buf[pos++] = 0x1a; // string_value
    writeString(value);
  } else if (typeof value === "boolean") {
    buf[pos++] = 0x20; // bool_value
    buf[pos++] = value ? 1 : 0;
  } else if (Array.isArray(value)) {
    buf[pos++] = 0x32; // list_value
    const list = openLength();
    for (const item of value) {
      reserve(1);
      buf[pos++] = 0x0a; // values, LEN
      const start = openLength();
      writeValue(item);
      closeLength(start);
    }
    closeLength(list);
  } else {
    buf[pos++] = 0x2a; // struct_value
    const start = openLength();
    writeStruct(value);
    closeLength(start);
  }
}

function writeMessage(plan: Plan, message: Fields): void {
  for (const field of plan.fields) {
    const value = fieldValue(message, field);
    if (value === undefined) continue;
    // A oneof member is written whatever its value.
    if (field.kind === "scalar" && field.implicit && !field.oneof && isZeroScalar(field.scalar, value))
      continue;
    switch (field.kind) {
      case "scalar":
        writeTag(field.tag);
        writeScalar(field.scalar, value);
        break;
      case "message": {
        writeTag(field.tag);
        const start = openLength();
        writeMessage(field.message!, value as Fields);
        closeLength(start);
        break;
      }
      case "struct": {
        writeTag(field.tag);
        const start = openLength();
        writeStruct(value as { [key: string]: Json });
        closeLength(start);
        break;
      }
      case "list":
        writeList(field, value as unknown[]);
        break;
      case "map":
        writeMap(field, value as Fields);
        break;
    }
  }
  const unknown = message.$unknown as Array<{ no: number; wireType: number; data: Uint8Array }> | undefined;
  if (unknown)
    for (const { no, wireType, data } of unknown) {
      writeTag(tagBytes(no, wireType));
      reserve(data.byteLength);
      buf.set(data, pos);
      pos += data.byteLength;
    }
}

function writeMap(field: FieldPlan, entries: Fields): void {
  for (const key of Object.keys(entries)) {
    writeTag(field.tag);
    const entry = openLength();
    reserve(1);
    buf[pos++] = 0x0a; // key, LEN
    writeString(key);
    writeTag(field.mapValue!.tag);
    if (field.message) {
      const start = openLength();
      writeMessage(field.message, entries[key] as Fields);
      closeLength(start);
    } else writeScalar(field.mapValue!.scalar, entries[key]);
    closeLength(entry);
  }
}

function writeList(field: FieldPlan, items: unknown[]): void {
  if (items.length === 0) return;
  if (field.message) {
    for (const item of items) {
      writeTag(field.tag);
      const start = openLength();
      writeMessage(field.message, item as Fields);
      closeLength(start);
    }
  } else if (field.packed) {
    writeTag(field.tag);
    const start = openLength();
    for (const item of items) writeScalar(field.scalar, item);
    closeLength(start);
  } else {
    for (const item of items) {
      writeTag(field.tag);
      writeScalar(field.scalar, item);
    }
  }
}

/** The same bytes as toBinary(schema, message), in a Buffer. */
export function encodeBinary<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): Buffer {
  const plan = planOf(schema);
  if (!plan) {
    const bytes = toBinary(schema, message);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  pos = 0;
  writeMessage(plan, message);
  const out = Buffer.allocUnsafe(pos);
  buf.copy(out, 0, 0, pos);
  // Keep a buffer grown by one huge message from pinning its memory.
  if (buf.length > 1024 * 1024) buf = Buffer.allocUnsafe(64 * 1024);
  return out;
}
