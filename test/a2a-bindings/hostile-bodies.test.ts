// Hostile JSON bodies on the A2A HTTP bindings: too deep, too many values,
// invalid UTF-8. JSON-RPC answers -32600 / -32700 (HTTP 200, the JSON-RPC way),
// REST answers 400 with the google.rpc.Status body; the server keeps serving.
import { expect } from "chai";
import { jsonShapeFailure, parseJsonText } from "../../src/server/json-body.js";
import { cleanup, post, rpc, startTestServer, V1, type TestServer } from "../a2a/helpers.js";

interface RpcError {
  code: number;
  message: string;
  data: Array<{ reason: string }>;
}

describe("A2A bindings: hostile JSON bodies", () => {
  let t: TestServer;
  let rest: string;
  before(async () => {
    t = await startTestServer();
    rest = t.server.restUrl!;
  });
  after(async () => {
    await t.close();
    cleanup(t.dir);
  });

  const deep = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

  it("JSON-RPC: 5,000 nested arrays in params answer -32600 naming the limit", async () => {
    const body = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"metadata":${deep(5000)}}}`;
    const reply = await post(t.url, body, V1);
    expect(reply.status).to.equal(200);
    const error = reply.body.error as RpcError;
    expect(error.code).to.equal(-32600);
    expect(error.message).to.equal("JSON nested deeper than 64 levels");
    expect(error.data[0].reason).to.equal("INVALID_REQUEST");
    expect(reply.body.id).to.equal(null);
  });

  it("JSON-RPC: more than 500,000 values answer -32600; invalid UTF-8 answers -32700", async () => {
    const many = `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"x":[${"0,".repeat(500_001)}0]}}`;
    expect(((await post(t.url, many, V1)).body.error as RpcError).code).to.equal(-32600);
    const res = await fetch(t.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...V1 },
      body: Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ListTasks","x":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}'),
      ]),
    });
    expect(((await res.json()) as { error: RpcError }).error.code).to.equal(-32700);
    // The server still answers normally.
    expect((await rpc(t.url, "ListTasks", {})).body.result).to.be.an("object");
  });

  it("REST: deep JSON on message:send is 400 INVALID_REQUEST, never 5xx", async () => {
    const res = await fetch(`${rest}/message:send`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...V1 },
      body: `{"message":${deep(3000)}}`,
    });
    expect(res.status).to.equal(400);
    const body = (await res.json()) as { error: { message: string; details: Array<{ reason: string }> } };
    expect(body.error.message).to.equal("JSON nested deeper than 64 levels");
    expect(body.error.details[0].reason).to.equal("INVALID_REQUEST");
  });

  it("REST: deep JSON on tasks/{id}:cancel is 400 as well", async () => {
    const res = await fetch(`${rest}/tasks/x:cancel`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...V1 },
      body: `{"metadata":{"a":${deep(100)}}}`,
    });
    expect(res.status).to.equal(400);
  });

  it("the shape scan skips string contents, escaped quotes included", () => {
    expect(jsonShapeFailure(`["${"[".repeat(1000)}"]`)).to.equal(undefined);
    expect(jsonShapeFailure(`["\\"${"[".repeat(10)}", ${deep(70)}]`)).to.equal("too-deep");
    expect(jsonShapeFailure(`["\\\\", ${deep(70)}]`)).to.equal("too-deep");
    expect(jsonShapeFailure(deep(64))).to.equal(undefined);
    expect(jsonShapeFailure(deep(65))).to.equal("too-deep");
    expect(parseJsonText('  {"a": [1, {"b": "]]"}]} ')).to.deep.equal({
      ok: true,
      value: { a: [1, { b: "]]" }] },
    });
    expect(parseJsonText("   ")).to.deep.equal({ ok: true, value: undefined });
    expect(parseJsonText("{").ok).to.equal(false);
  });
});
