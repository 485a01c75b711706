// Interrupts and resume over real HTTP: deny, cancelled, payload validation and
// retry, duplicate answers, unknown/incomplete resumes, expiry, adapter
// restart between interrupt and resume, and resume-required on new messages.
import { expect } from "chai";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Interrupt } from "@ag-ui/client";
import { agentRun, newAgent, post, runInput, startHarness, type Harness } from "./harness.js";
import { expectValidStream, types } from "./helpers.js";
import type { WireEvent as AguiEvent } from "./helpers.js";

const fp = (h: Harness, extra: Record<string, unknown> = {}) => ({
  iacCode: { schemaVersion: 1, rosInvocationId: "invocation-1", cwd: h.workspace, ...extra },
});

function interruptsOf(events: AguiEvent[]): Interrupt[] {
  const last = events.at(-1)!;
  expect(last.type).to.equal("RUN_FINISHED");
  const outcome = last.outcome as { type: string; interrupts: Interrupt[] };
  expect(outcome.type).to.equal("interrupt");
  return outcome.interrupts;
}

async function a2aTaskState(h: Harness, taskId: string): Promise<string> {
  const res = await fetch(h.a2a.url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "A2A-Version": "1.0",
      Authorization: "Bearer a2a-secret-token",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: taskId } }),
  });
  const body = (await res.json()) as { result: { status: { state: string } } };
  return body.result.status.state;
}

