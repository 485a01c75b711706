// One rule for values a request may not carry, on JSON-RPC and REST alike: an
// enum value the schema does not have (a ListTasks status filter, a message
// role) is refused naming the field and the allowed values instead of being
// dropped (which widened the filter / read as a missing role), and a negative
// historyLength is refused on SendMessage as on GetTask and ListTasks.
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { startBindingsServer, type BindingsServer } from "./fixtures/server.js";

type Json = Record<string, unknown>;
const HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };

describe("a2a-bindings: request values refused the same way on JSON-RPC and REST", () => {
  let s: BindingsServer;
  before(async () => {
    s = await startBindingsServer();
  });
  after(() => s.close());

  async function rpc(method: string, params: Json): Promise<{ code: number; message: string; data?: Json }> {
    const res = await fetch(`${s.base}/`, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { error?: { code: number; message: string; data?: Json } };
    expect(body.error, JSON.stringify(body)).to.not.equal(undefined);
    return body.error!;
  }

  async function rest(
    method: string,
    path: string,
    body?: Json,
  ): Promise<{ status: number; message: string }> {
    const res = await fetch(`${s.base}${path}`, {
      method,
      headers: HEADERS,
      body: body && JSON.stringify(body),
    });
    const json = (await res.json()) as { error: { message: string } };
    return { status: res.status, message: json.error.message };
  }

  const message = (extra: Json = {}): Json => ({
    messageId: randomUUID(),
    role: "ROLE_USER",
    parts: [{ text: "hello" }],
    ...extra,
  });

  it("ListTasks with an unknown status: -32602 naming the field, as REST answers 400", async () => {
    const error = await rpc("ListTasks", { status: "TASK_STATE_BOGUS" });
    expect(error.code).to.equal(-32602);
    expect(error.message).to.match(
      /^Invalid params: status has no value TASK_STATE_BOGUS \(expected one of TASK_STATE_SUBMITTED, /,
    );
    expect(JSON.stringify(error.data)).to.contain('"field":"status"');
    expect((await rpc("ListTasks", { status: 99 })).message).to.contain("status has no value 99");
    const viaRest = await rest("GET", "/tasks?status=TASK_STATE_BOGUS");
    expect(viaRest.status).to.equal(400);
    expect(viaRest.message).to.contain("status has no value TASK_STATE_BOGUS");
    expect((await rest("GET", "/tasks?status=99")).status).to.equal(400);
  });

  it("a wrong role says which values are allowed", async () => {
    const error = await rpc("SendMessage", { message: message({ role: "user" }) });
    expect(error.code).to.equal(-32602);
    expect(error.message).to.equal(
      "Invalid params: message.role has no value user (expected one of ROLE_USER, ROLE_AGENT)",
    );
    const viaRest = await rest("POST", "/message:send", { message: message({ role: "user" }) });
    expect(viaRest).to.deep.equal({
      status: 400,
      message: "Invalid params: message.role has no value user (expected one of ROLE_USER, ROLE_AGENT)",
    });
    // A valid request still works, and ts-proto's UNRECOGNIZED (an unset enum) reads as unset.
    const ok = await fetch(`${s.base}/`, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "ListTasks",
        params: { status: "UNRECOGNIZED" },
      }),
    });
    expect(((await ok.json()) as Json).result).to.have.property("tasks");
  });

  it("SendMessage and SendStreamingMessage refuse configuration.historyLength -1 like GetTask", async () => {
    for (const method of ["SendMessage", "SendStreamingMessage"]) {
      const error = await rpc(method, { message: message(), configuration: { historyLength: -1 } });
      expect(error, method).to.deep.include({ code: -32602, message: "history length must be non-negative" });
      expect(JSON.stringify(error.data)).to.contain('"field":"configuration.historyLength"');
    }
    const viaRest = await rest("POST", "/message:send", {
      message: message(),
      configuration: { historyLength: -1 },
    });
    expect(viaRest).to.deep.equal({ status: 400, message: "history length must be non-negative" });
    const tasks = (await (
      await fetch(`${s.base}/`, {
        method: "POST",
        headers: HEADERS,
        body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ListTasks", params: {} }),
      })
    ).json()) as { result: { tasks: unknown[] } };
    expect(tasks.result.tasks).to.deep.equal([]);
  });
});
