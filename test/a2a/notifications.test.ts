/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form JSON-RPC replies through `any` */
// JSON-RPC notifications (a request object without `id`) over HTTP: the method
// runs, and the server does not reply (JSON-RPC 2.0 §4.1), not even with an
// error: 204 No Content, once a request would have been answered. What is not
// a notification (`"id": null`, an invalid request without id, a batch) is
// still answered.
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import type { AnyJson as Json } from "./helpers.js";
import { V1, cleanup, post, startTestServer, userMessage, type TestServer } from "./helpers.js";

describe("A2A JSON-RPC notifications over HTTP", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
    cleanup(t.dir);
  });

  const notify = (method: string, params?: unknown, headers: Record<string, string> = V1) =>
    post(
      t.url,
      JSON.stringify({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }),
      headers,
    );

  async function tasksOf(contextId: string): Promise<Json[]> {
    const listed = await t.rpc("ListTasks", { contextId });
    return (listed.body.result as Json).tasks as Json[];
  }

  it("a SendMessage notification runs its turn to the end, then gets 204 with no body", async () => {
    const contextId = `note-${randomUUID()}`;
    const reply = await notify("SendMessage", { message: userMessage("noted once", { contextId }) });
    expect(reply.status).to.equal(204);
    expect(reply.raw).to.equal("");
    expect(reply.contentType).to.equal("");
    expect(t.runtime.prompts).to.include("noted once");
    const tasks = await tasksOf(contextId);
    expect(tasks.map((task) => task.status.state as string)).to.deep.equal(["TASK_STATE_INPUT_REQUIRED"]);
  });

  it("a streaming notification gets 204 once its task exists; the turn goes on without it", async () => {
    const contextId = `note-${randomUUID()}`;
    const reply = await notify("SendStreamingMessage", {
      message: userMessage("[[gate]] streamed", { contextId }),
    });
    // Answered while the turn waits at the gate: no event stream is held open for nobody.
    expect(reply.status).to.equal(204);
    expect(reply.raw).to.equal("");
    const [task] = await tasksOf(contextId);
    expect(task.status.state).to.equal("TASK_STATE_WORKING");
    t.runtime.releaseGate();
    let state = "";
    for (let i = 0; i < 200 && state !== "TASK_STATE_INPUT_REQUIRED"; i++) {
      state = (await tasksOf(contextId))[0].status.state as string;
      if (state !== "TASK_STATE_INPUT_REQUIRED") await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(state).to.equal("TASK_STATE_INPUT_REQUIRED");
  });

  it("a failing notification gets 204 too: unknown method, bad params, unknown task, unsupported version", async () => {
    for (const [method, params, headers] of [
      ["NoSuchMethod", {}, V1],
      ["GetTask", { id: 5 }, V1],
      ["ListTasks", { status: "TASK_STATE_NOPE" }, V1],
      ["GetTask", { id: "no-such-task" }, V1],
      ["ListTasks", {}, { "A2A-Version": "0.3" }],
    ] as Array<[string, unknown, Record<string, string>]>) {
      const reply = await notify(method, params, headers);
      expect(reply.status, method).to.equal(204);
      expect(reply.raw, method).to.equal("");
    }
  });

  it("what is not a notification is answered: `id: null`, an invalid request without id, a batch", async () => {
    const nullId = await post(t.url, JSON.stringify({ jsonrpc: "2.0", id: null, method: "ListTasks" }), V1);
    expect(nullId.status).to.equal(200);
    expect(nullId.body.id).to.equal(null);
    expect(nullId.body).to.have.property("result");
    for (const invalid of [
      { method: "ListTasks" },
      { jsonrpc: "1.0", method: "ListTasks" },
      { jsonrpc: "2.0" },
    ]) {
      const reply = await post(t.url, JSON.stringify(invalid), V1);
      expect(reply.status, JSON.stringify(invalid)).to.equal(200);
      expect(reply.body.id).to.equal(null);
      expect((reply.body.error as Json).code).to.equal(-32600);
    }
    const batch = await post(t.url, JSON.stringify([{ jsonrpc: "2.0", method: "ListTasks" }]), V1);
    expect(batch.body).to.deep.include({ id: null });
    expect(batch.body.error).to.deep.include({ code: -32600, message: "Batch requests are not supported" });
  });
});
