// The log writer on a real FIFO in this process: lines that a full pipe does
// not take wait (and a flush waits for them) until the reader reads; a reader
// gone silences the writer and a flush no longer waits. The write end is
// opened blocking, as a shell's `> fifo` opens it: the writer must not wait on
// it anyway. (The exit-time write into a full pipe is tested with real
// processes in broken-log-pipe.test.ts.)
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { FdLogWriter } from "../../src/server/fd-log-writer.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reads what the pipe holds now (non-blocking read end). */
function drain(readFd: number): string {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(64 * 1024);
  for (;;) {
    try {
      const n = fs.readSync(readFd, buf);
      if (n <= 0) break;
      chunks.push(Buffer.from(buf.subarray(0, n)));
    } catch {
      break; // EAGAIN: empty for now
    }
  }
  return Buffer.concat(chunks).toString();
}

/** Whether `cb`-style flush completes within `ms`. */
function flushedWithin(writer: FdLogWriter, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    writer.flush(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

describe("FdLogWriter on a FIFO", function () {
  this.timeout(20_000);
  let dir: string;
  let fifo: string;
  let readFd: number | undefined;
  let writeFd: number | undefined;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "log-writer-"));
    fifo = path.join(dir, "log.fifo");
    execFileSync("mkfifo", [fifo]);
    // The reader first (non-blocking, so this open returns), then a blocking write end, as `> fifo` opens it.
    readFd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    writeFd = fs.openSync(fifo, fs.constants.O_WRONLY);
  });
  afterEach(() => {
    for (const fd of [readFd, writeFd]) if (fd !== undefined) fs.closeSync(fd);
    readFd = writeFd = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a full pipe holds lines (a flush waits, the event loop does not) until the reader reads them, in order", async () => {
    const writer = new FdLogWriter(writeFd!, 16 * 1024 * 1024);
    const line = (i: number) => `${String(i).padStart(6, "0")} ${"x".repeat(1000)}\n`;
    // 300 KB: several times what a pipe takes before a reader reads.
    for (let i = 0; i < 300; i++) writer.write(line(i));
    // A timer fires while the pipe is full: nothing blocks the event loop.
    expect(await flushedWithin(writer, 300), "flushed into a full pipe").to.equal(false);
    let got = "";
    for (let tries = 0; tries < 100 && !got.includes(line(299)); tries++) {
      got += drain(readFd!);
      await sleep(50);
    }
    expect(got).to.equal(Array.from({ length: 300 }, (_, i) => line(i)).join(""));
    expect(await flushedWithin(writer, 2000)).to.equal(true);
    expect(writer.isBroken).to.equal(false);
  });

  it("the reader gone: the next write fails with EPIPE, the writer goes quiet, a flush returns at once", async () => {
    const writer = new FdLogWriter(writeFd!, 16 * 1024 * 1024);
    writer.write("before\n");
    expect(await flushedWithin(writer, 2000)).to.equal(true);
    expect(drain(readFd!)).to.equal("before\n");
    fs.closeSync(readFd!);
    readFd = undefined;
    writer.write("after the reader left\n");
    expect(await flushedWithin(writer, 2000), "a flush settles once the write failed").to.equal(true);
    expect(writer.isBroken).to.equal(true);
    writer.write("ignored\n");
    expect(await flushedWithin(writer, 50)).to.equal(true);
  });

  it("lines beyond the memory bound are dropped, not queued", async () => {
    const writer = new FdLogWriter(writeFd!, 100);
    writer.write(`${"a".repeat(70)}\n`);
    // The first line is being written; the next two are queued (100 bytes), the last is over the bound.
    writer.write(`${"b".repeat(49)}\n`);
    writer.write(`${"c".repeat(49)}\n`);
    writer.write(`${"d".repeat(49)}\n`);
    expect(await flushedWithin(writer, 2000)).to.equal(true);
    expect(drain(readFd!)).to.equal(`${"a".repeat(70)}\n${"b".repeat(49)}\n${"c".repeat(49)}\n`);
  });
});
