// The event journal: a torn last line (a crash mid-write) is cut off when the
// journal opens and numbering continues after the last complete event; reads
// from the end return exactly the events after a sequence, also across read
// blocks and with lines longer than a block; batches appended at once stay in order.
import { expect } from "chai";
import { appendFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { PipelineJournal, readJournal } from "../../src/runtime/pipeline/journal.js";
import { removeTempDirs, tempDir } from "../runtime/helpers.js";

const line = (sequence: number, text = "x") =>
  JSON.stringify({ sequence, eventId: `evt-${sequence}`, data: { text } });

describe("pipeline journal", () => {
  afterEach(removeTempDirs);

  it("cuts a torn last line off on open and numbers on from the last complete event", async () => {
    const file = path.join(await tempDir(), "events.jsonl");
    await writeFile(file, `${line(1)}\n${line(2)}\n{"sequence":3,"eventI`);
    const journal = await PipelineJournal.open(file);
    expect(journal.lastSequence).to.equal(2);
    expect(await readFile(file, "utf8")).to.equal(`${line(1)}\n${line(2)}\n`);
    expect(journal.nextSequence()).to.equal(3);
    await journal.append([line(3)]);
    await journal.close();
    expect((await readJournal(file)).events.map((e) => e.sequence)).to.deep.equal([1, 2, 3]);
  });

  it("reads the events after a sequence from the end, across blocks and long lines", async () => {
    const file = path.join(await tempDir(), "events.jsonl");
    const long = "y".repeat(150 * 1024);
    const lines = Array.from({ length: 3000 }, (_, i) => line(i + 1, i === 2499 ? long : `event ${i + 1}`));
    await writeFile(file, lines.map((l) => `${l}\n`).join(""));
    await appendFile(file, '{"sequence":3001');
    for (const after of [0, 1, 2499, 2500, 2999, 3000]) {
      const { events, lastSequence } = await readJournal(file, after);
      expect(
        events.map((e) => e.sequence),
        `after ${after}`,
      ).to.deep.equal(Array.from({ length: 3000 - after }, (_, i) => after + i + 1));
      expect(lastSequence).to.equal(3000);
    }
    const { events } = await readJournal(file, 2499);
    expect((events[0].data as { text: string }).text.length).to.equal(long.length);
    expect((await readJournal(path.join(path.dirname(file), "none.jsonl"))).events).to.deep.equal([]);
  });

  it("writes batches queued while a write is in flight together, in order", async () => {
    const file = path.join(await tempDir(), "events.jsonl");
    const journal = await PipelineJournal.open(file);
    const batches = Array.from({ length: 200 }, (_, i) => [line(2 * i + 1), line(2 * i + 2)]);
    await Promise.all(batches.map((b) => journal.append(b)));
    await journal.close();
    expect((await readJournal(file)).events.map((e) => e.sequence)).to.deep.equal(
      Array.from({ length: 400 }, (_, i) => i + 1),
    );
  });
});
