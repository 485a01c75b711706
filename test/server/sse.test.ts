// The SSE parser and writer of src/server/sse.ts: line ends of every kind, chunks
// cut anywhere (a CRLF split between two chunks included), several data lines,
// comments, the byte-order mark, empty data, ids and retry, and what the writer
// writes read back by the parser.
import { expect } from "chai";
import { SseParser, readSseBatches, sseComment, sseFrame, type SseEvent } from "../../src/server/sse.js";

function parseAll(chunks: Array<string | Uint8Array>): SseEvent[] {
  const parser = new SseParser();
  return [...chunks.flatMap((chunk) => parser.push(chunk)), ...parser.end()];
}

/** Every way of cutting text in two. */
function everySplit(text: string): string[][] {
  return Array.from({ length: text.length + 1 }, (_, i) => [text.slice(0, i), text.slice(i)]);
}

describe("server/sse: parser", () => {
  for (const [name, eol] of [
    ["LF", "\n"],
    ["CRLF", "\r\n"],
    ["CR", "\r"],
  ] as const) {
    it(`reads events whose lines end with ${name}, cut at every point`, () => {
      const text = `event: a${eol}data: one${eol}${eol}data: two${eol}data: three${eol}${eol}`;
      const expected = [{ event: "a", data: "one" }, { data: "two\nthree" }];
      expect(parseAll([text])).to.deep.equal(expected);
      for (const chunks of everySplit(text))
        expect(parseAll(chunks), JSON.stringify(chunks)).to.deep.equal(expected);
    });
  }

  it("dispatches an event at once when its blank line is a CR ending the chunk", () => {
    const parser = new SseParser();
    expect(parser.push("data: x\r\r")).to.deep.equal([{ data: "x" }]);
    // The LF opening the next chunk closes the CR before it, not another line.
    expect(parser.push("\ndata: y\n\n")).to.deep.equal([{ data: "y" }]);
  });

  it("keeps a CRLF cut between two chunks one line end", () => {
    expect(parseAll(["data: a\r", "\ndata: b\r", "\n\r", "\n"])).to.deep.equal([{ data: "a\nb" }]);
  });

  it("skips comments and keeps empty data", () => {
    expect(parseAll([": keep-alive\n\n:x\ndata:\n\ndata\n\n"])).to.deep.equal([{ data: "" }, { data: "" }]);
  });

  it("does not dispatch a block without data", () => {
    expect(parseAll(["event: ping\n\n: c\n\n\n\n"])).to.deep.equal([]);
  });

  it("removes one space after the colon, not more", () => {
    expect(parseAll(["data:  two\ndata:none\n\n"])).to.deep.equal([{ data: " two\nnone" }]);
  });

  it("drops a leading byte-order mark, as text or as bytes", () => {
    expect(parseAll(["\uFEFFdata: a\n\n"])).to.deep.equal([{ data: "a" }]);
    const bytes = new TextEncoder().encode("\uFEFFdata: a\n\n");
    expect(parseAll([bytes.subarray(0, 2), bytes.subarray(2)])).to.deep.equal([{ data: "a" }]);
  });

  it("decodes UTF-8 cut inside a character", () => {
    const bytes = new TextEncoder().encode("data: héllo €\n\n");
    for (let i = 0; i <= bytes.length; i += 1) {
      expect(parseAll([bytes.subarray(0, i), bytes.subarray(i)])).to.deep.equal([{ data: "héllo €" }]);
    }
  });

  it("reads invalid UTF-8 as U+FFFD, also a character the stream ends inside", () => {
    const prefix = new TextEncoder().encode("data: a");
    const bad = Uint8Array.from([...prefix, 0xff, 0x62, 0x0a, 0x0a]);
    expect(parseAll([bad])).to.deep.equal([{ data: "a\uFFFDb" }]);
    const cut = Uint8Array.from([...prefix, 0xe2, 0x82]); // the first two bytes of €
    expect(parseAll([cut])).to.deep.equal([{ data: "a\uFFFD" }]);
  });

  it("carries the last id over to later events and reads retry", () => {
    expect(parseAll(["id: 7\nretry: 100\ndata: a\n\ndata: b\n\nid\nretry: x\ndata: c\n\n"])).to.deep.equal([
      { data: "a", id: "7", retry: 100 },
      { data: "b", id: "7" },
      { data: "c", id: "" },
    ]);
  });

  it("ignores unknown fields and an id holding NUL", () => {
    expect(parseAll(["foo: bar\ndatax: y\nid: a\0b\ndata: x\n\n"])).to.deep.equal([{ data: "x" }]);
  });

  it("returns the event left open when the stream ends", () => {
    expect(parseAll(["data: a\n\ndata: b"])).to.deep.equal([{ data: "a" }, { data: "b" }]);
    expect(parseAll(["data: a\n"])).to.deep.equal([{ data: "a" }]);
  });

  it("reads a stream of chunks, a batch per chunk that completed events, and reports each chunk", async () => {
    let seen = 0;
    async function* chunks() {
      yield await Promise.resolve(": hi\n\n");
      yield new TextEncoder().encode("data: 1\n\ndata: 2\n\nda");
      yield "ta: 3";
    }
    const batches: SseEvent[][] = [];
    for await (const batch of readSseBatches(chunks(), () => (seen += 1))) batches.push(batch);
    expect(batches).to.deep.equal([[{ data: "1" }, { data: "2" }], [{ data: "3" }]]);
    expect(seen).to.equal(3);
  });
});

describe("server/sse: writer", () => {
  it("writes one data line for text without line ends", () => {
    expect(sseFrame('{"a":1}')).to.equal('data: {"a":1}\n\n');
    expect(sseFrame("x", "error")).to.equal("event: error\ndata: x\n\n");
    expect(sseFrame("x", "e", "9")).to.equal("event: e\nid: 9\ndata: x\n\n");
  });

  it("writes a data line per line", () => {
    expect(sseFrame("a\nb\r\nc\rd")).to.equal("data: a\ndata: b\ndata: c\ndata: d\n\n");
  });

  it("writes comments", () => {
    expect(sseComment("keep-alive")).to.equal(": keep-alive\n\n");
  });

  it("round-trips through the parser", () => {
    const cases: SseEvent[] = [
      { data: "" },
      { data: '{"x":"y"}' },
      { data: "two\nlines", event: "error" },
      { data: ": not a comment" },
      { data: "\n\nblank lines\n", event: "e", id: "1" },
    ];
    const wire = cases.map((c) => sseFrame(c.data, c.event, c.id)).join(sseComment("between"));
    expect(parseAll([wire])).to.deep.equal(cases);
  });
});
