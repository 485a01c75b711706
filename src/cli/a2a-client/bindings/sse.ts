// Reads a text/event-stream body into records ({event, data}); comments
// (keep-alives) are dropped but count as activity for the idle deadline.

export interface SseRecord {
  /** The `event:` field, "message" when absent. */
  event: string;
  data: string;
}

export async function* readSse(
  body: ReadableStream<Uint8Array>,
  onActivity: () => void,
): AsyncGenerator<SseRecord> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    onActivity();
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const record = parseRecord(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (record) yield record;
    }
  }
  const last = parseRecord(buffer);
  if (last) yield last;
}

function parseRecord(text: string): SseRecord | undefined {
  let event = "message";
  const data: string[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  return data.length > 0 ? { event, data: data.join("\n") } : undefined;
}
