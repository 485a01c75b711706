// Golden A2A -> AG-UI streams for the pure translator: the exact events a text
// run, a reasoning run, a tool run with artifact and usage, pipeline steps and
// custom events, and a resumed run produce. Every stream is also checked
// against our event contract and the official client's verifier.
import { expect } from "chai";
import { readItem } from "../../src/agui/upstream/a2a-items.js";
import { stepName } from "../../src/agui/run/pipeline-steps.js";
import { RunTranslator, translateStream } from "../../src/agui/run/translate.js";
import type { AguiEvent } from "../../src/agui/events.js";
import { expectValidStream, types } from "./helpers.js";

const T = 1764441600000;
const opts = () => {
  let n = 0;
  return { threadId: "thread-1", runId: "run-1", now: () => T, newId: () => `id${++n}`.padEnd(32, "0") };
};
const status = (
  state: string,
  iac: Record<string, unknown> = {},
  text?: string,
  messageId = "task-1-message",
) => ({
  jsonrpc: "2.0",
  id: 1,
  result: {
    statusUpdate: {
      taskId: "task-1",
      contextId: "ctx-1",
      status: {
        state,
        ...(text !== undefined ? { message: { messageId, role: "ROLE_AGENT", parts: [{ text }] } } : {}),
      },
      metadata: { iac_code: { iacCodeSessionId: "session-1", ...iac } },
    },
  },
});
const task = {
  result: { task: { id: "task-1", contextId: "ctx-1", status: { state: "TASK_STATE_SUBMITTED" } } },
};

function strip(events: AguiEvent[]): Array<Record<string, unknown>> {
  return events.map(({ timestamp: _t, ...rest }) => rest);
}

