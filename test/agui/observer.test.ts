// The read-only observer (POST /extensions/iac-code/v1/executions/{executionId}/subscribe,
// agui-iaccode.md §9.2, §10 items 102-103) and the snapshots a reconnecting UI
// starts with, through the real A2A server and adapter (with a tap that records
// every A2A request): the body and identity rules (401, 400, 404, 409 before
// A2A is asked anything), an observer that watches a running turn to its end
// (MESSAGES_SNAPSHOT of the conversation first, then the live text and the
// run's end, every stream accepted by the official client), one that leaves
// without cancelling anything or writing the thread's state, one that attaches
// to a waiting interrupt, and a new run on a thread with history that starts
// with the conversation.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { HttpAgent } from "@ag-ui/client";
import { agentRun, iacCode, post, runInput, startHarness, type Harness } from "./harness.js";
import { expectValidStream, type WireEvent } from "./helpers.js";
import { SseParser } from "../../src/server/sse.js";
import { threadKey } from "../../src/agui/threads/thread-store.js";
import path from "node:path";

const TOKEN = "observer-token";

/** A streaming POST read as events come. */
async function openStream(url: string, body: unknown, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...headers },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const events: WireEvent[] = [];
  let done = false;
  const readUntil = async (pred: () => boolean) => {
    while (!pred() && !done) {
      const r = await reader.read();
      if (r.done) {
        done = true;
        break;
      }
      for (const event of parser.push(decoder.decode(r.value as Uint8Array, { stream: true })))
        events.push(JSON.parse(event.data) as WireEvent);
    }
  };
  return { res, events, readUntil, abort: () => controller.abort() };
}

const auth = { Authorization: `Bearer ${TOKEN}` };

function subscribeUrl(h: Harness, executionId: string): string {
  return `${h.url}extensions/iac-code/v1/executions/${encodeURIComponent(executionId)}/subscribe`;
}

