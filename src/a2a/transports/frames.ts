// The wire form of JSON-RPC replies on the custom transports, written by the
// server (transports/) and read by the client (client/bindings/), so that each
// transport's framing is spelled once. Every reply names its call (the request
// id, or Redis's correlation_id) and says whether it is the call's last; a
// stream ends with the same marker on all of them (grpc-jsonrpc included).

/** A reply as the server frames it. */
export interface Reply {
  id: string | number | null;
  /** One JSON-RPC response (result, error, or for the end of a stream `{"jsonrpc":"2.0","id":…}`). */
  payload: string;
  /** The last reply of its request. */
  final: boolean;
  /** The request named a streaming method (SendStreamingMessage, SubscribeToTask). */
  streaming: boolean;
}

/** A reply as the client reads it: the call it belongs to, the response, whether it is the last. */
export interface IncomingFrame {
  key: string;
  payload: unknown;
  final: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const keyOf = (id: unknown): string | undefined =>
  typeof id === "string" || typeof id === "number" ? String(id) : undefined;

/** The reply that ends a stream on every transport: neither a result nor an error. */
export const endOfStream = (id: string | number | null): string => JSON.stringify({ jsonrpc: "2.0", id });

export const isEndOfStream = (payload: unknown): boolean =>
  isObject(payload) && !("result" in payload) && !("error" in payload);

/**
 * Lines (stdio, unix): the response itself, one per line; a stream's last
 * carries `"final":true` (its end marker {"jsonrpc":"2.0","id":…}, or an error).
 */
export function replyLine(reply: Reply): string {
  // Every payload is a serialised object: the marker goes before its closing brace.
  return reply.final && reply.streaming
    ? `${reply.payload.slice(0, -1)},"final":true}\n`
    : `${reply.payload}\n`;
}

export function readReplyLine(value: unknown): IncomingFrame | undefined {
  const key = isObject(value) ? keyOf(value.id) : undefined;
  return key === undefined
    ? undefined
    : { key, payload: value, final: (value as { final?: unknown }).final === true };
}

/** WebSocket: {"id":<request id>,"payload":<response>,"final":<bool>} per message. */
export function replyMessage(reply: Reply): string {
  return `{"id":${JSON.stringify(reply.id)},"payload":${reply.payload},"final":${reply.final}}`;
}

export function readReplyMessage(value: unknown): IncomingFrame | undefined {
  const key = isObject(value) ? keyOf(value.id) : undefined;
  if (key === undefined) return undefined;
  const { payload, final } = value as { payload?: unknown; final?: unknown };
  return { key, payload, final: final === true };
}

/** Redis Streams: an entry's flat [field, value, ...] list as a record. */
export function redisFields(raw: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) out[raw[i]] = raw[i + 1];
  return out;
}

/** A request entry: correlation_id, reply_stream (where the replies go) and payload. */
export function redisRequestFields(correlationId: string, replyStream: string, payload: string): string[] {
  return ["correlation_id", correlationId, "reply_stream", replyStream, "payload", payload];
}

/** A reply entry: correlation_id, payload and final ("true"/"false"). */
export function redisReplyFields(correlationId: string, reply: Reply): string[] {
  return ["correlation_id", correlationId, "payload", reply.payload, "final", String(reply.final)];
}

/** A reply entry read back; undefined without a correlation id or with a payload that is not JSON. */
export function readRedisReply(fields: Record<string, string>): IncomingFrame | undefined {
  if (!fields.correlation_id) return undefined;
  try {
    const payload = JSON.parse(fields.payload ?? "") as unknown;
    return { key: fields.correlation_id, payload, final: fields.final === "true" };
  } catch {
    return undefined;
  }
}