describe("agui translate: golden streams", () => {
  it("text run: one message, deltas, final duplicate skipped, success with usage", async () => {
    const items = [
      task,
      status("TASK_STATE_WORKING"),
      status("TASK_STATE_WORKING", {}, "Hello "),
      status("TASK_STATE_WORKING", {}, "world"),
      status("TASK_STATE_WORKING", { usage: { inputTokens: 10.0, outputTokens: 5, totalTokens: 15 } }),
      status("TASK_STATE_WORKING", { assistantFinal: { complete: true } }, "Hello world"),
      status("TASK_STATE_INPUT_REQUIRED"),
    ].map(readItem);
    const events = translateStream(items, { ...opts(), parentRunId: "run-0" });
    expect(strip(events)).to.deep.equal([
      { type: "RUN_STARTED", threadId: "thread-1", runId: "run-1", parentRunId: "run-0" },
      { type: "TEXT_MESSAGE_START", messageId: "task-1-message", role: "assistant" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "task-1-message", delta: "Hello " },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "task-1-message", delta: "world" },
      { type: "TEXT_MESSAGE_END", messageId: "task-1-message" },
      {
        type: "RUN_FINISHED",
        threadId: "thread-1",
        runId: "run-1",
        outcome: { type: "success" },
        usage: [{ inputTokens: 10, outputTokens: 5, totalTokens: 15 }],
      },
    ]);
    expect(events.every((e) => e.timestamp === T)).to.equal(true);
    await expectValidStream(events);
  });

  it("reasoning run: REASONING_* with role reasoning, closed before text", async () => {
    const items = [
      status("TASK_STATE_WORKING", { thinking: { type: "raw_thinking", text: "Let me think" } }),
      status("TASK_STATE_WORKING", { thinking: { type: "raw_thinking", text: " more" } }),
      status("TASK_STATE_WORKING", {}, "Answer"),
      status("TASK_STATE_INPUT_REQUIRED"),
    ].map(readItem);
    const events = translateStream(items, opts());
    expect(strip(events)).to.deep.equal([
      { type: "RUN_STARTED", threadId: "thread-1", runId: "run-1" },
      { type: "REASONING_START", messageId: "reasoning-run-1" },
      { type: "REASONING_MESSAGE_START", messageId: "reasoning-run-1", role: "reasoning" },
      { type: "REASONING_MESSAGE_CONTENT", messageId: "reasoning-run-1", delta: "Let me think" },
      { type: "REASONING_MESSAGE_CONTENT", messageId: "reasoning-run-1", delta: " more" },
      { type: "REASONING_MESSAGE_END", messageId: "reasoning-run-1" },
      { type: "REASONING_END", messageId: "reasoning-run-1" },
      { type: "TEXT_MESSAGE_START", messageId: "task-1-message", role: "assistant" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "task-1-message", delta: "Answer" },
      { type: "TEXT_MESSAGE_END", messageId: "task-1-message" },
      { type: "RUN_FINISHED", threadId: "thread-1", runId: "run-1", outcome: { type: "success" } },
    ]);
    await expectValidStream(events);
  });

  it("tool run: START/ARGS/END with sorted args, artifact CUSTOM, one RESULT, progress CUSTOM", async () => {
    const sha = "a".repeat(64);
    const items = [
      status("TASK_STATE_WORKING", {}, "Writing"),
      status("TASK_STATE_WORKING", { tool: { status: "started", toolUseId: "tu-1", name: "write_file" } }),
      status("TASK_STATE_WORKING", {
        tool: { status: "input_delta", toolUseId: "tu-1", partialJsonLength: 4 },
      }),
      status("TASK_STATE_WORKING", {
        tool: {
          status: "input_complete",
          toolUseId: "tu-1",
          name: "write_file",
          input: { path: "vpc.yaml", content: "x" },
        },
      }),
      status("TASK_STATE_WORKING", {
        tool: { status: "progress", toolUseId: "tu-1", name: "write_file", progress: { percent: 50 } },
      }),
      {
        result: {
          artifactUpdate: {
            taskId: "task-1",
            contextId: "ctx-1",
            artifact: {
              artifactId: "art-1",
              name: "vpc.yaml",
              parts: [{ url: "file:///tmp/art-1/vpc.yaml", filename: "vpc.yaml", mediaType: "text/yaml" }],
              metadata: {
                uri: "file:///tmp/art-1/vpc.yaml",
                mediaType: "text/yaml",
                byteSize: 12,
                sha256: sha,
              },
            },
          },
        },
      },
      status("TASK_STATE_WORKING", {
        tool: { status: "completed", toolUseId: "tu-1", name: "write_file", result: { ok: true, bytes: 1 } },
      }),
      status("TASK_STATE_WORKING", {
        tool: { status: "completed", toolUseId: "tu-1", name: "write_file", result: "again" },
      }),
      status("TASK_STATE_INPUT_REQUIRED"),
    ].map(readItem);
    const events = translateStream(items, opts());
    expect(strip(events)).to.deep.equal([
      { type: "RUN_STARTED", threadId: "thread-1", runId: "run-1" },
      { type: "TEXT_MESSAGE_START", messageId: "task-1-message", role: "assistant" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "task-1-message", delta: "Writing" },
      { type: "TEXT_MESSAGE_END", messageId: "task-1-message" },
      {
        type: "TOOL_CALL_START",
        toolCallId: "tu-1",
        toolCallName: "write_file",
        parentMessageId: "task-1-message",
      },
      { type: "TOOL_CALL_ARGS", toolCallId: "tu-1", delta: '{"content":"x","path":"vpc.yaml"}' },
      { type: "TOOL_CALL_END", toolCallId: "tu-1" },
      {
        type: "CUSTOM",
        name: "iac-code.tool-progress.v1",
        value: {
          schemaVersion: 1,
          status: "progress",
          toolUseId: "tu-1",
          name: "write_file",
          progress: { percent: 50 },
        },
      },
      {
        type: "CUSTOM",
        name: "iac-code.artifact.v1",
        value: {
          schemaVersion: 1,
          taskId: "task-1",
          contextId: "ctx-1",
          artifactId: "art-1",
          name: "vpc.yaml",
          filename: "vpc.yaml",
          mediaType: "text/yaml",
          uri: "file:///tmp/art-1/vpc.yaml",
          byteSize: 12,
          sha256: sha,
        },
      },
      {
        type: "TOOL_CALL_RESULT",
        messageId: "tool-result-tu-1",
        toolCallId: "tu-1",
        content: '{"bytes":1,"ok":true}',
        role: "tool",
      },
      { type: "RUN_FINISHED", threadId: "thread-1", runId: "run-1", outcome: { type: "success" } },
    ]);
    await expectValidStream(events);
  });

  it("ends with RUN_ERROR CANCELLED on canceled and A2A_EXECUTION_FAILED on failed or no end state", async () => {
    const canceled = translateStream([status("TASK_STATE_CANCELED")].map(readItem), opts());
    expect(strip(canceled).at(-1)).to.deep.equal({
      type: "RUN_ERROR",
      code: "CANCELLED",
      message: "The execution was cancelled.",
    });
    const failed = translateStream(
      [status("TASK_STATE_WORKING", {}, "partial"), status("TASK_STATE_FAILED")].map(readItem),
      opts(),
    );
    expect(strip(failed).at(-1)).to.deep.equal({
      type: "RUN_ERROR",
      code: "A2A_EXECUTION_FAILED",
      message: "The A2A execution failed.",
    });
    const none = translateStream([status("TASK_STATE_WORKING")].map(readItem), opts());
    expect(types(none)).to.deep.equal(["RUN_STARTED", "RUN_ERROR"]);
    await expectValidStream(canceled);
    await expectValidStream(failed);
  });

  it("never emits null optional fields and drops nulls inside values", () => {
    const events = translateStream(
      [
        status("TASK_STATE_WORKING", { tool: { status: "started", toolUseId: "t", name: null } }),
        status("TASK_STATE_INPUT_REQUIRED"),
      ].map(readItem),
      opts(),
    );
    expect(JSON.stringify(events)).not.to.include("null");
    expect(events[1]).to.include({ type: "TOOL_CALL_START", toolCallName: "tool" });
    expect(events[1]).not.to.have.property("parentMessageId");
  });
});