describe("agui interrupts and resume over HTTP", function () {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  async function interrupted(threadId: string, text = "[[permission]] write") {
    const agent = newAgent(h, threadId, text);
    const { events } = await agentRun(agent, { runId: `${threadId}-run-1`, forwardedProps: fp(h) });
    return { agent, interrupt: interruptsOf(events)[0], events };
  }

  it("deny: the tool is not run and the run succeeds", async () => {
    const { agent, interrupt } = await interrupted("thread-deny");
    const { events } = await agentRun(agent, {
      runId: "r2",
      forwardedProps: fp(h),
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "deny" } }],
    });
    expect(events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    expect(existsSync(path.join(h.workspace, "vpc.yaml"))).to.equal(false);
    expect(h.runtime.answers.map((a) => (a as { decision: string }).decision)).to.deep.equal(["deny"]);
  });

  it("cancelled counts as deny for a permission", async () => {
    const { agent, interrupt } = await interrupted("thread-cancelled");
    const { events } = await agentRun(agent, {
      runId: "r2",
      forwardedProps: fp(h),
      resume: [{ interruptId: interrupt.id, status: "cancelled" }],
    });
    expect(events.at(-1)).to.deep.include({ outcome: { type: "success" } });
    expect(existsSync(path.join(h.workspace, "vpc.yaml"))).to.equal(false);
    expect(h.runtime.answers.map((a) => (a as { decision: string }).decision)).to.deep.equal(["deny"]);
  });

  it("a wrong payload is RUN_ERROR and leaves the interrupt answerable; the right one then succeeds", async () => {
    const { agent, interrupt } = await interrupted("thread-payload");
    const bad = await agentRun(agent, {
      runId: "r2",
      forwardedProps: fp(h),
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow" } }],
    });
    expect(types(bad.events)).to.deep.equal(["RUN_STARTED", "RUN_ERROR"]);
    expect(bad.events[1]).to.include({
      code: "RESUME_PAYLOAD_INVALID",
      message: "The interrupt response payload is invalid.",
    });
    const missing = await post(
      h.url,
      runInput(h, {
        threadId: "thread-payload",
        runId: "r3",
        resume: [{ interruptId: interrupt.id, status: "resolved" }],
      }),
    );
    expect(missing.events.at(-1)).to.include({
      code: "RESUME_PAYLOAD_INVALID",
      message: "A resolved interrupt requires a payload.",
    });
    expect(h.runtime.answers).to.deep.equal([]);
    const good = await agentRun(agent, {
      runId: "r4",
      forwardedProps: fp(h),
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }],
    });
    expect(good.events.at(-1)).to.deep.include({ outcome: { type: "success" } });
    expect(existsSync(path.join(h.workspace, "vpc.yaml"))).to.equal(true);
  });

  it("a repeated accepted answer never re-runs the tool: RESUME_ALREADY_APPLIED", async () => {
    const { interrupt } = await interrupted("thread-dup");
    const answer = [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }];
    const ok = await post(h.url, runInput(h, { threadId: "thread-dup", runId: "r2", resume: answer }));
    expect(ok.events.at(-1)).to.deep.include({ outcome: { type: "success" } });
    const again = await post(h.url, runInput(h, { threadId: "thread-dup", runId: "r3", resume: answer }));
    await expectValidStream(again.events);
    expect(again.events.at(-1)).to.include({ type: "RUN_ERROR", code: "RESUME_ALREADY_APPLIED" });
    const changed = await post(
      h.url,
      runInput(h, {
        threadId: "thread-dup",
        runId: "r4",
        resume: [{ ...answer[0], payload: { decision: "deny" } }],
      }),
    );
    expect(changed.events.at(-1)).to.include({ type: "RUN_ERROR", code: "RESUME_ALREADY_APPLIED" });
    expect(h.runtime.answers).to.have.length(1);
    // The same runId again is an HTTP 409 before any stream.
    const dupRun = await post(h.url, runInput(h, { threadId: "thread-dup", runId: "r2", resume: answer }));
    expect(dupRun.status).to.equal(409);
    expect(dupRun.json?.error.code).to.equal("DUPLICATE_RUN_ID");
  });

  it("unknown, duplicate and missing interrupt ids; wrong rosInvocationId; new message while waiting", async () => {
    const { interrupt } = await interrupted("thread-bad-resume");
    const unknown = await post(
      h.url,
      runInput(h, {
        threadId: "thread-bad-resume",
        runId: "r2",
        resume: [
          { interruptId: interrupt.id, status: "resolved", payload: { decision: "deny" } },
          { interruptId: "nope", status: "cancelled" },
        ],
      }),
    );
    expect(unknown.events.at(-1)).to.include({
      code: "UNKNOWN_INTERRUPT",
      message: "The resume references an unknown interrupt.",
    });
    const dup = await post(
      h.url,
      runInput(h, {
        threadId: "thread-bad-resume",
        runId: "r3",
        resume: [
          { interruptId: interrupt.id, status: "cancelled" },
          { interruptId: interrupt.id, status: "cancelled" },
        ],
      }),
    );
    expect(dup.events.at(-1)).to.include({
      code: "INCOMPLETE_RESUME",
      message: "The resume contains duplicate interrupt ids.",
    });
    const empty = await post(h.url, runInput(h, { threadId: "thread-bad-resume", runId: "r4", resume: [] }));
    expect(empty.events.at(-1)).to.include({ code: "INCOMPLETE_RESUME" });
    const wrongInvocation = await post(
      h.url,
      runInput(h, {
        threadId: "thread-bad-resume",
        runId: "r5",
        iac: { rosInvocationId: "other" },
        resume: [{ interruptId: interrupt.id, status: "cancelled" }],
      }),
    );
    expect(wrongInvocation.status).to.equal(409);
    expect(wrongInvocation.json?.error).to.deep.equal({
      code: "EXECUTION_LOST",
      message: "The resume request does not match the interrupted run.",
    });
    const newMessage = await post(
      h.url,
      runInput(h, { threadId: "thread-bad-resume", runId: "r6", text: "hello" }),
    );
    expect(newMessage.status).to.equal(409);
    expect(newMessage.json?.error.code).to.equal("RESUME_REQUIRED");
    const noThread = await post(
      h.url,
      runInput(h, {
        threadId: "thread-never",
        runId: "r1",
        resume: [{ interruptId: "x", status: "cancelled" }],
      }),
    );
    expect(noThread.status).to.equal(409);
    expect(noThread.json?.error.code).to.equal("EXECUTION_LOST");
    for (const r of [unknown, dup, empty]) await expectValidStream(r.events);
    expect(h.runtime.answers).to.deep.equal([]);
  });

  it("question interrupt: selection resumes with the option; the adapter reports the tool result once", async () => {
    const { agent, interrupt } = await interrupted("thread-question", "[[question]] where?");
    expect(interrupt.reason).to.equal("input_required");
    expect(interrupt.message).to.equal("Which region?\n- cn-hangzhou: Hangzhou\n- cn-beijing: Beijing");
    const { events } = await agentRun(agent, {
      runId: "r2",
      forwardedProps: fp(h),
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { selectedId: "cn-beijing" } }],
    });
    expect(events.filter((e) => e.type === "TOOL_CALL_RESULT")).to.have.length(1);
    expect(events.find((e) => e.type === "TOOL_CALL_RESULT")).to.include({
      toolCallId: "tool-ask",
      content: "Beijing",
    });
    expect(
      events
        .filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
        .map((e) => e.delta)
        .join(""),
    ).to.equal("Region: cn-beijing.");
    expect(events.at(-1)).to.deep.include({ outcome: { type: "success" } });
  });

  it("a cancelled question cancels the A2A task: RUN_ERROR CANCELLED", async () => {
    const { interrupt } = await interrupted("thread-q-cancel", "[[question]] where?");
    const doc = await h.store.load("thread-q-cancel");
    const taskId = doc!.execution.taskId!;
    const res = await post(
      h.url,
      runInput(h, {
        threadId: "thread-q-cancel",
        runId: "r2",
        resume: [{ interruptId: interrupt.id, status: "cancelled" }],
      }),
    );
    expect(res.events.at(-1)).to.include({
      code: "CANCELLED",
      message: "The execution was cancelled by the interrupt response.",
    });
    expect(await a2aTaskState(h, taskId)).to.equal("TASK_STATE_CANCELED");
  });

  it("a disconnect after the interrupt keeps it; the adapter restarts and the resume still works", async () => {
    const { interrupt } = await interrupted("thread-restart");
    await h.agui.close();
    await h.restartAdapter();
    const agent = newAgent(h, "thread-restart");
    const { events } = await agentRun(agent, {
      runId: "r2",
      forwardedProps: fp(h),
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }],
    });
    expect(events.at(-1)).to.deep.include({ outcome: { type: "success" } });
    expect(readFileSync(path.join(h.workspace, "vpc.yaml"), "utf8")).to.include("ROSTemplate");
    // A resume the A2A server cannot restore (task gone) is EXECUTION_LOST.
    const { interrupt: second } = await interrupted("thread-lost");
    const doc = await h.store.load("thread-lost");
    await h.agui.close();
    const file = h.store.fileFor("thread-lost");
    const saved = JSON.parse(readFileSync(file, "utf8")) as { execution: { taskId: string } };
    saved.execution.taskId = "00000000-0000-4000-8000-000000000000";
    const { writeFileSync } = await import("node:fs");
    writeFileSync(file, JSON.stringify(saved));
    await h.restartAdapter();
    const lost = await post(
      h.url,
      runInput(h, {
        threadId: "thread-lost",
        runId: "r2",
        resume: [{ interruptId: second.id, status: "resolved", payload: { decision: "allow_once" } }],
      }),
    );
    expect(lost.events.at(-1)).to.include({ type: "RUN_ERROR", code: "EXECUTION_LOST" });
    expect(doc?.execution.taskId).to.be.a("string");
  });
});

