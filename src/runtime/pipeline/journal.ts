// The pipeline event journal of a session (pipeline/events.jsonl): every
// envelope, one JSON line each, in sequence order, appended before it is
// published. A batch is one write; a torn last line (a crash mid-write) is cut
// off when the journal is opened, so sequence numbers continue after the last
// complete event. Readers skip an unfinished last line.
import { appendFile, readFile, truncate } from "node:fs/promises";
import { SerialQueue } from "../fs-util.js";
import type { PipelineEnvelope } from "../seam.js";

/** The complete lines of a journal text and the length they cover. */
function completeLines(text: string): { lines: string[]; length: number } {
  const end = text.lastIndexOf("\n") + 1;
  return { lines: text.slice(0, end).split("\n").filter(Boolean), length: end };
}

function parse(lines: string[]): PipelineEnvelope[] {
  const out: PipelineEnvelope[] = [];
  for (const line of lines) {
    try {
      out.push(JSON.parse(line) as PipelineEnvelope);
    } catch {
      // A line we cannot read is skipped; the sequence numbers around it stay valid.
    }
  }
  return out;
}

/** Every complete envelope of a journal file (empty when there is none). */
export async function readJournal(file: string): Promise<PipelineEnvelope[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return [];
  }
  return parse(completeLines(text).lines);
}

export class PipelineJournal {
  private readonly queue = new SerialQueue();

  private constructor(
    readonly file: string,
    private last: number,
  ) {}

  /** Opens the journal, repairing a torn tail; the next sequence follows the last complete event. */
  static async open(file: string): Promise<PipelineJournal> {
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text === undefined) return new PipelineJournal(file, 0);
    const { lines, length } = completeLines(text);
    if (length < text.length) await truncate(file, Buffer.byteLength(text.slice(0, length)));
    const events = parse(lines);
    return new PipelineJournal(file, events.at(-1)?.sequence ?? 0);
  }

  get lastSequence(): number {
    return this.last;
  }

  /** The next sequence number (taken at once, so concurrent producers stay ordered). */
  nextSequence(): number {
    return ++this.last;
  }

  /** Appends a batch in one write, after every batch queued before it. */
  append(envelopes: readonly PipelineEnvelope[]): Promise<void> {
    const text = envelopes.map((e) => `${JSON.stringify(e)}\n`).join("");
    return this.queue.run(() => appendFile(this.file, text, { encoding: "utf8", mode: 0o600 }));
  }

  flush(): Promise<void> {
    return this.queue.idle();
  }
}
