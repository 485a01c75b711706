// The streamed text chunks of one turn: WORKING status updates that differ
// only in their text, message id and timestamp. The first one is built with
// `create` and encoded once by the generated ProtoJSON encoder (the
// template); each next one is a copy of it with those three values replaced,
// and its ProtoJSON is the template's with the same three values replaced, so
// a chunk costs neither `create` nor `toJson` (create + toJson +
// JSON.stringify of a chunk: 8.3 -> 1.9 µs).
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { timestampFromMs, TimestampSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import { encodeProtoJson, pb } from "../../contract/index.js";
import { encodeBinary } from "../../contract/fast-binary.js";

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
  /** The protobuf bytes the chunks share, made when the Redis relay first asks. */
  binary?: ChunkBinary;
}

/**
 * A chunk's protobuf bytes around its text, message id and timestamp, each
 * piece the encoding of the fields between those (in field-number order, as
 * encodeBinary writes them).
 */
interface ChunkBinary {
  /** TaskStatusUpdateEvent task_id, context_id. */
  updateHead: Buffer;
  /** TaskStatusUpdateEvent metadata. */
  updateTail: Buffer;
  /** TaskStatus state. */
  statusHead: Buffer;
  /** Message context_id, task_id, role. */
  messageMid: Buffer;
  /** Message metadata, extensions, reference_task_ids. */
  messageTail: Buffer;
  /** Part metadata, filename, media_type. */
  partTail: Buffer;
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

function chunkBinary(template: Template): ChunkBinary {
  const { update, status, message } = template;
  const part = message.parts[0];
  return {
    updateHead: encodeBinary(pb.TaskStatusUpdateEventSchema, {
      ...update,
      status: undefined,
      metadata: undefined,
    }),
    updateTail: encodeBinary(pb.TaskStatusUpdateEventSchema, {
      ...update,
      taskId: "",
      contextId: "",
      status: undefined,
    }),
    statusHead: encodeBinary(pb.TaskStatusSchema, { ...status, message: undefined, timestamp: undefined }),
    messageMid: encodeBinary(pb.MessageSchema, {
      ...message,
      messageId: "",
      parts: [],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    }),
    messageTail: encodeBinary(pb.MessageSchema, {
      ...message,
      messageId: "",
      contextId: "",
      taskId: "",
      role: 0,
      parts: [],
    }),
    partTail: encodeBinary(pb.PartSchema, { ...part, content: { case: undefined } }),
  };
}

const varintSize = (n: number): number =>
  n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;

/** Protobuf binary of a stream event (what the Redis relay sends): a text chunk's from its template. */
export function encodeStreamBinary(event: pb.StreamResponse): Buffer {
  const chunk = chunkOf(event);
  if (!chunk) return encodeBinary(pb.StreamResponseSchema, event);
  const pieces = (chunk.template.binary ??= chunkBinary(chunk.template));
  const { text, messageId } = chunk;
  const textBytes = Buffer.byteLength(text);
  const idBytes = Buffer.byteLength(messageId);
  const timestamp = encodeBinary(TimestampSchema, chunk.timestamp);
  const partLength = 1 + varintSize(textBytes) + textBytes + pieces.partTail.length;
  const messageLength =
    1 +
    varintSize(idBytes) +
    idBytes +
    pieces.messageMid.length +
    1 +
    varintSize(partLength) +
    partLength +
    pieces.messageTail.length;
  const statusLength =
    pieces.statusHead.length +
    1 +
    varintSize(messageLength) +
    messageLength +
    1 +
    varintSize(timestamp.length) +
    timestamp.length;
  const updateLength =
    pieces.updateHead.length + 1 + varintSize(statusLength) + statusLength + pieces.updateTail.length;
  const out = Buffer.allocUnsafe(1 + varintSize(updateLength) + updateLength);
  let at = 0;
  const tag = (byte: number, length: number) => {
    out[at++] = byte;
    while (length > 127) {
      out[at++] = (length & 127) | 128;
      length >>>= 7;
    }
    out[at++] = length;
  };
  const copy = (bytes: Buffer) => (at += bytes.copy(out, at));
  tag(0x1a, updateLength); // StreamResponse.status_update = 3
  copy(pieces.updateHead);
  tag(0x1a, statusLength); // TaskStatusUpdateEvent.status = 3
  copy(pieces.statusHead);
  tag(0x12, messageLength); // TaskStatus.message = 2
  tag(0x0a, idBytes); // Message.message_id = 1
  at += out.write(messageId, at, "utf8");
  copy(pieces.messageMid);
  tag(0x2a, partLength); // Message.parts = 5
  tag(0x0a, textBytes); // Part.text = 1
  at += out.write(text, at, "utf8");
  copy(pieces.partTail);
  copy(pieces.messageTail);
  tag(0x1a, timestamp.length); // TaskStatus.timestamp = 3
  copy(timestamp);
  copy(pieces.updateTail);
  return out;
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
