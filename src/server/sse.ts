// Server-Sent Events, both directions, for every stream of the server: the
// parser (the model providers' streams, the A2A client's) and the frame writer
// (the A2A bindings). It follows the WHATWG EventSource rules: CR, LF and CRLF
// line ends, several `data:` lines joined by LF, comments, `event:`, `id:` and
// `retry:`. It sits on the path of every streamed token, so it cuts lines with
// indexOf rather than looking at each character.

import { StringDecoder } from "node:string_decoder";

/** One dispatched event. */
export interface SseEvent {
  /** The `event:` field; absent when the event named none (the browser calls it "message"). */
  event?: string;
  data: string;
  /** The last event id seen on the stream so far (it carries over to later events, as in EventSource). */
  id?: string;
  /** The reconnection time the stream asked for, when this event's block set one. */
  retry?: number;
}

export const SSE_HEADERS = {
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache",
  Connection: "keep-alive",
  "X-Accel-Buffering": "no",
} as const;

const LF = 10;
const COLON = 58;
const SPACE = 32;
const LINE_END = /[\r\n]/;

/** One event on the wire: a data line per line of data, the event name and id before it. */
export function sseFrame(data: string, event?: string, id?: string): string {
  const head = `${event !== undefined ? `event: ${event}\n` : ""}${id !== undefined ? `id: ${id}\n` : ""}`;
  // JSON.stringify never writes a raw line end: the common case is one line.
  if (!LINE_END.test(data)) return `${head}data: ${data}\n\n`;
  return `${head}${data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join("")}\n`;
}

/** One event of JSON data: JSON.stringify writes no raw line end, so it is one `data:` line. */
export function sseJsonFrame(json: string): string {
  return `data: ${json}\n\n`;
}

/** A comment (keep-alive): readers skip it, proxies and idle timers see traffic. */
export function sseComment(text: string): string {
  return `: ${text}\n\n`;
}

/**
 * Turns chunks of a stream (bytes or text, cut anywhere) into events. push()
 * returns the events completed by a chunk; end() returns the last one when the
 * stream stopped without its closing blank line (EventSource drops it; the
 * servers we read sometimes end that way and their last event counts).
 */
export class SseParser {
  // StringDecoder, not TextDecoder: a quarter of the cost per chunk, and the same
  // handling of a character cut between chunks and of invalid bytes (U+FFFD).
  private readonly decoder = new StringDecoder("utf8");
  private rest = "";
  private started = false;
  /** The previous chunk ended with CR: a LF opening this one belongs to it. */
  private afterCr = false;
  private data: string[] = [];
  private event: string | undefined;
  private id: string | undefined;
  private retry: number | undefined;

  /** onComment sees each comment line's text (a proxy passes keep-alives on). */
  constructor(private readonly onComment?: (text: string) => void) {}

  push(chunk: string | Uint8Array): SseEvent[] {
    let text = typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    if (!this.started && text !== "") {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.afterCr && text !== "") {
      this.afterCr = false;
      if (text.charCodeAt(0) === LF) text = text.slice(1);
    }
    const out: SseEvent[] = [];
    const buffer = this.rest === "" ? text : this.rest + text;
    let start = 0;
    // Most streams have no CR at all: one search tells, and it is repeated only once passed.
    let cr = buffer.indexOf("\r");
    for (;;) {
      const lf = buffer.indexOf("\n", start);
      if (cr !== -1 && cr < start) cr = buffer.indexOf("\r", start);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr;
        if (cr + 1 < buffer.length) next = buffer.charCodeAt(cr + 1) === LF ? cr + 2 : cr + 1;
        else {
          next = cr + 1;
          this.afterCr = true;
        }
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else break;
      this.line(buffer, start, end, out);
      start = next;
    }
    this.rest = start === 0 ? buffer : buffer.slice(start);
    return out;
  }

  /** The stream ended: the event still open, if it has data. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const tail = this.push(this.decoder.end());
    if (this.rest !== "") this.line(this.rest, 0, this.rest.length, out);
    this.rest = "";
    this.dispatch(out);
    return [...tail, ...out];
  }

  private line(buffer: string, start: number, end: number, out: SseEvent[]): void {
    if (start === end) return this.dispatch(out);
    const first = buffer.charCodeAt(start);
    if (first === COLON) return this.onComment?.(buffer.slice(start + 1, end));
    // The common line: `data: <json>`, read without cutting out its field name.
    if (buffer.startsWith("data:", start)) {
      this.data.push(buffer.slice(buffer.charCodeAt(start + 5) === SPACE ? start + 6 : start + 5, end));
      return;
    }
    const colon = buffer.indexOf(":", start);
    let field: string;
    let value: string;
    if (colon === -1 || colon >= end) {
      field = buffer.slice(start, end);
      value = "";
    } else {
      field = buffer.slice(start, colon);
      const from = buffer.charCodeAt(colon + 1) === SPACE && colon + 1 < end ? colon + 2 : colon + 1;
      value = buffer.slice(from, end);
    }
    switch (field) {
      case "data":
        this.data.push(value);
        break;
      case "event":
        this.event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.id = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
      // Unknown fields are ignored.
    }
  }

  private dispatch(out: SseEvent[]): void {
    if (this.data.length > 0) {
      const event: SseEvent = { data: this.data.length === 1 ? this.data[0] : this.data.join("\n") };
      if (this.event !== undefined) event.event = this.event;
      if (this.id !== undefined) event.id = this.id;
      if (this.retry !== undefined) event.retry = this.retry;
      out.push(event);
    }
    if (this.data.length > 0) this.data = [];
    this.event = undefined;
    this.retry = undefined;
  }
}

/** The events of a whole body. */
export function parseSseText(text: string): SseEvent[] {
  const parser = new SseParser();
  return [...parser.push(text), ...parser.end()];
}

/**
 * The events of a stream of chunks (a fetch body, a socket), a batch per chunk:
 * the events that chunk completed, so a reader behind its writer handles what
 * piled up in one go. onChunk sees each chunk arrive.
 */
export async function* readSseBatches(
  chunks: AsyncIterable<string | Uint8Array>,
  onChunk?: () => void,
): AsyncGenerator<SseEvent[]> {
  const parser = new SseParser();
  for await (const chunk of chunks) {
    onChunk?.();
    const events = parser.push(chunk);
    if (events.length > 0) yield events;
  }
  const tail = parser.end();
  if (tail.length > 0) yield tail;
}
