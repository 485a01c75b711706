// Live-stream behaviour over HTTP: the cancel extension (active, terminal,
// unknown, and its request errors), a disconnect cancelling a normal run,
// heartbeats on a slow stream, THREAD_BUSY, fail-safe state writes, an
// unreachable A2A server, and identity checks against a fake upstream.
import { expect } from "chai";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { post, runInput, startHarness, type Harness } from "./harness.js";
import { expectValidStream } from "./helpers.js";
import { startAguiServer } from "../../src/agui/server.js";
import { SseParser } from "../../src/server/sse.js";
import type { WireEvent as AguiEvent } from "./helpers.js";

/** Starts a raw streaming POST and lets the test read events as they come. */
async function openStream(url: string, body: unknown) {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  let raw = "";
  const events: AguiEvent[] = [];
  let done = false;
  const readUntil = async (pred: () => boolean) => {
    while (!pred() && !done) {
      const r = await reader.read();
      if (r.done) {
        done = true;
        break;
      }
      const text = decoder.decode(r.value as Uint8Array, { stream: true });
      raw += text;
      for (const event of parser.push(text)) events.push(JSON.parse(event.data) as AguiEvent);
    }
  };
  return { res, events, readUntil, raw: () => raw, abort: () => controller.abort(), isDone: () => done };
}

async function taskState(h: Harness, taskId: string): Promise<string> {
  const res = await fetch(h.a2a.url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "A2A-Version": "1.0",
      Authorization: "Bearer a2a-secret-token",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: taskId } }),
  });
  return ((await res.json()) as { result: { status: { state: string } } }).result.status.state;
}

async function waitFor<T>(fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await fn();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  return fn();
}

