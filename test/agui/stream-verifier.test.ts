// The strict AG-UI thread verifier: each rule caught on a stream that breaks
// it, a thread of several valid runs accepted, and the script on captured SSE
// files (a real run's capture passes; a broken one exits 1 naming the event).
import { expect } from "chai";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import {
  parseSse,
  splitRuns,
  ThreadStreamVerifier,
  type StreamEvent,
} from "../../scripts/lib/agui-stream-verifier.js";
import { post, runInput, startHarness, type Harness } from "./harness.js";

const run = promisify(execFile);
const ROOT = path.join(import.meta.dirname, "..", "..");

const started = (runId = "r1"): StreamEvent => ({ type: "RUN_STARTED", threadId: "t", runId });
const finished = (runId = "r1"): StreamEvent => ({
  type: "RUN_FINISHED",
  threadId: "t",
  runId,
  outcome: { type: "success" },
});
const text = (id: string, delta = "hi"): StreamEvent[] => [
  { type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" },
  { type: "TEXT_MESSAGE_CONTENT", messageId: id, delta },
  { type: "TEXT_MESSAGE_END", messageId: id },
];
const call = (id: string): StreamEvent[] => [
  { type: "TOOL_CALL_START", toolCallId: id, toolCallName: "write_file" },
  { type: "TOOL_CALL_ARGS", toolCallId: id, delta: "{}" },
  { type: "TOOL_CALL_END", toolCallId: id },
];
const result = (id: string): StreamEvent => ({
  type: "TOOL_CALL_RESULT",
  toolCallId: id,
  messageId: `tool-result-${id}`,
  content: "ok",
  role: "tool",
});
const pipelineEvent = (eventId: string): StreamEvent => ({
  type: "CUSTOM",
  name: "iac-code.pipeline.v1",
  value: { eventId, eventType: "pipeline_started", sequence: 1 },
});

/** The messages of the violations of one run on a fresh thread (or `thread`). */
function problems(events: StreamEvent[], thread = new ThreadStreamVerifier()): string[] {
  return thread.run(events).map((v) => v.message);
}

describe("agui strict stream verifier", () => {
  it("accepts a thread whose runs are each well formed and name nothing twice", () => {
    const thread = new ThreadStreamVerifier("t");
    expect(problems([started("r1"), ...text("m1"), ...call("c1"), finished("r1")], thread)).to.deep.equal([]);
    const activity = { type: "ACTIVITY_SNAPSHOT", messageId: "pipeline:x", activityType: "a", content: {} };
    expect(
      problems(
        [
          started("r2"),
          activity,
          result("c1"),
          { type: "STEP_STARTED", stepName: "s" },
          { type: "REASONING_START", messageId: "z1" },
          { type: "REASONING_MESSAGE_START", messageId: "z1", role: "reasoning" },
          { type: "REASONING_START", messageId: "z2" },
          { type: "REASONING_MESSAGE_START", messageId: "z2", role: "reasoning" },
          { type: "REASONING_MESSAGE_CONTENT", messageId: "z1", delta: "a" },
          { type: "REASONING_MESSAGE_END", messageId: "z1" },
          { type: "REASONING_END", messageId: "z1" },
          { type: "REASONING_MESSAGE_END", messageId: "z2" },
          { type: "REASONING_END", messageId: "z2" },
          ...text("m2"),
          { type: "STEP_FINISHED", stepName: "s" },
          pipelineEvent("e1"),
          finished("r2"),
        ],
        thread,
      ),
    ).to.deep.equal([]);
    // An activity is replaced under its id: the same id again in a later run is fine.
    expect(problems([started("r3"), activity, finished("r3")], thread)).to.deep.equal([]);
  });

  it("run shape: RUN_STARTED first, one end, nothing after it, matching ids, unique run ids", () => {
    expect(problems([...text("m"), finished()])).to.deep.equal(["the first event is TEXT_MESSAGE_START, not RUN_STARTED"]);
    expect(problems([started()])).to.deep.equal(["the stream ends without RUN_FINISHED or RUN_ERROR"]);
    expect(new ThreadStreamVerifier().run([started()], { complete: false })).to.deep.equal([]);
    expect(problems([started(), finished(), ...text("m")])).to.deep.equal([
      "TEXT_MESSAGE_START after the run ended",
      "TEXT_MESSAGE_CONTENT after the run ended",
      "TEXT_MESSAGE_END after the run ended",
    ]);
    expect(problems([started("r1"), finished("r2")])).to.deep.equal(["RUN_FINISHED runId 'r2' is not the run's"]);
    expect(problems([{ type: "RUN_ERROR", message: "no", code: "X" }])).to.deep.equal([]);
    const thread = new ThreadStreamVerifier("t");
    expect(problems([started(), finished()], thread)).to.deep.equal([]);
    expect(problems([started(), finished()], thread)).to.deep.equal(["runId 'r1' was already used on this thread"]);
    expect(problems([{ ...started("r9"), threadId: "u" }, finished("r9")], thread)).to.deep.equal([
      "threadId 'u' is not this thread's ('t')",
    ]);
    expect(problems([started(), { type: "NOPE" }, finished()])).to.deep.equal(["unknown event type NOPE"]);
    expect(problems([started(), { ...finished(), timestamp: 5 }, { type: "RUN_ERROR", timestamp: 4 }])).to.include(
      "RUN_ERROR after the run ended",
    );
    expect(problems([started(), { ...pipelineEvent("e"), timestamp: 5 }, { ...finished(), timestamp: 4 }])).to.deep.equal([
      "RUN_FINISHED timestamp 4 goes back (previous 5)",
    ]);
  }); // prettier-ignore

  it("interrupt outcomes list distinct interrupts", () => {
    const interrupt = (interrupts: unknown[]): StreamEvent => ({
      ...finished(),
      outcome: { type: "interrupt", interrupts },
    });
    expect(problems([started(), interrupt([])])).to.deep.equal(["an interrupt outcome without interrupts"]);
    expect(problems([started(), interrupt([{ id: "a" }, { id: "a" }])])).to.deep.equal([
      "the same interrupt id twice in one outcome",
    ]);
  });

  it("text: START before CONTENT and END, a non-empty delta, closed before the end, ids unique per thread", () => {
    expect(problems([started(), { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "x" }, finished()])).to.deep.equal([
      "TEXT_MESSAGE_CONTENT for text message 'm' that is not open",
    ]);
    expect(problems([started(), ...text("m", ""), finished()])).to.deep.equal([
      "TEXT_MESSAGE_CONTENT of 'm' with an empty delta",
    ]);
    expect(problems([started(), ...text("m").slice(0, 2), finished()])).to.deep.equal([
      "RUN_FINISHED while text message 'm' is open",
    ]);
    expect(problems([started(), ...text("m"), ...text("m").slice(0, 1), finished()])).to.deep.equal([
      "messageId 'm' already named a text message on this thread",
    ]);
    const thread = new ThreadStreamVerifier();
    problems([started("r1"), ...text("m"), finished("r1")], thread);
    expect(problems([started("r2"), ...text("m"), finished("r2")], thread)).to.include(
      "messageId 'm' already named a text message on this thread",
    );
  }); // prettier-ignore

  it("tools: each call started once and ended; a result only after its call ended, once", () => {
    expect(problems([started(), ...call("c"), ...call("c").slice(0, 1), finished()])).to.deep.equal([
      "TOOL_CALL_START of tool call 'c' that was already started",
    ]);
    expect(problems([started(), { type: "TOOL_CALL_ARGS", toolCallId: "c", delta: "{}" }, finished()])).to.deep.equal([
      "TOOL_CALL_ARGS for tool call 'c' that is not open",
    ]);
    expect(problems([started(), ...call("c").slice(0, 2), finished()])).to.deep.equal([
      "RUN_FINISHED while tool call 'c' is open",
    ]);
    expect(problems([started(), result("c"), finished()])).to.deep.equal([
      "TOOL_CALL_RESULT for tool call 'c' that never started",
    ]);
    expect(problems([started(), ...call("c").slice(0, 1), result("c"), finished()])).to.include(
      "TOOL_CALL_RESULT for tool call 'c' before its TOOL_CALL_END",
    );
    expect(problems([started(), ...call("c"), result("c"), result("c"), finished()])).to.deep.equal([
      "a second TOOL_CALL_RESULT for tool call 'c'",
    ]);
    // A run checked alone may end a call of an earlier run it was not given.
    const alone = new ThreadStreamVerifier(undefined, { unseenEarlierRuns: true });
    expect(problems([started(), result("c"), finished()], alone)).to.deep.equal([]);
  }); // prettier-ignore

  it("reasoning balanced; steps balanced within a run; pipeline events once per thread", () => {
    expect(problems([started(), { type: "REASONING_START", messageId: "z" }, finished()])).to.deep.equal([
      "RUN_FINISHED while reasoning 'z' is open",
    ]);
    expect(problems([started(), { type: "REASONING_MESSAGE_CONTENT", messageId: "z", delta: "a" }, finished()])).to.deep.equal([
      "REASONING_MESSAGE_CONTENT for 'z' that is not open",
    ]);
    expect(problems([started(), { type: "STEP_FINISHED", stepName: "s" }, finished()])).to.deep.equal([
      "STEP_FINISHED of step 's' that is not open",
    ]);
    expect(problems([started(), { type: "STEP_STARTED", stepName: "s" }, { type: "STEP_STARTED", stepName: "s" }, finished()])).to.deep.equal([
      "STEP_STARTED of step 's' that is already open",
      "RUN_FINISHED while step 's' is open",
    ]);
    const thread = new ThreadStreamVerifier();
    expect(problems([started("r1"), pipelineEvent("e1"), finished("r1")], thread)).to.deep.equal([]);
    expect(problems([started("r2"), pipelineEvent("e1"), finished("r2")], thread)).to.deep.equal([
      "pipeline event 'e1' shown twice on this thread",
    ]);
    expect(problems([started(), { type: "CUSTOM", name: "iac-code.pipeline.v1", value: {} }, finished()])).to.deep.equal([
      "iac-code.pipeline.v1 without value.eventId",
    ]);
  }); // prettier-ignore

  it("parseSse and splitRuns read concatenated responses (comments, CRLF, a lone RUN_ERROR)", () => {
    const sse = `: heartbeat\r\n\r\ndata: ${JSON.stringify(started("r1"))}\n\ndata: ${JSON.stringify(finished("r1"))}\n\n` +
      `data: ${JSON.stringify({ type: "RUN_ERROR", message: "x", code: "Y" })}\n\ndata: ${JSON.stringify(started("r2"))}\n\n`;
    const runs = splitRuns(parseSse(sse));
    expect(runs.map((r) => [r.threadId, r.events.map((e) => e.type)])).to.deep.equal([
      ["t", ["RUN_STARTED", "RUN_FINISHED"]],
      [undefined, ["RUN_ERROR"]],
      ["t", ["RUN_STARTED"]],
    ]);
  }); // prettier-ignore

  describe("scripts/verify-agui-stream.ts on captured streams", function () {
    this.timeout(60_000);
    let h: Harness;
    before(async () => {
      h = await startHarness();
    });
    after(async () => {
      await h.close();
    });

    const verify = (...files: string[]) =>
      run(
        process.execPath,
        ["--import", "tsx", path.join(ROOT, "scripts", "verify-agui-stream.ts"), ...files],
        {
          cwd: ROOT,
        },
      ).then(
        (r) => ({ code: 0, stdout: r.stdout }),
        (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
      );

    it("a real interrupt and resume, captured to files, passes; the same thread with a run replayed fails", async () => {
      const first = await post(
        h.url,
        runInput(h, { threadId: "cap", runId: "r1", text: "[[permission]] write" }),
      );
      const interrupt = (first.events.at(-1)!.outcome as { interrupts: Array<{ id: string }> }).interrupts[0];
      const second = await post(
        h.url,
        runInput(h, {
          threadId: "cap",
          runId: "r2",
          resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }],
        }),
      );
      const one = path.join(h.dir, "r1.sse");
      const two = path.join(h.dir, "r2.sse");
      writeFileSync(one, first.raw);
      writeFileSync(two, second.raw);
      const ok = await verify(one, two);
      expect(ok.code, ok.stdout).to.equal(0);
      expect(ok.stdout).to.match(/^ok: 1 thread\(s\), 2 run\(s\), \d+ event\(s\)\n$/);
      // The resume alone: its tool result has no call on the thread the script was given.
      const alone = await verify(two);
      expect(alone.code).to.equal(1);
      expect(alone.stdout).to.contain("TOOL_CALL_RESULT for tool call");
      expect(alone.stdout).to.contain("that never started");
      // Both runs twice, concatenated in one file: run ids and message ids repeat.
      const twice = path.join(h.dir, "twice.sse");
      writeFileSync(twice, first.raw + first.raw);
      const bad = await verify(twice);
      expect(bad.code).to.equal(1);
      expect(bad.stdout).to.contain("runId 'r1' was already used on this thread");
    });

    it("no file: usage and exit 2; not SSE: exit 1", async () => {
      const usage = await verify();
      expect(usage.code).to.equal(2);
      expect(usage.stdout).to.contain("usage:");
      const junk = path.join(h.dir, "junk.sse");
      writeFileSync(junk, "data: {nope\n\n");
      const bad = await verify(junk);
      expect(bad.code).to.equal(1);
      expect(bad.stdout).to.contain("not an SSE stream of JSON events");
    });
  });
});
