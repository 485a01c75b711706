// A Server-Sent Events reader over a fetch body, with an idle watchdog: when
// no bytes arrive for idleTimeoutMs the stream is abandoned and a retryable
// ProviderError is thrown.
import { SseParser, type SseEvent } from "../../server/sse.js";
import { abortError } from "../abort.js";
import { ProviderError } from "../errors.js";

export interface SseOptions {
  idleTimeoutMs: number;
  signal: AbortSignal;
}

export async function* readSse(
  body: ReadableStream<Uint8Array>,
  options: SseOptions,
): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const parser = new SseParser();
  try {
    for (;;) {
      const chunk = await readWithTimeout(reader, options);
      if (chunk.done) break;
      for (const event of parser.push(chunk.value)) yield event;
    }
    for (const event of parser.end()) yield event;
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
