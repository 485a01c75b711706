// One rule for values a request may not carry, on JSON-RPC, REST and gRPC
// alike: an enum value the schema does not have (a ListTasks status filter, a
// message role) is refused naming the field and the allowed values instead of
// being dropped or kept (which widened the filter / read as a missing role /
// stored role 7), and a negative historyLength is refused on SendMessage as on
// GetTask and ListTasks. gRPC requests are raw protobuf-es bytes (a generated
// client cannot write an unknown enum number), on the unary fast path and
// through Connect (a stream, a compressed unary call).
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import * as grpc from "@grpc/grpc-js";
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { pb } from "../../src/contract/index.js";
import { errorInfoOf } from "./fixtures/grpc-client.js";
import { startBindingsServer, type BindingsServer } from "./fixtures/server.js";

type Json = Record<string, unknown>;
const HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };

describe("a2a-bindings: request values refused the same way on JSON-RPC, REST and gRPC", () => {
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

  describe("gRPC: an unknown enum number is INVALID_ARGUMENT with the JSON-RPC text", () => {
    const identity = (b: Buffer) => b;
    const md = () => {
      const m = new grpc.Metadata();
      m.set("a2a-version", "1.0");
      return m;
    };
    const bytes = <Desc extends DescMessage>(schema: Desc, init: MessageInitShape<Desc>): Buffer =>
      Buffer.from(toBinary(schema, create(schema, init)));
    const path = (method: string) => `/${pb.A2AService.typeName}/${method}`;

    function call(
      client: grpc.Client,
      method: string,
      body: Buffer,
      stream = false,
    ): Promise<grpc.ServiceError> {
      return new Promise((resolve, reject) => {
        const fail = (error: grpc.ServiceError | null) =>
          error ? resolve(error) : reject(new Error(`${method} was accepted`));
        if (!stream) return void client.makeUnaryRequest(path(method), identity, identity, body, md(), fail);
        const call = client.makeServerStreamRequest(path(method), identity, identity, body, md());
        call.on("data", () => reject(new Error(`${method} streamed an event`)));
        call.on("error", fail);
        call.on("end", () => fail(null));
      });
    }

    const expectRefused = (error: grpc.ServiceError, field: string, text: string) => {
      expect(error.code).to.equal(grpc.status.INVALID_ARGUMENT);
      // grpc-js reads grpc-message with decodeURI, which leaves Connect's %3A and %2C encoded.
      expect(decodeURIComponent(error.details)).to.equal(text);
      expect(errorInfoOf(error)).to.deep.include({ reason: "INVALID_PARAMS" });
      expect(errorInfoOf(error)?.metadata).to.deep.equal({ field });
    };

    const listStatus99 = () => bytes(pb.ListTasksRequestSchema, { status: 99 as pb.TaskState });
    const role7 = () =>
      bytes(pb.SendMessageRequestSchema, {
        message: {
          messageId: randomUUID(),
          role: 7 as pb.Role,
          parts: [{ content: { case: "text", value: "hi" } }],
        },
      });

    it("ListTasks status 99 and SendMessage role 7 on the unary fast path, as JSON-RPC words it", async () => {
      const client = new grpc.Client(s.server.grpcTarget, grpc.credentials.createInsecure());
      try {
        const status = (await rpc("ListTasks", { status: 99 })).message;
        expect(status).to.match(
          /^Invalid params: status has no value 99 \(expected one of TASK_STATE_SUBMITTED, /,
        );
        expectRefused(await call(client, "ListTasks", listStatus99()), "status", status);
        const role = (await rpc("SendMessage", { message: message({ role: 7 }) })).message;
        expect(role).to.equal(
          "Invalid params: message.role has no value 7 (expected one of ROLE_USER, ROLE_AGENT)",
        );
        expectRefused(await call(client, "SendMessage", role7()), "message.role", role);
      } finally {
        client.close();
      }
    });

    it("the same through Connect: SendStreamingMessage role 7, a gzip-compressed ListTasks status 99", async () => {
      const gzip = new grpc.Client(s.server.grpcTarget, grpc.credentials.createInsecure(), {
        "grpc.default_compression_algorithm": grpc.compressionAlgorithms.gzip,
      });
      try {
        const role = "Invalid params: message.role has no value 7 (expected one of ROLE_USER, ROLE_AGENT)";
        expectRefused(await call(gzip, "SendStreamingMessage", role7(), true), "message.role", role);
        const refused = await call(gzip, "ListTasks", listStatus99());
        const text = decodeURIComponent(refused.details);
        expect(text).to.match(/^Invalid params: status has no value 99 /);
        expectRefused(refused, "status", text);
      } finally {
        gzip.close();
      }
      // Nothing was stored by any of the refused messages.
      const tasks = (await (await fetch(`${s.base}/tasks`, { headers: HEADERS })).json()) as {
        tasks: unknown[];
      };
      expect(tasks.tasks).to.deep.equal([]);
    });
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