function subscribe(h: Harness, executionId: string, body: unknown, headers: Record<string, string> = auth) {
  return fetch(subscribeUrl(h, executionId), {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

interface Session {
  executionId: string;
  taskId: string;
  contextId: string;
  rosInvocationId: string;
}

const sessionOf = (events: WireEvent[]): Session =>
  events.find((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1")!.value as Session;

const stateFile = (h: Harness, threadId: string) =>
  readFileSync(path.join(h.stateDir, "threads", `${threadKey(threadId)}.json`), "utf8");

async function waitFor<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await fn();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  return fn();
}

describe("agui observer (subscribe extension, §9.2) and reconnect snapshots", function () {
  this.timeout(30_000);
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ settings: { authToken: TOKEN }, tap: true });
  });
  afterEach(async () => {
    h.runtime.releaseGate();
    await h.close();
  });

  const a2aCalls = () => h.tap!.calls.length;

  /** A finished first turn, then a second one held open ([[slow]]) on thread `threadId`. */
  async function slowSecondTurn(threadId: string) {
    const first = await post(h.url, runInput(h, { threadId, runId: "r1", text: "hello there" }), auth);
    expect(first.events.at(-1)!.type).to.equal("RUN_FINISHED");
    const run = await openStream(
      h.url,
      runInput(h, { threadId, runId: "r2", text: "take your time [[slow]]" }),
      auth,
    );
    await run.readUntil(() => run.events.some((e) => e.type === "TEXT_MESSAGE_CONTENT"));
    return { first, run, session: sessionOf(run.events) };
  }

  it("refuses by the reference's rules: 401, 400 naming the field, 404 nothing running, 409 before A2A is asked", async () => {
    const threadId = "thread-rules";
    const { session } = await slowSecondTurn(threadId);
    const identity = { threadId, runId: "r2", rosInvocationId: "invocation-1" };
    // 401: no token, a wrong one, or the scheme not written exactly `Bearer`.
    const refused: Array<Record<string, string>> = [
      {},
      { Authorization: "Bearer nope" },
      { Authorization: `bearer ${TOKEN}` },
    ];
    for (const headers of refused) {
      const res = await subscribe(h, session.executionId, identity, headers);
      expect([res.status, await res.json()]).to.deep.equal([401, { error: "Unauthorized" }]);
      expect(res.headers.get("www-authenticate")).to.match(/^Bearer/);
    }
    // 400: the body and the field that is wrong.
    const bad: Array<[unknown, string]> = [
      ["{not json", "body"],
      [[identity], "body"],
      [{ ...identity, extra: 1 }, "extra"],
      [{ threadId, rosInvocationId: "invocation-1" }, "runId"],
      [{ ...identity, threadId: "" }, "threadId"],
      [{ ...identity, rosInvocationId: 7 }, "rosInvocationId"],
      [{ ...identity, afterSequence: "3" }, "afterSequence"],
    ];
    for (const [body, field] of bad) {
      const res = await subscribe(h, session.executionId, body);
      expect([res.status, await res.json()], JSON.stringify(body)).to.deep.equal([
        400,
        { error: "Invalid observation identity", field },
      ]);
    }
    const before = a2aCalls();
    // 409 (item 103): another rosInvocationId, another execution, a run the thread never admitted.
    for (const [executionId, body] of [
      [session.executionId, { ...identity, rosInvocationId: "invocation-2" }],
      ["0b6c5a8e-8f0e-4c77-9a3c-2f9f5d4e1a11", identity],
      [session.executionId, { ...identity, runId: "r-never" }],
    ] as const) {
      const res = await subscribe(h, executionId, body);
      expect([res.status, await res.json()]).to.deep.equal([
        409,
        { error: "Execution observation identity changed" },
      ]);
    }
    // 404: an unknown thread.
    const unknown = await subscribe(h, session.executionId, { ...identity, threadId: "thread-none" });
    expect([unknown.status, await unknown.json()]).to.deep.equal([
      404,
      { error: "Execution checkpoint unavailable" },
    ]);
    expect(a2aCalls(), "no A2A request for a refused observer").to.equal(before);
    // 404 once the execution ended: nothing is running any more.
    h.runtime.releaseGate();
    const terminal = await waitFor(
      () => subscribe(h, session.executionId, identity),
      (res) => res.status === 404,
    );
    expect(await terminal.json()).to.deep.equal({ error: "Execution checkpoint unavailable" });
  });

  it("item 102: an observer watches the running turn to its end; the new run and the observer start with the conversation", async () => {
    const threadId = "thread-watch";
    const { first, run, session } = await slowSecondTurn(threadId);
    // The second run starts with the first turn's conversation and its own message.
    expect(run.events[0].type).to.equal("RUN_STARTED");
    expect(run.events[1].type).to.equal("MESSAGES_SNAPSHOT");
    expect(first.events.at(-1)!.type).to.equal("RUN_FINISHED");
    const expected = [
      { id: "msg-r1", role: "user", content: "hello there" },
      // The answer as the task's history keeps it (its id is A2A's message id).
      {
        id: (run.events[1].messages as Array<{ id: string }>)[1].id,
        role: "assistant",
        content: "Echo: hello there",
      },
      { id: "msg-r2", role: "user", content: "take your time [[slow]]" },
    ];
    expect(run.events[1].messages).to.deep.equal(expected);

    const callsBefore = h.tap!.calls.length;
    const observer = await openStream(
      subscribeUrl(h, session.executionId),
      { threadId, runId: "r2", rosInvocationId: "invocation-1", afterSequence: 0 },
      auth,
    );
    expect(observer.res.status).to.equal(200);
    expect(observer.res.headers.get("cache-control")).to.equal("no-cache");
    await observer.readUntil(() => observer.events.some((e) => e.type === "CUSTOM"));
    h.runtime.releaseGate();
    await observer.readUntil(() => false);
    await run.readUntil(() => false);

    const types = observer.events.map((e) => e.type);
    expect(types.slice(0, 3)).to.deep.equal(["RUN_STARTED", "MESSAGES_SNAPSHOT", "CUSTOM"]);
    expect(observer.events[0]).to.include({ threadId, runId: "r2" });
    expect(observer.events[1].messages).to.deep.equal(expected);
    expect(observer.events[2].value).to.deep.include({
      executionId: session.executionId,
      taskId: session.taskId,
      aguiRunId: "r2",
    });
    const text = observer.events
      .filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
      .map((e) => e.delta)
      .join("");
    expect(text).to.equal(" done");
    expect(observer.events.at(-1)).to.deep.include({
      type: "RUN_FINISHED",
      threadId,
      runId: "r2",
      outcome: { type: "success" },
    });
    expect(run.events.at(-1)!.type).to.equal("RUN_FINISHED");
    await expectValidStream(observer.events);
    await expectValidStream(run.events);
    // The observer's A2A requests: the conversation, one GetTask, the subscription, the pipeline state.
    const observed = h.tap!.calls.slice(callsBefore).filter((c) => c.method !== "SendStreamingMessage");
    expect(observed.filter((c) => c.method === "GetTask" && c.params?.id === session.taskId)).to.have.length(
      1,
    );
    expect(observed.some((c) => c.method === "SubscribeToTask")).to.equal(true);
    expect(h.tap!.calls.some((c) => c.method === "CancelTask")).to.equal(false);
  });

  it("an observer that leaves cancels nothing and writes nothing; the run goes on to its end", async () => {
    const threadId = "thread-leave";
    const { run, session } = await slowSecondTurn(threadId);
    const onDisk = stateFile(h, threadId);
    const observer = await openStream(
      subscribeUrl(h, session.executionId),
      { threadId, runId: "r2", rosInvocationId: "invocation-1" },
      auth,
    );
    await observer.readUntil(() => observer.events.some((e) => e.type === "CUSTOM"));
    observer.abort();
    await new Promise((r) => setTimeout(r, 300));
    expect(stateFile(h, threadId), "the observer wrote the thread's state").to.equal(onDisk);
    expect(h.tap!.calls.some((c) => c.method === "CancelTask")).to.equal(false);
    // A second observer still attaches: the execution is running.
    const again = await subscribe(h, session.executionId, {
      threadId,
      runId: "r2",
      rosInvocationId: "invocation-1",
    });
    expect(again.status).to.equal(200);
    h.runtime.releaseGate();
    await run.readUntil(() => false);
    expect(run.events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    const rest = await again.text();
    expect(rest).to.include('"type":"RUN_FINISHED"');
    expect(h.tap!.calls.some((c) => c.method === "CancelTask")).to.equal(false);
  });

  it("an observer of an execution waiting for a permission ends with the same interrupt; after an adapter restart too", async () => {
    const threadId = "thread-wait";
    const res = await post(h.url, runInput(h, { threadId, runId: "r1", text: "[[permission]]" }), auth);
    const last = res.events.at(-1)!;
    expect(last.outcome).to.have.property("type", "interrupt");
    const interruptId = (last.outcome as { interrupts: Array<{ id: string }> }).interrupts[0].id;
    const session = sessionOf(res.events);
    for (const phase of ["live", "restarted"]) {
      if (phase === "restarted") {
        await h.agui.close();
        await h.restartAdapter();
      }
      const onDisk = stateFile(h, threadId);
      const observed = await openStream(
        subscribeUrl(h, session.executionId),
        { threadId, runId: "r1", rosInvocationId: "invocation-1" },
        auth,
      );
      expect(observed.res.status, phase).to.equal(200);
      await observed.readUntil(() => false);
      const end = observed.events.at(-1)!;
      expect(end.type, phase).to.equal("RUN_FINISHED");
      const interrupts = (end.outcome as { interrupts: Array<{ id: string }> }).interrupts;
      expect(
        interrupts.map((i) => i.id),
        phase,
      ).to.deep.equal([interruptId]);
      expect(observed.events[1].messages, phase).to.deep.equal([
        { id: "msg-r1", role: "user", content: "[[permission]]" },
      ]);
      await expectValidStream(observed.events);
      expect(stateFile(h, threadId), phase).to.equal(onDisk);
    }
    expect(h.tap!.calls.some((c) => c.method === "CancelTask")).to.equal(false);
  });

  it("a reconnecting HttpAgent (no messages of its own) gets the thread back: the official client takes the snapshot", async () => {
    const threadId = "thread-reconnect";
    const first = new HttpAgent({
      url: h.url,
      threadId,
      headers: auth,
      initialMessages: [{ id: "u1", role: "user", content: "first question" }],
    });
    expect(
      (await agentRun(first, { runId: "r1", forwardedProps: { iacCode: iacCode(h) } })).warnings,
    ).to.deep.equal([]);
    // Another page: a new agent on the same thread, with only its new message.
    const again = new HttpAgent({
      url: h.url,
      threadId,
      headers: auth,
      initialMessages: [{ id: "u2", role: "user", content: "second question" }],
    });
    const { events, warnings } = await agentRun(again, {
      runId: "r2",
      forwardedProps: { iacCode: iacCode(h) },
    });
    expect(warnings).to.deep.equal([]);
    expect(events.map((e) => e.type).slice(0, 2)).to.deep.equal(["RUN_STARTED", "MESSAGES_SNAPSHOT"]);
    // The official reducer keeps the messages it has where they are (its own new one first) and
    // adds the snapshot's others after them, in the snapshot's order; the answer comes last.
    const said = again.messages.map((m) => [m.id, m.role, m.content]);
    expect(said.slice(0, 2)).to.deep.equal([
      ["u2", "user", "second question"],
      ["u1", "user", "first question"],
    ]);
    expect(said.slice(2).map((m) => m.slice(1))).to.deep.equal([
      ["assistant", "Echo: first question"],
      ["assistant", "Echo: second question"],
    ]);
  });

  it("an observed task that changes identity ends the observation (A2A_PROTOCOL_ERROR); the run is not touched", async () => {
    const threadId = "thread-identity";
    const { run, session } = await slowSecondTurn(threadId);
    h.tap!.rewrite = (call, body) => {
      if (call.method !== "SubscribeToTask") return body;
      const result = (body as { result?: { task?: { id?: string }; statusUpdate?: { taskId?: string } } })
        .result;
      if (result?.task) result.task.id = "task-of-someone-else";
      if (result?.statusUpdate) result.statusUpdate.taskId = "task-of-someone-else";
      return body;
    };
    const observer = await openStream(
      subscribeUrl(h, session.executionId),
      { threadId, runId: "r2", rosInvocationId: "invocation-1" },
      auth,
    );
    await observer.readUntil(() => false);
    expect(observer.events.at(-1)).to.include({ type: "RUN_ERROR", code: "A2A_PROTOCOL_ERROR" });
    await expectValidStream(observer.events);
    h.tap!.rewrite = undefined;
    expect(h.tap!.calls.some((c) => c.method === "CancelTask")).to.equal(false);
    h.runtime.releaseGate();
    await run.readUntil(() => false);
    expect(run.events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
  });
});