describe("agui translate: pipeline events", () => {
  const env = (
    eventId: string,
    eventType: string,
    sequence: number,
    extra: Record<string, unknown> = {},
  ) => ({
    eventId,
    eventType,
    sequence,
    ...extra,
  });
  const pipe = (...envs: Array<Record<string, unknown>>) =>
    readItem(status("TASK_STATE_WORKING", { pipelineBatch: { events: envs } }));

  it("maps steps, standard signals and allowlisted CUSTOM; dedupes by eventId and sequence", async () => {
    const tr = new RunTranslator(opts());
    const out = tr.start();
    out.push(
      ...tr.map(
        pipe(
          env("e1", "pipeline_started", 1, { data: {} }),
          env("e2", "step_started", 2, { step: { id: "plan" } }),
          env("e3", "text_delta", 3, { step: { id: "plan" }, data: { text: "Planning" } }),
          env("e4", "message_started", 4, { data: {} }),
          env("e5", "candidate_step_started", 5, { candidate: { id: "c0" }, candidateStep: { id: "gen" } }),
          env("e6", "usage", 6, { data: { provider: "dashscope", model: "qwen", totalTokens: 15.0 } }),
        ),
      ),
    );
    // A replayed batch (same eventIds) and an old sequence produce nothing.
    out.push(
      ...tr.map(
        pipe(env("e2", "step_started", 2, { step: { id: "plan" } }), env("ex", "pipeline_warning", 3)),
      ),
    );
    out.push(...tr.map(pipe(env("e7", "step_completed", 7, { step: { id: "plan" } }))));
    out.push(...tr.finishSuccess());
    expect(strip(out)).to.deep.equal([
      { type: "RUN_STARTED", threadId: "thread-1", runId: "run-1" },
      {
        type: "CUSTOM",
        name: "iac-code.pipeline.v1",
        value: { eventId: "e1", eventType: "pipeline_started", sequence: 1, data: {} },
      },
      { type: "STEP_STARTED", stepName: "plan" },
      {
        type: "TEXT_MESSAGE_START",
        messageId: "pipeline-message:pipeline-thread-1:pipeline:plan@run-1",
        role: "assistant",
      },
      {
        type: "TEXT_MESSAGE_CONTENT",
        messageId: "pipeline-message:pipeline-thread-1:pipeline:plan@run-1",
        delta: "Planning",
      },
      { type: "STEP_STARTED", stepName: "candidate:c0:gen" },
      { type: "STEP_FINISHED", stepName: "plan" },
      { type: "TEXT_MESSAGE_END", messageId: "pipeline-message:pipeline-thread-1:pipeline:plan@run-1" },
      { type: "STEP_FINISHED", stepName: "candidate:c0:gen" },
      {
        type: "RUN_FINISHED",
        threadId: "thread-1",
        runId: "run-1",
        outcome: { type: "success" },
        usage: [{ provider: "dashscope", model: "qwen", inputTokens: 0, outputTokens: 0, totalTokens: 15 }],
      },
    ]);
    expect(tr.durableState()).to.deep.equal({
      pipelineSequence: 7,
      pipelineOpenSteps: ["candidate:c0:gen"],
      textSnapshotDigests: tr.durableState().textSnapshotDigests,
    });
    await expectValidStream(out);
  });

  it("reopens durable steps in the next run and never finishes an orphan", async () => {
    const tr = new RunTranslator({
      ...opts(),
      runId: "run-2",
      durable: {
        pipelineSequence: 7,
        pipelineOpenSteps: ["candidate:c0:gen", "step:eval"],
        textSnapshotDigests: [],
      },
    });
    const out = tr.start();
    out.push(
      ...tr.map(
        pipe(
          env("e8", "candidate_step_completed", 8, { candidate: { id: "c0" }, candidateStep: { id: "gen" } }),
        ),
      ),
    );
    out.push(...tr.map(pipe(env("e9", "step_completed", 9, { step: { id: "unknown" } }))));
    out.push(...tr.finishSuccess());
    expect(
      strip(out).map((e) => `${String(e.type)}:${typeof e.stepName === "string" ? e.stepName : ""}`),
    ).to.deep.equal([
      "RUN_STARTED:",
      "STEP_STARTED:candidate:c0:gen",
      "STEP_STARTED:eval",
      "STEP_FINISHED:candidate:c0:gen",
      "STEP_FINISHED:eval",
      "RUN_FINISHED:",
    ]);
    expect(tr.durableState().pipelineOpenSteps).to.deep.equal(["step:eval"]);
    await expectValidStream(out);
    expect(stepName("step:x")).to.equal("x");
  });

  it("a recovery snapshot is one ACTIVITY_SNAPSHOT followed by the missed events", async () => {
    const tr = new RunTranslator(opts());
    const out = tr.start();
    out.push(
      ...tr.recovery({ pipelineRunId: "pr-1", lastSequence: 8, status: "running" }, [
        env("r1", "candidate_selected", 3, { data: { id: "c0" } }),
      ]),
    );
    out.push(...tr.finishSuccess());
    expect(strip(out).slice(1, 3)).to.deep.equal([
      {
        type: "ACTIVITY_SNAPSHOT",
        messageId: "pipeline:pr-1",
        activityType: "iac-code.pipeline.v1",
        content: {
          schemaVersion: 1,
          pipelineRunId: "pr-1",
          snapshot: { pipelineRunId: "pr-1", lastSequence: 8, status: "running" },
        },
        replace: true,
      },
      {
        type: "CUSTOM",
        name: "iac-code.pipeline.v1",
        value: { eventId: "r1", eventType: "candidate_selected", sequence: 3, data: { id: "c0" } },
      },
    ]);
    expect(tr.durableState().pipelineSequence).to.equal(8);
    await expectValidStream(out);
  });

  it("500 unknown pipeline_progress events produce nothing", () => {
    const tr = new RunTranslator(opts());
    const envs = Array.from({ length: 500 }, (_, i) =>
      env(`p${i}`, "pipeline_progress", i + 1, { data: {} }),
    );
    expect(tr.map(pipe(...envs))).to.deep.equal([]);
  });
});

