// ProtoJSON encoding with fast bytes. protobuf-es encodes `bytes` fields with
// a pure-JS base64 that needs seconds for a few MiB (raw parts of multimodal
// input): large byte fields are swapped for short unique markers while the
// message is encoded, then the markers are replaced by Buffer's base64.
import { randomBytes } from "node:crypto";
import type { DescMessage, JsonValue, MessageShape } from "@bufbuild/protobuf";
import { encodeProtoJson, pb } from "../../contract/index.js";
import { knownProtoJson } from "./text-chunks.js";

const FAST_THRESHOLD = 4096;

interface Swap {
  holder: { value: unknown };
  original: Uint8Array;
}

function collect(node: unknown, swaps: Swap[], markers: Map<string, string>, depth = 0): void {
  if (depth > 64 || !node || typeof node !== "object") return;
  if (Array.isArray(node)) {
    for (const item of node) collect(item, swaps, markers, depth + 1);
    return;
  }
  if (node instanceof Uint8Array) return;
  const record = node as Record<string, unknown>;
  // A oneof holding bytes ({ case: "raw", value: Uint8Array }).
  if (
    typeof record.case === "string" &&
    record.value instanceof Uint8Array &&
    record.value.byteLength > FAST_THRESHOLD
  ) {
    const marker = randomBytes(18);
    markers.set(marker.toString("base64"), Buffer.from(record.value).toString("base64"));
    swaps.push({ holder: record as { value: unknown }, original: record.value });
    record.value = new Uint8Array(marker);
    return;
  }
  // Bytes live only in parts (Part.raw); metadata (Struct, JSON values) never holds any.
  for (const key in record) if (key !== "metadata") collect(record[key], swaps, markers, depth + 1);
}

function restoreMarkers(json: JsonValue, markers: Map<string, string>): JsonValue {
  if (typeof json === "string") return markers.get(json) ?? json;
  if (Array.isArray(json)) return json.map((v) => restoreMarkers(v, markers));
  if (json && typeof json === "object") {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(json)) out[k] = restoreMarkers(v, markers);
    return out;
  }
  return json;
}

export function encodeFast<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): JsonValue {
  const swaps: Swap[] = [];
  const markers = new Map<string, string>();
  collect(message, swaps, markers);
  if (swaps.length === 0) return encodeProtoJson(schema, message);
  try {
    return restoreMarkers(encodeProtoJson(schema, message), markers);
  } finally {
    for (const swap of swaps) swap.holder.value = swap.original;
  }
}

/** ProtoJSON of a stream event: a text chunk's is known already (text-chunks.ts). */
export function encodeStreamResponse(event: pb.StreamResponse): JsonValue {
  return knownProtoJson(event) ?? encodeFast(pb.StreamResponseSchema, event);
}