const cancel = (h: Harness, executionId: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${h.url}extensions/iac-code/v1/executions/${executionId}/cancel`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("agui live streams over HTTP", function () {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ heartbeatMs: 150 });
  });
  afterEach(async () => {
    h.runtime.releaseGate();
    await h.close();
  });

  it("cancel extension: an active run is cancelled (RUN_ERROR CANCELLED), then already_terminal; unknown is 404", async () => {
    const s = await openStream(
      h.url,
      runInput(h, { threadId: "thread-cancel", runId: "r1", text: "[[slow]]" }),
    );
    await s.readUntil(() => s.events.some((e) => e.type === "TEXT_MESSAGE_CONTENT"));
    const session = s.events.find((e) => e.type === "CUSTOM")!.value as {
      executionId: string;
      taskId: string;
    };
    const busy = await post(h.url, runInput(h, { threadId: "thread-cancel", runId: "r2", text: "x" }));
    expect([busy.status, busy.json?.error.code]).to.deep.equal([409, "THREAD_BUSY"]);
    const wrong = await cancel(h, session.executionId, {
      threadId: "thread-cancel",
      rosInvocationId: "other",
    });
    expect(wrong.status).to.equal(404);
    const res = await cancel(h, session.executionId, {
      threadId: "thread-cancel",
      rosInvocationId: "invocation-1",
    });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ executionId: session.executionId, status: "cancelled" });
    await s.readUntil(() => false);
    expect(s.events.at(-1)).to.include({ type: "RUN_ERROR", code: "CANCELLED" });
    await expectValidStream(s.events);
    expect(await taskState(h, session.taskId)).to.equal("TASK_STATE_CANCELED");
    const again = await cancel(h, session.executionId, {
      threadId: "thread-cancel",
      rosInvocationId: "invocation-1",
    });
    expect(await again.json()).to.deep.equal({
      executionId: session.executionId,
      status: "already_terminal",
    });
    const unknown = await cancel(h, "nope", { threadId: "thread-cancel", rosInvocationId: "invocation-1" });
    expect(unknown.status).to.equal(404);
    expect(await unknown.json()).to.deep.equal({
      error: { code: "EXECUTION_NOT_FOUND", message: "The execution was not found." },
    });
    const noThread = await cancel(h, "nope", { threadId: "thread-none", rosInvocationId: "x" });
    expect(noThread.status).to.equal(404);
  });

  it("cancel extension on an interrupted execution removes the pending interrupt", async () => {
    const r = await post(
      h.url,
      runInput(h, { threadId: "thread-ci", runId: "r1", text: "[[permission]] x" }),
    );
    const session = r.events.find((e) => e.type === "CUSTOM")!.value as {
      executionId: string;
      taskId: string;
    };
    const res = await cancel(h, session.executionId, {
      threadId: "thread-ci",
      rosInvocationId: "invocation-1",
    });
    expect(await res.json()).to.deep.include({ status: "cancelled" });
    expect((await h.store.load("thread-ci"))!.execution.pending).to.deep.equal({});
    expect(await taskState(h, session.taskId)).to.equal("TASK_STATE_CANCELED");
    const next = await post(h.url, runInput(h, { threadId: "thread-ci", runId: "r2", text: "hello" }));
    expect(next.events.at(-1)).to.deep.include({ outcome: { type: "success" } });
  });

  it("cancel extension request errors: 415, 413, 400 JSON, 400 object, 400 fields", async () => {
    const e415 = await fetch(`${h.url}extensions/iac-code/v1/executions/x/cancel`, {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: "{}",
    });
    expect(e415.status).to.equal(415);
    const big = await cancel(h, "x", { threadId: "t", rosInvocationId: "i", pad: "x".repeat(64 * 1024) });
    expect(big.status).to.equal(413);
    expect(await big.json()).to.deep.equal({
      error: { code: "REQUEST_TOO_LARGE", message: "The cancel request body is too large." },
    });
    const bad = await cancel(h, "x", "{nope");
    expect([bad.status, ((await bad.json()) as { error: { message: string } }).error.message]).to.deep.equal([
      400,
      "The cancel request body is not valid JSON.",
    ]);
    const arr = await cancel(h, "x", "[]");
    expect([arr.status, ((await arr.json()) as { error: { message: string } }).error.message]).to.deep.equal([
      400,
      "The cancel request must be a JSON object.",
    ]);
    const missing = await cancel(h, "x", { threadId: "t" });
    expect([
      missing.status,
      ((await missing.json()) as { error: { message: string } }).error.message,
    ]).to.deep.equal([400, "threadId and rosInvocationId are required."]);
  });

  it("a client disconnect during a normal run cancels the A2A task; heartbeats keep a slow stream alive", async () => {
    const s = await openStream(
      h.url,
      runInput(h, { threadId: "thread-disc", runId: "r1", text: "[[slow]]" }),
    );
    await s.readUntil(() => s.raw().includes(": heartbeat\n\n"));
    expect(s.raw()).to.include(": heartbeat\n\n");
    expect(s.events.every((e) => typeof e.type === "string")).to.equal(true);
    const session = s.events.find((e) => e.type === "CUSTOM")!.value as { taskId: string };
    s.abort();
    expect(
      await waitFor(
        () => taskState(h, session.taskId),
        (st) => st === "TASK_STATE_CANCELED",
      ),
    ).to.equal("TASK_STATE_CANCELED");
    const doc = await waitFor(
      async () => h.store.load("thread-disc"),
      (d) => d!.execution.taskId === null,
    );
    expect(doc!.execution.taskId).to.equal(null);
  });

  it("a slow stream that finishes after heartbeats is accepted by the client checks", async () => {
    const s = await openStream(h.url, runInput(h, { threadId: "thread-hb", runId: "r1", text: "[[slow]]" }));
    await s.readUntil(() => s.raw().includes(": heartbeat"));
    h.runtime.releaseGate();
    await s.readUntil(() => false);
    expect(s.events.at(-1)).to.deep.include({ outcome: { type: "success" } });
    await expectValidStream(s.events);
  });

  it("STATE_PERSISTENCE_FAILED: the task mapping cannot be written, no session is announced, the task is cancelled", async () => {
    let writes = 0;
    h.store.beforeWrite = () => {
      if (++writes === 2) throw new Error("disk full");
    };
    const r = await post(
      h.url,
      runInput(h, { threadId: "thread-psf", runId: "r1", text: "[[permission]] x" }),
    );
    h.store.beforeWrite = undefined;
    await expectValidStream(r.events);
    expect(r.events.map((e) => e.type)).to.deep.equal(["RUN_STARTED", "RUN_ERROR"]);
    expect(r.events[1]).to.include({
      code: "STATE_PERSISTENCE_FAILED",
      message: "The execution mapping could not be committed.",
    });
    const tasks = [...h.runtime.sessions.values()];
    expect(tasks).to.have.length(1);
  });

  it("STATE_PERSISTENCE_FAILED when the interrupt cannot be committed: no interrupt is announced", async () => {
    h.store.beforeWrite = (doc) => {
      if (Object.keys(doc.execution.pending).length > 0) throw new Error("disk full");
    };
    const r = await post(
      h.url,
      runInput(h, { threadId: "thread-psf2", runId: "r1", text: "[[permission]] x" }),
    );
    h.store.beforeWrite = undefined;
    await expectValidStream(r.events);
    expect(r.events.at(-1)).to.include({
      type: "RUN_ERROR",
      code: "STATE_PERSISTENCE_FAILED",
      message: "The interrupted execution state could not be committed.",
    });
    expect(r.events.some((e) => e.type === "RUN_FINISHED")).to.equal(false);
    const session = r.events.find((e) => e.type === "CUSTOM")!.value as { taskId: string };
    expect(
      await waitFor(
        () => taskState(h, session.taskId),
        (st) => st === "TASK_STATE_CANCELED",
      ),
    ).to.equal("TASK_STATE_CANCELED");
  });
});

describe("agui against an unreachable or misbehaving upstream", function () {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "agui-up-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const input = (threadId: string) => ({
    threadId,
    runId: "r1",
    state: {},
    messages: [{ id: "u1", role: "user", content: "hi" }],
    tools: [],
    context: [],
    forwardedProps: {
      iacCode: { schemaVersion: 1, rosInvocationId: "i", cwd: dir, preferredLanguage: "zh-CN" },
    },
  });
  const settings = (a2aUrl: string) => ({
    host: "127.0.0.1",
    port: 0,
    a2aUrl,
    // Fail fast (the wait for an A2A server that comes back is test/agui/a2a-wait.test.ts's).
    a2aWaitSeconds: 0,
    stateDir: path.join(dir, "state"),
    idleShutdown: 0,
    interruptTtl: 540,
    allowedCwds: [dir],
    debug: false,
    logStdout: false,
  });

  it("A2A_UNAVAILABLE (localised) when the A2A server does not answer", async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, "127.0.0.1", r));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((r) => dead.close(() => r()));
    const agui = await startAguiServer(settings(`http://127.0.0.1:${port}`));
    try {
      const r = await post(agui.url, input("thread-dead"));
      await expectValidStream(r.events);
      expect(r.events.at(-1)).to.include({ type: "RUN_ERROR", code: "A2A_UNAVAILABLE" });
      expect(r.events.at(-1)!.message).to.match(/[\u4e00-\u9fff]/);
    } finally {
      await agui.close();
    }
  });

  // A fake upstream: the real A2A server cannot be made to change a context id
  // or fail a task on demand, so these two rows use a scripted SSE answer.
  async function fakeUpstream(events: unknown[]): Promise<Server> {
    const srv = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "Content-Type": "text/event-stream" });
        for (const e of events)
          res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id: 1, result: e })}\n\n`);
        res.end();
      });
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    return srv;
  }

  for (const [name, events, code] of [
    [
      "A2A_PROTOCOL_ERROR when the context identity changes",
      [
        {
          statusUpdate: { taskId: "t1", contextId: "someone-else", status: { state: "TASK_STATE_WORKING" } },
        },
      ],
      "A2A_PROTOCOL_ERROR",
    ],
    [
      "A2A_EXECUTION_FAILED when the task fails",
      [{ statusUpdate: { taskId: "t1", status: { state: "TASK_STATE_FAILED" } } }],
      "A2A_EXECUTION_FAILED",
    ],
    [
      "A2A_EXECUTION_FAILED when the stream ends without an end state",
      [{ statusUpdate: { taskId: "t1", status: { state: "TASK_STATE_WORKING" } } }],
      "A2A_EXECUTION_FAILED",
    ],
  ] as Array<[string, unknown[], string]>) {
    it(name, async () => {
      const srv = await fakeUpstream(events);
      const agui = await startAguiServer(
        settings(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/`),
      );
      try {
        const r = await post(agui.url, input("thread-fake"));
        await expectValidStream(r.events);
        expect(r.events.at(-1)).to.include({ type: "RUN_ERROR", code });
      } finally {
        await agui.close();
        await new Promise<void>((r) => srv.close(() => r()));
      }
    });
  }

  it("refuses a non-loopback A2A URL", async () => {
    let err: unknown;
    try {
      await startAguiServer(settings("https://a2a.example.com"));
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).to.include("loopback");
  });
});