describe("agui translate: interrupts and resume", () => {
  it("an interrupt closes every open span; the resumed run does not replay shown text", async () => {
    const tr1 = new RunTranslator(opts());
    const run1 = tr1.start();
    run1.push(
      ...tr1.map(readItem(status("TASK_STATE_WORKING", { thinking: { type: "raw_thinking", text: "hmm" } }))),
    );
    run1.push(...tr1.map(readItem(status("TASK_STATE_WORKING", {}, "before interrupt"))));
    run1.push(
      ...tr1.map(
        readItem(status("TASK_STATE_WORKING", { tool: { status: "started", toolUseId: "tu", name: "w" } })),
      ),
    );
    run1.push(
      ...tr1.finishInterrupt([
        {
          id: "p-1",
          reason: "tool_call",
          message: "Allow?",
          toolCallId: "tu",
          responseSchema: { type: "object" },
          expiresAt: "2030-01-01T00:00:00.000Z",
          metadata: { schemaVersion: 1, kind: "permission", standardOptions: [] },
        },
      ]),
    );
    expect(types(run1).slice(-4)).to.deep.equal([
      "TEXT_MESSAGE_END",
      "TOOL_CALL_START",
      "TOOL_CALL_END",
      "RUN_FINISHED",
    ]);
    await expectValidStream(run1);

    const tr2 = new RunTranslator({ ...opts(), runId: "run-2", durable: tr1.durableState() });
    const run2 = tr2.start();
    run2.push(...tr2.answeredToolResult("tu", "done"));
    run2.push(...tr2.map(readItem(status("TASK_STATE_WORKING", {}, "before interruptafter resume"))));
    run2.push(
      ...tr2.map(
        readItem(
          status("TASK_STATE_WORKING", {
            tool: { status: "completed", toolUseId: "tu", name: "w", result: "x" },
          }),
        ),
      ),
    );
    run2.push(...tr2.finishSuccess());
    const deltas = run2.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta);
    expect(deltas).to.deep.equal(["after resume"]);
    expect(run2.filter((e) => e.type === "TOOL_CALL_RESULT")).to.have.length(1);
    await expectValidStream(run2);
  });
});
