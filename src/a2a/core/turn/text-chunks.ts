// The streamed text chunks of one turn: WORKING status updates that differ
// only in their text, message id and timestamp. The first one is built with
// `create` and encoded once by the generated ProtoJSON encoder (the
// template); each next one is a copy of it with those three values replaced,
// and its ProtoJSON is the template's with the same three values replaced, so
// a chunk costs neither `create` nor `toJson` (create + toJson +
// JSON.stringify of a chunk: 8.3 -> 1.9 µs).
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { timestampFromMs, TimestampSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import { encodeProtoJson, pb } from "../../../contract/index.js";

type Metadata = NonNullable<pb.TaskStatusUpdateEvent["metadata"]>;

/** A chunk's ProtoJSON: { statusUpdate: { ..., status: { ..., message, timestamp } } }. */
interface ChunkJson extends JsonObject {
  statusUpdate: JsonObject & { status: JsonObject & { message: JsonObject & { parts: JsonObject[] } } };
}

interface Template {
  event: pb.StreamResponse;
  update: pb.TaskStatusUpdateEvent;
  status: pb.TaskStatus;
  message: pb.Message;
  /** The first chunk's ProtoJSON, made when a binding first asks (a unary call or a gRPC stream never does). */
  json?: ChunkJson;
  /** The first chunk's JSON text cut around what differs, made when an SSE stream first asks (null: not cut). */
  jsonText?: string[] | null;
}

/**
 * The templates by the metadata object their chunks share (one per turn and
 * session, kept as long as a chunk of theirs lives): only TextChunks puts it
 * into events, so an event holding it is one of that template's chunks.
 */
const templates = new WeakMap<Metadata, Template>();
/** ProtoJSON of the timestamps now() made (one per millisecond). */
const timestampJson = new WeakMap<Timestamp, string>();

/** Now as a Timestamp, made once per millisecond. */
let clock: { ms: number; timestamp: Timestamp } | undefined;
export function now(): Timestamp {
  const ms = Date.now();
  if (clock?.ms !== ms) clock = { ms, timestamp: timestampFromMs(ms) };
  return clock.timestamp;
}

function encodeTimestamp(timestamp: Timestamp): string {
  let json = timestampJson.get(timestamp);
  if (json === undefined) {
    json = encodeProtoJson(TimestampSchema, timestamp) as string;
    timestampJson.set(timestamp, json);
  }
  return json;
}

/** A chunk made by TextChunks: its template and what differs from it. */
interface Chunk {
  template: Template;
  messageId: string;
  text: string;
  timestamp: Timestamp;
}

function chunkOf(event: pb.StreamResponse): Chunk | undefined {
  if (event.payload.case !== "statusUpdate" || !event.payload.value.metadata) return undefined;
  const template = templates.get(event.payload.value.metadata);
  const status = event.payload.value.status;
  const message = status?.message;
  const part = message?.parts[0]?.content;
  if (!template || !status?.timestamp || part?.case !== "text") return undefined;
  return { template, messageId: message!.messageId, text: part.value, timestamp: status.timestamp };
}

/** The template's ProtoJSON with these three values. */
function chunkJson(template: Template, messageId: string, text: string, timestamp: string): ChunkJson {
  template.json ??= encodeProtoJson(pb.StreamResponseSchema, template.event) as ChunkJson;
  const update = template.json.statusUpdate;
  const statusJson = update.status;
  return {
    statusUpdate: {
      ...update,
      status: {
        ...statusJson,
        message: { ...statusJson.message, messageId, parts: [{ ...statusJson.message.parts[0], text }] },
        timestamp,
      },
    },
  };
}

/** The ProtoJSON of `event` when it is a chunk made by TextChunks, from its template. */
export function knownProtoJson(event: pb.StreamResponse): JsonValue | undefined {
  const chunk = chunkOf(event);
  return chunk && chunkJson(chunk.template, chunk.messageId, chunk.text, encodeTimestamp(chunk.timestamp));
}

/** Stand-ins for a chunk's message id, text and timestamp, found again in the template's JSON text. */
const STAND_INS = [
  "\u0000iac-code:message-id\u0000",
  "\u0000iac-code:text\u0000",
  "\u0000iac-code:timestamp\u0000",
];

/** The template's JSON text cut around the three values (in the order they appear); null if a stand-in is not found once. */
function jsonTextPieces(template: Template): string[] | null {
  const text = JSON.stringify(chunkJson(template, STAND_INS[0], STAND_INS[1], STAND_INS[2]));
  const pieces: string[] = [];
  let from = 0;
  for (const standIn of STAND_INS) {
    const quoted = JSON.stringify(standIn);
    const at = text.indexOf(quoted, from);
    if (at < 0 || text.indexOf(quoted, at + 1) >= 0) return null;
    pieces.push(text.slice(from, at));
    from = at + quoted.length;
  }
  pieces.push(text.slice(from));
  return pieces;
}

/**
 * The JSON text of a stream event's ProtoJSON; a text chunk's from its
 * template's JSON text (no object tree per chunk).
 */
export function streamResponseText(event: pb.StreamResponse): string {
  const chunk = chunkOf(event);
  if (!chunk) return JSON.stringify(encodeProtoJson(pb.StreamResponseSchema, event));
  const template = chunk.template;
  if (template.jsonText === undefined) template.jsonText = jsonTextPieces(template);
  const pieces = template.jsonText;
  if (!pieces) return JSON.stringify(knownProtoJson(event));
  return (
    pieces[0] +
    JSON.stringify(chunk.messageId) +
    pieces[1] +
    JSON.stringify(chunk.text) +
    pieces[2] +
    JSON.stringify(encodeTimestamp(chunk.timestamp)) +
    pieces[3]
  );
}

export class TextChunks {
  private template?: Template;
  private key?: string;

  /** `make` builds a chunk the ordinary way (create); used for the first one and when `key` changes. */
  constructor(private readonly make: (text: string, messageId: string) => pb.StreamResponse) {}

  /**
   * The chunk `text` with `messageId`. `key` names what else may change
   * between chunks (the session id in their metadata): chunks of one key share all the rest.
   */
  next(text: string, messageId: string, key: string): pb.StreamResponse {
    const template = this.template;
    if (!template || this.key !== key) {
      const event = this.make(text, messageId);
      this.template = templateOf(event);
      this.key = key;
      return event;
    }
    const part = template.message.parts[0];
    const message: pb.Message = {
      ...template.message,
      messageId,
      parts: [{ ...part, content: { case: "text", value: text } }],
    };
    return {
      ...template.event,
      payload: {
        case: "statusUpdate",
        value: { ...template.update, status: { ...template.status, message, timestamp: now() } },
      },
    };
  }
}

function templateOf(event: pb.StreamResponse): Template {
  const update = event.payload.value as pb.TaskStatusUpdateEvent;
  const status = update.status!;
  const message = status.message!;
  if (!update.metadata || message.parts.length !== 1 || message.parts[0].content.case !== "text")
    throw new Error("a text chunk has metadata and one text part");
  const template: Template = { event, update, status, message };
  templates.set(update.metadata, template);
  return template;
}
