// A number ProtoJSON cannot write back (1e400 parses as Infinity; a binary
// double may be NaN) is refused at decode on every binding as invalid params
// naming the field; nothing is stored and ListTasks keeps answering.
import { expect } from "chai";
import type * as grpc from "@grpc/grpc-js";
import { startBindingsServer, type BindingsServer } from "./fixtures/server.js";
import {
  a2aGrpcClient,
  collect,
  errorInfoOf,
  metadata,
  unary,
  type A2AGrpcClient,
} from "./fixtures/grpc-client.js";

const MESSAGE_WITH = (where: "metadata" | "data") =>
  where === "metadata"
    ? '{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":{"iac_code":{"budget":1e400}}}'
    : '{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"hi"},{"data":{"list":[1,-1e999]}}]}';

describe("A2A bindings refuse non-finite numbers", () => {
  let s: BindingsServer;
  let client: A2AGrpcClient;

  before(async () => {
    s = await startBindingsServer();
    client = a2aGrpcClient(s.server.grpcTarget);
  });
  after(async () => {
    client.close();
    await s.close();
  });

  async function listTotal(): Promise<number> {
    const res = await fetch(`${s.base}/tasks`, { headers: { "A2A-Version": "1.0" } });
    expect(res.status).to.equal(200);
    return ((await res.json()) as { totalSize: number }).totalSize;
  }

  it("JSON-RPC: -32602 naming the field, for SendMessage and SendStreamingMessage", async () => {
    for (const [method, where, field] of [
      ["SendMessage", "metadata", "message.metadata.iac_code.budget"],
      ["SendStreamingMessage", "data", "message.parts[1].data.list[1]"],
    ] as const) {
      const res = await fetch(`${s.base}/`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
        body: `{"jsonrpc":"2.0","id":7,"method":"${method}","params":{"message":${MESSAGE_WITH(where)}}}`,
      });
      const reply = (await res.json()) as { error: { code: number; message: string; data: unknown[] } };
      expect(reply.error.code, method).to.equal(-32602);
      expect(reply.error.message).to.include(field).and.include("not a finite number");
      expect(reply.error.data[0]).to.deep.include({ metadata: { field } });
    }
    expect(await listTotal()).to.equal(0);
  });

  it("REST: 400 INVALID_ARGUMENT naming the field", async () => {
    const res = await fetch(`${s.base}/message:send`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: `{"message":${MESSAGE_WITH("metadata")}}`,
    });
    expect(res.status).to.equal(400);
    const body = (await res.json()) as { error: { message: string; status: string } };
    expect(body.error.status).to.equal("INVALID_ARGUMENT");
    expect(body.error.message).to.include("message.metadata.iac_code.budget");
    expect(await listTotal()).to.equal(0);
  });

  it("gRPC: INVALID_ARGUMENT naming the field, unary and streaming", async () => {
    const message = (value: number) => ({
      message: {
        messageId: "m-3",
        role: "ROLE_USER",
        parts: [{ text: "hi" }],
        metadata: { fields: { n: { numberValue: value } } },
      },
    });
    for (const value of [Infinity, NaN]) {
      const error = await unary((cb) => client.SendMessage(message(value), metadata(), cb)).then(
        () => undefined,
        (e: grpc.ServiceError) => e,
      );
      expect(error?.code).to.equal(3);
      expect(error?.details).to.include("message.metadata.n");
      expect(errorInfoOf(error!)?.reason).to.equal("INVALID_PARAMS");
    }
    const streamed = await collect(client.SendStreamingMessage(message(-Infinity), metadata())).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(streamed?.code).to.equal(3);
    const list = await unary<Record<string, unknown>>((cb) => client.ListTasks({}, metadata(), cb));
    expect(list.totalSize ?? 0, "zero is omitted on the wire").to.equal(0);
    // A finite request still goes through on the same connection.
    const ok = await unary<Record<string, unknown>>((cb) => client.SendMessage(message(2.5), metadata(), cb));
    expect(ok.task).to.be.an("object");
    expect(await listTotal()).to.equal(1);
  });
});
