// Hostile bodies and thread ids on the AG-UI surface: deep nesting and huge
// value counts are refused before validation with a 4xx, lone surrogates and
// over-long thread ids get a clear 400 (POST / and the cancel extension), and
// long or non-portable ids that are accepted get short, distinct state files.
import { expect } from "chai";
import { readdirSync } from "node:fs";
import path from "node:path";
import { MAX_JSON_DEPTH } from "../../src/server/json-body.js";
import { MAX_THREAD_ID_LENGTH, threadKey } from "../../src/agui/threads/thread-store.js";
import { post, runInput, startHarness, type Harness } from "./harness.js";
import { expectValidStream } from "./helpers.js";

const nested = (depth: number): unknown => {
  let value: unknown = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
};

describe("agui hostile input", function () {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  const cancel = (executionId: string, body: unknown) =>
    fetch(`${h.url}extensions/iac-code/v1/executions/${encodeURIComponent(executionId)}/cancel`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  it("5,000 nested arrays in state: 400 INVALID_JSON naming the depth limit, nothing stored", async () => {
    const body = JSON.stringify({
      ...runInput(h, { threadId: "deep", runId: "r1", text: "hi" }),
      state: "S",
    });
    const res = await post(h.url, body.replace('"S"', "[".repeat(5000) + "]".repeat(5000)));
    expect(res.status).to.equal(400);
    expect(res.json?.error).to.deep.equal({
      code: "INVALID_JSON",
      message: "The request body nests JSON deeper than 64 levels.",
    });
    expect(await h.store.load("deep")).to.equal(undefined);
  });

  it("nesting at the depth limit is accepted; one more level is refused", async () => {
    const at = runInput(h, { threadId: "depth-ok", runId: "r1", text: "hi" });
    at.state = nested(MAX_JSON_DEPTH - 1); // the envelope object is the first level
    const ok = await post(h.url, at);
    expect(ok.status).to.equal(200);
    await expectValidStream(ok.events);
    const over = runInput(h, { threadId: "depth-over", runId: "r1", text: "hi" });
    over.state = nested(MAX_JSON_DEPTH);
    expect((await post(h.url, over)).status).to.equal(400);
  });

  it("brackets inside strings do not count as nesting", async () => {
    const body = runInput(h, { threadId: "brackets", runId: "r1", text: "[[[[".repeat(100) + '\\"{{{' });
    const res = await post(h.url, body);
    expect(res.status).to.equal(200);
    await expectValidStream(res.events);
  });

  it("more than 500,000 JSON values: 400 INVALID_JSON", async () => {
    const body = runInput(h, { threadId: "many", runId: "r1", text: "hi" });
    body.state = new Array(600_000).fill(0);
    const res = await post(h.url, body);
    expect(res.status).to.equal(400);
    expect(res.json?.error).to.deep.equal({
      code: "INVALID_JSON",
      message: "The request body holds more than 500000 JSON values.",
    });
  });

  it("the cancel extension refuses deep JSON with 400 as well", async () => {
    const res = await cancel(
      "ex-1",
      `{"threadId":"t","rosInvocationId":"i","x":${"[".repeat(100)}${"]".repeat(100)}}`,
    );
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal("INVALID_JSON");
  });

  it("lone surrogates in threadId: 400 INVALID_INPUT for both, no shared state file", async () => {
    for (const threadId of ["\udfff", "\ud800", "a\ud800b"]) {
      const res = await post(h.url, runInput(h, { threadId, runId: "r1", text: "hi" }));
      expect(res.status, JSON.stringify(threadId)).to.equal(400);
      expect(res.json?.error).to.deep.equal({
        code: "INVALID_INPUT",
        message: "threadId must be well-formed Unicode text (no lone surrogates) of at most 1024 characters.",
      });
      const c = await cancel("ex-1", { threadId, rosInvocationId: "invocation-1" });
      expect(c.status).to.equal(400);
      expect(((await c.json()) as { error: { code: string } }).error.code).to.equal("INVALID_INPUT");
    }
    // A well-formed pair (an emoji) is fine.
    const ok = await post(h.url, runInput(h, { threadId: "emoji-😀", runId: "r1", text: "hi" }));
    expect(ok.status).to.equal(200);
    await expectValidStream(ok.events);
  });

  it("a 300-character threadId runs and resumes on a short hashed file; over 1024 is refused", async () => {
    const long = "t".repeat(300);
    const first = await post(h.url, runInput(h, { threadId: long, runId: "r1", text: "hi" }));
    expect(first.status).to.equal(200);
    await expectValidStream(first.events);
    const second = await post(h.url, runInput(h, { threadId: long, runId: "r2", text: "again" }));
    expect(second.status).to.equal(200);
    const files = readdirSync(path.join(h.stateDir, "threads"));
    expect(files).to.include(`${threadKey(long)}.json`);
    for (const file of files) expect(file.length).to.be.at.most(210);
    expect((await h.store.load(long))?.threadId).to.equal(long);

    const tooLong = "t".repeat(MAX_THREAD_ID_LENGTH + 1);
    const refused = await post(h.url, runInput(h, { threadId: tooLong, runId: "r1", text: "hi" }));
    expect(refused.status).to.equal(400);
    expect(refused.json?.error.code).to.equal("INVALID_INPUT");
    const c = await cancel("ex-1", { threadId: tooLong, rosInvocationId: "invocation-1" });
    expect(c.status).to.equal(400);
  });

  it("thread keys stay unique and short for lone surrogates, long and non-portable ids", () => {
    const ids = ["\udfff", "\ud800", "\ufffd", "a".repeat(100), "a".repeat(101), "A", "a", "con", "Con", "é"];
    const keys = ids.map(threadKey);
    expect(new Set(keys).size).to.equal(ids.length);
    for (const key of keys) expect(key.length).to.be.at.most(200);
  });
});
