// The pipeline event journal of a session (pipeline/events.jsonl): every
// envelope, one JSON line each, in sequence order, written before it is
// published. Batches queued while a write is in flight go out together in the
// next write (each waits for its own bytes), through one file handle per turn.
// A torn last line (a crash mid-write) is cut off when the journal is opened,
// so sequence numbers continue after the last complete event. Readers skip an
// unfinished last line and read from the end: a long journal costs only its tail.
import { open, truncate, type FileHandle } from "node:fs/promises";
import type { PipelineEnvelope } from "../seam.js";

/** Bytes read at a time from the end of the journal. */
const TAIL_BLOCK = 64 * 1024;

function parseLine(line: string): PipelineEnvelope | undefined {
  try {
    return JSON.parse(line) as PipelineEnvelope;
  } catch {
    // A line we cannot read is skipped; the sequence numbers around it stay valid.
    return undefined;
  }
}

export interface JournalRead {
  /** The complete envelopes with a sequence above `after` (all without it), in order. */
  events: PipelineEnvelope[];
  /** The sequence of the last complete envelope (0 when there is none). */
  lastSequence: number;
  /** Bytes of the file, and of its complete lines (less after a torn write). */
  size: number;
  completeBytes: number;
}

/** Reads a journal from its end back to the first envelope at or below `after`. */
export async function readJournal(file: string, after?: number): Promise<JournalRead> {
  let handle: FileHandle;
  try {
    handle = await open(file, "r");
  } catch {
    return { events: [], lastSequence: 0, size: 0, completeBytes: 0 };
  }
  try {
    const { size } = await handle.stat();
    const events: PipelineEnvelope[] = [];
    let end = size;
    let carry = Buffer.alloc(0);
    let completeBytes: number | undefined;
    let last: number | undefined;
    while (end > 0) {
      const start = Math.max(0, end - TAIL_BLOCK);
      const block = Buffer.alloc(end - start);
      await handle.read(block, 0, block.length, start);
      let data = Buffer.concat([block, carry]);
      // Bytes before the first newline may belong to a line that starts in the block before.
      const cut = start > 0 ? data.indexOf(10) + 1 : 0;
      if (start > 0 && cut === 0) {
        carry = data;
        end = start;
        continue;
      }
      carry = data.subarray(0, cut);
      data = data.subarray(cut);
      const lastNewline = data.lastIndexOf(10);
      if (completeBytes === undefined) completeBytes = start + cut + lastNewline + 1;
      const lines = data
        .subarray(0, lastNewline + 1)
        .toString("utf8")
        .split("\n")
        .filter(Boolean);
      const found: PipelineEnvelope[] = [];
      let reachedOlder = false;
      for (let i = lines.length - 1; i >= 0; i--) {
        const envelope = parseLine(lines[i]);
        if (!envelope) continue;
        last ??= envelope.sequence;
        if (after !== undefined && envelope.sequence <= after) {
          reachedOlder = true;
          break;
        }
        found.push(envelope);
      }
      events.unshift(...found.reverse());
      if (reachedOlder) break;
      end = start;
      if (start === 0 && carry.length > 0) {
        const first = parseLine(carry.toString("utf8"));
        last ??= first?.sequence;
        if (first && (after === undefined || first.sequence > after)) events.unshift(first);
      }
    }
    return { events, lastSequence: last ?? 0, size, completeBytes: completeBytes ?? 0 };
  } finally {
    await handle.close();
  }
}

export class PipelineJournal {
  private handle: FileHandle | undefined;
  private queued: Array<{ text: string; done: (error?: Error) => void }> = [];
  private writing: Promise<void> | undefined;

  private constructor(
    readonly file: string,
    private last: number,
  ) {}

  /** Opens the journal, repairing a torn tail; the next sequence follows the last complete event. */
  static async open(file: string): Promise<PipelineJournal> {
    // Reading stops at the last complete line: it is at or below any sequence.
    const { lastSequence, size, completeBytes } = await readJournal(file, Number.MAX_SAFE_INTEGER);
    if (completeBytes < size) await truncate(file, completeBytes);
    return new PipelineJournal(file, lastSequence);
  }

  get lastSequence(): number {
    return this.last;
  }

  /** The next sequence number (taken at once, so concurrent producers stay ordered). */
  nextSequence(): number {
    return ++this.last;
  }

  /** Appends JSON lines (one batch, in order after every batch before it); resolves once written. */
  append(lines: readonly string[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queued.push({
        text: lines.map((l) => `${l}\n`).join(""),
        done: (e) => (e ? reject(e) : resolve()),
      });
      this.writing ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0);
      try {
        this.handle ??= await open(this.file, "a", 0o600);
        await this.handle.write(batch.map((b) => b.text).join(""));
        for (const b of batch) b.done();
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        for (const b of batch) b.done(failure);
      }
    }
    this.writing = undefined;
  }

  /** Resolves when everything appended so far is written. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
    await this.handle?.close();
    this.handle = undefined;
  }
}
