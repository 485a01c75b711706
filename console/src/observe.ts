// Attaching to a thread's running execution as a read-only observer (the
// adapter's subscribe extension, agui-iaccode.md §9.2): a page reloaded while
// its thread waits or runs, or a second page, follows the run to its end. The
// stream is read here (SSE `data:` records); the events go to the thread's
// views like a run's own.
import type { WireEvent } from "./transcript.js";

export interface Observation {
  executionId: string;
  threadId: string;
  runId: string;
  rosInvocationId: string;
}

/**
 * POSTs the subscription and hands each event to `onEvent` until the stream
 * ends. Resolves with the HTTP status (200 once the stream ended; 401, 404 or
 * 409 when the adapter refused: nothing of that execution is running).
 */
export async function observeExecution(
  baseUrl: string,
  observation: Observation,
  headers: Record<string, string>,
  onEvent: (ev: WireEvent) => void,
  signal?: AbortSignal,
): Promise<number> {
  const { executionId, ...identity } = observation;
  const res = await fetch(
    `${baseUrl}extensions/iac-code/v1/executions/${encodeURIComponent(executionId)}/subscribe`,
    {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...headers },
      body: JSON.stringify(identity),
      signal,
    },
  );
  if (res.status !== 200 || !res.body) return res.status;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const record = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = record
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
        .join("\n");
      if (data) onEvent(JSON.parse(data) as WireEvent);
    }
  }
  return 200;
}
