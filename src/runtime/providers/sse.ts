// A Server-Sent Events reader over a fetch body, with an idle watchdog: when
// no bytes arrive for idleTimeoutMs the stream is abandoned and a retryable
// ProviderError is thrown.
import { abortError } from "../abort.js";
import { ProviderError } from "../errors.js";

export interface SseEvent {
  event?: string;
  data: string;
}

export interface SseOptions {
  idleTimeoutMs: number;
  signal: AbortSignal;
}

/** Splits decoded text into SSE events; feed it chunks, then ignore what is left (an unfinished event). */
export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private event: string | undefined;

  push(text: string): SseEvent[] {
    this.buffer += text;
    const out: SseEvent[] = [];
    for (;;) {
      const match = /\r\n|\n|\r/.exec(this.buffer);
      if (!match) break;
      // A lone \r at the end may be the first half of \r\n: wait for more.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      if (line === "") {
        if (this.data.length > 0) {
          out.push({
            ...(this.event !== undefined ? { event: this.event } : {}),
            data: this.data.join("\n"),
          });
        }
        this.data = [];
        this.event = undefined;
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") this.data.push(value);
      else if (field === "event") this.event = value;
    }
    return out;
  }
}

export async function* readSse(
  body: ReadableStream<Uint8Array>,
  options: SseOptions,
): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const chunk = await readWithTimeout(reader, options);
      if (chunk.done) break;
      for (const event of parser.push(decoder.decode(chunk.value, { stream: true }))) yield event;
    }
    for (const event of parser.push(`${decoder.decode()}\n\n`)) yield event;
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

function readWithTimeout(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  { idleTimeoutMs, signal }: SseOptions,
): Promise<Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError());
    const timer = setTimeout(() => {
      cleanup();
      reject(new ProviderError("retryable", `no data for ${idleTimeoutMs} ms (idle timeout)`));
    }, idleTimeoutMs);
    const onAbort = (): void => {
      cleanup();
      reject(abortError());
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    reader.read().then(
      (result) => {
        cleanup();
        resolve(result);
      },
      (error: unknown) => {
        cleanup();
        if (signal.aborted) reject(abortError());
        else reject(new ProviderError("retryable", `stream read failed: ${(error as Error).message}`));
      },
    );
  });
}
