// The streamed text chunks of one turn: WORKING status updates that differ
// only in their text, message id and timestamp. The first one is built with
// `create` and encoded by the generated ProtoJSON encoder; each next one is a
// copy of it with those three values replaced, in the message and in its
// ProtoJSON alike, so a chunk costs neither `create` nor `toJson`
// (create + toJson + JSON.stringify of a chunk: 8.3 -> 1.9 µs).
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { timestampFromMs, TimestampSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import { encodeProtoJson, pb } from "../../contract/index.js";

/** The ProtoJSON of the chunks made here; the bindings use it instead of encoding them again. */
const chunkJson = new WeakMap<pb.StreamResponse, JsonValue>();

/** The ProtoJSON of `event` when it is a chunk made by TextChunks. */
export function knownProtoJson(event: pb.StreamResponse): JsonValue | undefined {
  return chunkJson.get(event);
}

/** Now as a Timestamp and its ProtoJSON, made once per millisecond. */
let clock: { ms: number; timestamp: Timestamp; json: string } | undefined;
export function now(): { timestamp: Timestamp; json: string } {
  const ms = Date.now();
  if (clock?.ms !== ms) {
    const timestamp = timestampFromMs(ms);
    clock = { ms, timestamp, json: encodeProtoJson(TimestampSchema, timestamp) as string };
  }
  return clock;
}

interface StatusJson extends JsonObject {
  message: JsonObject & { parts: JsonObject[] };
}

interface Template {
  event: pb.StreamResponse;
  update: pb.TaskStatusUpdateEvent;
  status: pb.TaskStatus;
  message: pb.Message;
  /** The first chunk's ProtoJSON: { statusUpdate: { ..., status: { ..., message, timestamp } } }. */
  json: { statusUpdate: JsonObject & { status: StatusJson } };
  /** What the chunks share beyond the template's own fields; a change starts a new template. */
  key: string;
}

export class TextChunks {
  private template?: Template;

  /** `make` builds a chunk the ordinary way (create); used for the first one and when `key` changes. */
  constructor(private readonly make: (text: string, messageId: string) => pb.StreamResponse) {}

  /**
   * The chunk `text` with `messageId`. `key` names what else may change
   * between chunks (the session id in their metadata): chunks of one key share all the rest.
   */
  next(text: string, messageId: string, key: string): pb.StreamResponse {
    const template = this.template;
    if (template?.key !== key) {
      const event = this.make(text, messageId);
      this.template = templateOf(event, key);
      chunkJson.set(event, this.template.json);
      return event;
    }
    const { timestamp, json: timestampJson } = now();
    const part = template.message.parts[0];
    const message: pb.Message = {
      ...template.message,
      messageId,
      parts: [{ ...part, content: { case: "text", value: text } }],
    };
    const event: pb.StreamResponse = {
      ...template.event,
      payload: {
        case: "statusUpdate",
        value: { ...template.update, status: { ...template.status, message, timestamp } },
      },
    };
    const update = template.json.statusUpdate;
    const status = update.status;
    chunkJson.set(event, {
      statusUpdate: {
        ...update,
        status: {
          ...status,
          message: { ...status.message, messageId, parts: [{ ...status.message.parts[0], text }] },
          timestamp: timestampJson,
        },
      },
    });
    return event;
  }
}

function templateOf(event: pb.StreamResponse, key: string): Template {
  const update = event.payload.value as pb.TaskStatusUpdateEvent;
  const status = update.status!;
  const message = status.message!;
  if (message.parts.length !== 1 || message.parts[0].content.case !== "text")
    throw new Error("a text chunk has one text part");
  return {
    event,
    update,
    status,
    message,
    json: encodeProtoJson(pb.StreamResponseSchema, event) as Template["json"],
    key,
  };
}