describe("agui interrupt expiry", function () {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ settings: { interruptTtl: 1 } });
  });
  afterEach(async () => {
    await h.close();
  });

  it("an expired interrupt is refused with EXECUTION_EXPIRED, its state cleared and the A2A task cancelled", async () => {
    const first = await post(
      h.url,
      runInput(h, { threadId: "thread-exp", runId: "r1", text: "[[permission]] x" }),
    );
    const interrupt = interruptsOf(first.events)[0];
    const doc = await h.store.load("thread-exp");
    const taskId = doc!.execution.taskId!;
    const deadline = Date.parse(interrupt.expiresAt!);
    while (Date.now() <= deadline + 50) await new Promise((r) => setTimeout(r, 50));
    const late = await post(
      h.url,
      runInput(h, {
        threadId: "thread-exp",
        runId: "r2",
        resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }],
      }),
    );
    await expectValidStream(late.events);
    expect(late.events.at(-1)).to.include({
      type: "RUN_ERROR",
      code: "EXECUTION_EXPIRED",
      message: "The interrupted execution has expired.",
    });
    expect(existsSync(path.join(h.workspace, "vpc.yaml"))).to.equal(false);
    expect(await a2aTaskState(h, taskId)).to.equal("TASK_STATE_CANCELED");
    const saved = JSON.parse(readFileSync(h.store.fileFor("thread-exp"), "utf8")) as {
      execution: { pending: object };
    };
    expect(saved.execution.pending).to.deep.equal({});
    // The thread takes a new message afterwards.
    const next = await post(h.url, runInput(h, { threadId: "thread-exp", runId: "r3", text: "hello" }));
    expect(next.events.at(-1)).to.deep.include({ outcome: { type: "success" } });
  });
});
