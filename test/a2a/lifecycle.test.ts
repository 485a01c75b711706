/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument -- tests read free-form JSON-RPC replies through `any` */
import { expect } from "chai";
import {
  cleanup,
  openStream,
  resultOf,
  startTestServer,
  stateOf,
  userMessage,
  type TestServer,
} from "./helpers.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests peek into free-form JSON
type Json = Record<string, any>;

describe("A2A task lifecycle: concurrency, cancel, subscribe, list", () => {
  let t: TestServer;
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => {
    await t.close();
    cleanup(t.dir);
  });

  it("fails a second task on a busy context with 'Task is already working.' and runs other contexts concurrently", async () => {
    const slow = await openStream(t.url, "SendStreamingMessage", {
      message: userMessage("[[slow]]", { contextId: "ctx-busy" }),
    });
    const head = await slow.until((e) => resultOf(e).statusUpdate?.status?.message !== undefined);
    const taskId = resultOf(head[0]).task.id as string;
    const busy = await t.rpc("SendMessage", { message: userMessage("again", { contextId: "ctx-busy" }) });
    const failed = (busy.body.result as Json).task as Json;
    expect(failed.id).to.not.equal(taskId);
    expect(failed.status.state).to.equal("TASK_STATE_FAILED");
    expect(failed.status.message.parts[0].text).to.equal("Task is already working.");
    // The running task was not touched.
    const running = await t.rpc("GetTask", { id: taskId });
    expect((running.body.result as Json).status.state).to.equal("TASK_STATE_WORKING");
    // Same task id while it runs: refused without touching it.
    const sameTask = await t.rpc("SendMessage", { message: userMessage("again", { taskId }) });
    expect(sameTask.body.error).to.deep.include({ code: -32004, message: "Task is already working." });
    // Another context runs to completion meanwhile.
    const other = await t.rpc("SendMessage", {
      message: userMessage("parallel", { contextId: "ctx-other" }),
    });
    expect(((other.body.result as Json).task as Json).status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    const canceled = await t.rpc("CancelTask", { id: taskId });
    expect((canceled.body.result as Json).status.state).to.equal("TASK_STATE_CANCELED");
    const tail = await slow.rest();
    expect(stateOf(tail.at(-1)!)).to.equal("TASK_STATE_CANCELED");
  });

  it("cancels an active streaming turn; the context then continues with the same session", async () => {
    const stream = await openStream(t.url, "SendStreamingMessage", { message: userMessage("[[slow]]") });
    const head = await stream.until((e) => stateOf(e) === "TASK_STATE_WORKING");
    const task = resultOf(head[0]).task as Json;
    const reply = await t.rpc("CancelTask", { id: task.id });
    const canceled = reply.body.result as Json;
    expect(canceled.status.state).to.equal("TASK_STATE_CANCELED");
    expect(canceled.status.message.parts[0].text).to.equal("Task canceled.");
    const rest = await stream.rest();
    expect(stateOf(rest.at(-1)!)).to.equal("TASK_STATE_CANCELED");
    const again = await t.rpc("CancelTask", { id: task.id });
    expect(again.body.error).to.deep.include({ code: -32002, message: "Task cannot be canceled" });
    const followUp = await t.rpc("SendMessage", {
      message: userMessage("after cancel", { contextId: task.contextId }),
    });
    const next = (followUp.body.result as Json).task as Json;
    expect(next.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(next.metadata.iac_code.iacCodeSessionId).to.equal(canceled.metadata.iac_code.iacCodeSessionId);
    const terminal = await t.rpc("SendMessage", { message: userMessage("x", { taskId: task.id }) });
    expect(terminal.body.error).to.deep.include({ code: -32004 });
  });

  it("cancels a task waiting for a permission answer (the wait is denied)", async () => {
    const reply = await t.rpc("SendMessage", { message: userMessage("[[permission]]") });
    const task = (reply.body.result as Json).task as Json;
    expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    const canceled = await t.rpc("CancelTask", { id: task.id });
    expect((canceled.body.result as Json).status.state).to.equal("TASK_STATE_CANCELED");
  });

  it("CancelTask: unknown -> TaskNotFoundError, finished -> TaskNotCancelableError", async () => {
    const unknown = await t.rpc("CancelTask", { id: "nope" });
    expect((unknown.body.error as Json).code).to.equal(-32001);
    expect((unknown.body.error as Json).data[0].reason).to.equal("TASK_NOT_FOUND");
    const done = await t.rpc("SendMessage", { message: userMessage("done") });
    const finished = await t.rpc("CancelTask", { id: ((done.body.result as Json).task as Json).id });
    expect((finished.body.error as Json).data[0].reason).to.equal("TASK_NOT_CANCELABLE");
    const missing = await t.rpc("CancelTask", {});
    expect((missing.body.error as Json).code).to.equal(-32602);
  });

  it("SubscribeToTask on an active task: the current Task first, then its events until the turn ends", async () => {
    const started = await t.rpc("SendMessage", {
      message: userMessage("[[gate]]"),
      configuration: { returnImmediately: true },
    });
    const task = (started.body.result as Json).task as Json;
    // Wait until the turn reached the gate, so the subscription sees it working.
    for (;;) {
      const got = await t.rpc("GetTask", { id: task.id });
      if ((got.body.result as Json).status.message) break;
      await new Promise((r) => setImmediate(r));
    }
    const sub = await openStream(t.url, "SubscribeToTask", { id: task.id });
    expect(sub.contentType).to.equal("text/event-stream");
    const first = await sub.next();
    expect(resultOf(first!).task.id).to.equal(task.id);
    expect(resultOf(first!).task.status.state).to.equal("TASK_STATE_WORKING");
    const second = await openStream(t.url, "SubscribeToTask", { id: task.id });
    await second.next();
    t.runtime.releaseGate();
    const rest = await sub.rest();
    const texts = rest
      .map((e) => resultOf(e).statusUpdate?.status?.message?.parts?.[0]?.text)
      .filter(Boolean);
    expect(texts).to.include(" - gate passed");
    expect(stateOf(rest.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
    const rest2 = await second.rest();
    expect(rest2.map((e) => JSON.stringify(e.result))).to.deep.equal(
      rest.map((e) => JSON.stringify(e.result)),
    );
  });

  it("SubscribeToTask on a finished, failed or unknown task errors at once", async () => {
    const done = await t.rpc("SendMessage", { message: userMessage("done") });
    const finished = await t.rpc("SubscribeToTask", { id: ((done.body.result as Json).task as Json).id });
    expect(finished.contentType).to.equal("application/json");
    expect(finished.body.error).to.deep.include({ code: -32001 });
    expect((finished.body.error as Json).message).to.match(/is not active$/);
    const failed = await t.rpc("SendMessage", { message: userMessage("  ") });
    const failedSub = await t.rpc("SubscribeToTask", { id: ((failed.body.result as Json).task as Json).id });
    expect(failedSub.body.error).to.deep.include({ code: -32001 });
    const unknown = await t.rpc("SubscribeToTask", { id: "nope" });
    expect(unknown.body.error).to.deep.include({ code: -32001, message: "Task nope not found" });
  });

  it("GetTask honours historyLength and rejects negative values", async () => {
    const done = await t.rpc("SendMessage", { message: userMessage("history") });
    const id = ((done.body.result as Json).task as Json).id as string;
    const full = await t.rpc("GetTask", { id });
    expect((full.body.result as Json).history).to.have.length(2);
    const one = await t.rpc("GetTask", { id, historyLength: 1 });
    expect((one.body.result as Json).history).to.have.length(1);
    const none = await t.rpc("GetTask", { id, history_length: 0 });
    expect(none.body.result).to.not.have.property("history");
    const negative = await t.rpc("GetTask", { id, historyLength: -1 });
    expect(negative.body.error).to.deep.include({
      code: -32602,
      message: "history length must be non-negative",
    });
    const stillFull = await t.rpc("GetTask", { id });
    expect((stillFull.body.result as Json).history).to.have.length(2);
  });

  it("ListTasks filters, orders by status timestamp desc then id desc, and pages with an opaque token", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const r = await t.rpc("SendMessage", { message: userMessage(`list ${i}`, { contextId: "ctx-list" }) });
      ids.push(((r.body.result as Json).task as Json).id as string);
    }
    await t.rpc("SendMessage", { message: userMessage("elsewhere", { contextId: "ctx-else" }) });
    await t.rpc("SendMessage", { message: userMessage("[[tool]]", { contextId: "ctx-else" }) });
    const all = await t.rpc("ListTasks", { contextId: "ctx-list" });
    const list = all.body.result as Json;
    expect(list.totalSize).to.equal(5);
    expect(list.nextPageToken).to.equal("");
    const order = (list.tasks as Json[]).map((task) => [Date.parse(task.status.timestamp), task.id]);
    const sorted = [...order].sort(
      (a, b) => (b[0] as number) - (a[0] as number) || (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : 0),
    );
    expect(order).to.deep.equal(sorted);
    for (const task of list.tasks as Json[]) expect(task).to.not.have.property("artifacts");

    const page1 = (await t.rpc("ListTasks", { contextId: "ctx-list", pageSize: 2 })).body.result as Json;
    expect(page1.tasks).to.have.length(2);
    expect(page1.pageSize).to.equal(2);
    expect(page1.nextPageToken).to.not.equal("");
    const page2 = (
      await t.rpc("ListTasks", { contextId: "ctx-list", pageSize: 2, pageToken: page1.nextPageToken })
    ).body.result as Json;
    const page3 = (
      await t.rpc("ListTasks", { contextId: "ctx-list", pageSize: 2, pageToken: page2.nextPageToken })
    ).body.result as Json;
    expect(page3.tasks).to.have.length(1);
    expect(page3.nextPageToken).to.equal("");
    const seen = [...page1.tasks, ...page2.tasks, ...page3.tasks].map((task: Json) => task.id);
    expect(seen).to.deep.equal((list.tasks as Json[]).map((task) => task.id));
    expect([...seen].sort()).to.deep.equal([...ids].sort());

    const failed = (await t.rpc("ListTasks", { status: "TASK_STATE_FAILED" })).body.result as Json;
    expect(failed.totalSize).to.equal(0);
    const withArtifacts = (await t.rpc("ListTasks", { contextId: "ctx-else", includeArtifacts: true })).body
      .result as Json;
    expect((withArtifacts.tasks as Json[]).some((task) => task.artifacts?.length === 1)).to.equal(true);
    const noHistory = (await t.rpc("ListTasks", { contextId: "ctx-else", historyLength: 0 })).body
      .result as Json;
    for (const task of noHistory.tasks as Json[]) expect(task).to.not.have.property("history");
    const after = (await t.rpc("ListTasks", { statusTimestampAfter: "2999-01-01T00:00:00Z" })).body
      .result as Json;
    expect(after.totalSize).to.equal(0);
  });

  it("ListTasks rejects bad page sizes and tokens", async () => {
    for (const [params, message] of [
      [{ pageSize: 0 }, "minimum page size is 1"],
      [{ pageSize: 101 }, "maximum page size is 100"],
      [{ pageToken: "!!!" }, "Token is not a valid base64-encoded cursor."],
      [
        { pageToken: Buffer.from("unknown-task").toString("base64") },
        `Invalid page token: ${Buffer.from("unknown-task").toString("base64")}`,
      ],
      [{ historyLength: -2 }, "history length must be non-negative"],
    ] as Array<[Json, string]>) {
      const reply = await t.rpc("ListTasks", params);
      expect(reply.body.error, message).to.deep.include({ code: -32602, message });
    }
    const max = await t.rpc("ListTasks", { pageSize: 100 });
    expect((max.body.result as Json).pageSize).to.equal(100);
    const min = await t.rpc("ListTasks", { pageSize: 1 });
    expect((min.body.result as Json).pageSize).to.equal(1);
  });

  it("evicts idle contexts and restores them on demand with the same session", async () => {
    const first = await t.rpc("SendMessage", {
      message: userMessage("remember me", { contextId: "ctx-idle" }),
    });
    const session = ((first.body.result as Json).task as Json).metadata.iac_code.iacCodeSessionId as string;
    expect(t.server.service.isContextLoaded("ctx-idle")).to.equal(true);
    const evicted = await t.server.service.evictIdleContexts(Date.now() + 3_600_001);
    expect(evicted).to.be.greaterThan(0);
    expect(t.server.service.isContextLoaded("ctx-idle")).to.equal(false);
    expect(t.runtime.sessions.get(session)!.closed).to.equal(true);
    const again = await t.rpc("SendMessage", {
      message: userMessage("still there?", { contextId: "ctx-idle" }),
    });
    const task = (again.body.result as Json).task as Json;
    expect(task.metadata.iac_code.iacCodeSessionId).to.equal(session);
    expect(task.history.at(-1).parts[0].text).to.equal("Echo(turn 2): still there?");
  });

  it("a failed runtime start fails the task with a sanitised text", async () => {
    t.runtime.failOpen = Object.assign(new Error("DASHSCOPE_API_KEY missing in /home/bob/.env"), {
      code: "missing_credentials",
    });
    const reply = await t.rpc("SendMessage", { message: userMessage("hi", { contextId: "ctx-noauth" }) });
    const task = (reply.body.result as Json).task as Json;
    expect(task.status.state).to.equal("TASK_STATE_FAILED");
    expect(task.status.message.parts[0].text).to.match(
      /^The model provider needs valid credentials: check the API key, then retry \(error [0-9a-f-]{36}\)\.$/,
    );
    expect(task.status.message.parts[0].text).to.not.match(/bob|DASHSCOPE/);
  });
});
