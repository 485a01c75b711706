// The gRPC binding's unary fast path (src/a2a/bindings/grpc-unary.ts) on the
// wire: raw HTTP/2 for the framing a gRPC library never sends wrong (envelopes
// cut short, doubled, compressed without an encoding, too large; deadlines),
// @grpc/grpc-js for cancellation and for a compressed request, which takes
// Connect's path. A stub core records the signal each call was given.
import http2 from "node:http2";
import { expect } from "chai";
import pino from "pino";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { pb } from "../../src/contract/index.js";
import { Authenticator } from "../../src/a2a/core/request/auth.js";
import type { CallContext } from "../../src/a2a/core/request/call-context.js";
import type { A2AService } from "../../src/a2a/core/service.js";
import { createA2aGrpcHandler } from "../../src/a2a/bindings/grpc.js";
import { listenOnePort, type OnePortListener } from "../../src/server/one-port.js";
import { a2aGrpcClient, metadata, unary, type A2AGrpcClient } from "./fixtures/grpc-client.js";

const GET_TASK = `/${pb.A2AService.typeName}/GetTask`;
const READ_MAX_BYTES = 1024;

/** GetTask answers a task named like the request; "wait" waits for its call's signal. */
const aborted: string[] = [];
const stubCore = {
  getTask(request: pb.GetTaskRequest, ctx: CallContext): Promise<pb.Task> {
    if (request.id !== "wait")
      return Promise.resolve(create(pb.TaskSchema, { id: request.id, contextId: "ctx" }));
    return new Promise((_resolve, reject) => {
      ctx.signal.addEventListener("abort", () => {
        aborted.push(request.id);
        reject(new Error("aborted"));
      });
    });
  },
} as unknown as A2AService;

interface RawAnswer {
  status: number;
  contentType: string | undefined;
  trailers: http2.IncomingHttpHeaders;
  body: Buffer;
}

const envelope = (message: Uint8Array, flags = 0): Buffer => {
  const prefix = Buffer.alloc(5);
  prefix[0] = flags;
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
};

const getTaskBytes = (id: string): Uint8Array =>
  toBinary(pb.GetTaskRequestSchema, create(pb.GetTaskRequestSchema, { id }));

describe("a2a-bindings: gRPC unary fast path", () => {
  let listener: OnePortListener;
  let session: http2.ClientHttp2Session;
  let client: A2AGrpcClient;

  before(async () => {
    const logger = pino({ level: "silent" });
    const auth = new Authenticator({ apiKeyHeader: "X-API-Key" });
    const grpcHandler = createA2aGrpcHandler({ core: stubCore, auth, logger, readMaxBytes: READ_MAX_BYTES });
    listener = await listenOnePort({
      host: "127.0.0.1",
      port: 0,
      http1: (_req, res) => res.end(),
      http2: grpcHandler,
    });
    session = http2.connect(`http://127.0.0.1:${listener.port}`);
    client = a2aGrpcClient(`127.0.0.1:${listener.port}`);
  });

  after(async () => {
    client.close();
    session.close();
    await listener.close();
  });

  /** One call written as given (ended unless `keepOpen`); resolves when the server has ended its side. */
  function raw(body: Buffer, headers: http2.OutgoingHttpHeaders = {}, keepOpen = false): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": GET_TASK,
        "content-type": "application/grpc",
        te: "trailers",
        "a2a-version": "1.0",
        ...headers,
      });
      let status = 0;
      let contentType: string | undefined;
      let trailers: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      stream.on("response", (h) => {
        status = Number(h[":status"]);
        contentType = h["content-type"];
      });
      stream.on("trailers", (t: http2.IncomingHttpHeaders) => {
        trailers = t;
      });
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("error", reject);
      stream.on("end", () => {
        resolve({ status, contentType, trailers, body: Buffer.concat(chunks) });
        if (keepOpen) stream.close();
      });
      if (keepOpen) stream.write(body);
      else stream.end(body);
    });
  }

  it("answers a plain call: one envelope, grpc+proto, status 0 in the trailers", async () => {
    const answer = await raw(envelope(getTaskBytes("t-1")));
    expect(answer.status).to.equal(200);
    expect(answer.contentType).to.equal("application/grpc+proto");
    expect(answer.trailers["grpc-status"]).to.equal("0");
    expect(answer.body.readUInt32BE(1)).to.equal(answer.body.length - 5);
    expect(fromBinary(pb.TaskSchema, answer.body.subarray(5)).id).to.equal("t-1");
  });

  it("answers a call whose envelope arrives one byte at a time", async () => {
    const stream = session.request({
      ":method": "POST",
      ":path": GET_TASK,
      "content-type": "application/grpc+proto",
      "a2a-version": "1.0",
    });
    const trailers = new Promise<http2.IncomingHttpHeaders>((resolve) => stream.on("trailers", resolve));
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    for (const byte of envelope(getTaskBytes("slow"))) {
      stream.write(Buffer.of(byte));
      await new Promise((resolve) => setImmediate(resolve));
    }
    stream.end();
    expect((await trailers)["grpc-status"]).to.equal("0");
    await new Promise((resolve) => stream.on("close", resolve));
    expect(fromBinary(pb.TaskSchema, Buffer.concat(chunks).subarray(5)).id).to.equal("slow");
  });

  const refusals: { what: string; body: Buffer; code: grpc.status; message: RegExp }[] = [
    {
      what: "no message",
      body: Buffer.alloc(0),
      code: grpc.status.INVALID_ARGUMENT,
      message: /missing input message/,
    },
    {
      what: "an envelope cut short",
      body: envelope(getTaskBytes("t-2")).subarray(0, 6),
      code: grpc.status.INVALID_ARGUMENT,
      message: /incomplete envelope/,
    },
    {
      what: "a prefix cut short",
      body: Buffer.of(0, 0),
      code: grpc.status.INVALID_ARGUMENT,
      message: /incomplete envelope/,
    },
    {
      what: "two messages",
      body: Buffer.concat([envelope(getTaskBytes("a")), envelope(getTaskBytes("b"))]),
      code: grpc.status.INVALID_ARGUMENT,
      message: /extra input message/,
    },
    {
      what: "a compressed message without grpc-encoding",
      body: envelope(getTaskBytes("t-3"), 1),
      code: grpc.status.INVALID_ARGUMENT,
      message: /compressed message without grpc-encoding/,
    },
    {
      what: "bytes that are not a GetTaskRequest",
      body: envelope(Buffer.of(0x0a, 0x05, 0x61)),
      code: grpc.status.INVALID_ARGUMENT,
      message: /^parse binary: /,
    },
    {
      what: "a message over readMaxBytes",
      body: envelope(Buffer.alloc(READ_MAX_BYTES + 1)),
      code: grpc.status.RESOURCE_EXHAUSTED,
      message: /message size 1025 is larger than configured readMaxBytes 1024/,
    },
  ];
  for (const { what, body, code, message } of refusals) {
    it(`refuses ${what} with ${grpc.status[code]}, and keeps serving`, async () => {
      const answer = await raw(body);
      expect(answer.trailers["grpc-status"]).to.equal(String(code));
      expect(decodeURIComponent(String(answer.trailers["grpc-message"]))).to.match(message);
      expect(answer.body).to.have.length(0);
      const next = await raw(envelope(getTaskBytes("after")));
      expect(fromBinary(pb.TaskSchema, next.body.subarray(5)).id).to.equal("after");
    });
  }

  it("refuses a 4 GiB envelope from its prefix alone, before any of the message arrives", async () => {
    const answer = await raw(Buffer.of(0, 0xff, 0xff, 0xff, 0xff), {}, true);
    expect(answer.trailers["grpc-status"]).to.equal(String(grpc.status.RESOURCE_EXHAUSTED));
  });

  it("ends a call at its grpc-timeout with DEADLINE_EXCEEDED, and aborts the call's signal", async () => {
    aborted.length = 0;
    const answer = await raw(envelope(getTaskBytes("wait")), { "grpc-timeout": "50m" });
    expect(answer.trailers["grpc-status"]).to.equal(String(grpc.status.DEADLINE_EXCEEDED));
    expect(aborted).to.deep.equal(["wait"]);
  });

  it("refuses a grpc-timeout that is not one", async () => {
    const answer = await raw(envelope(getTaskBytes("t-4")), { "grpc-timeout": "soon" });
    expect(answer.trailers["grpc-status"]).to.equal(String(grpc.status.INVALID_ARGUMENT));
    expect(decodeURIComponent(String(answer.trailers["grpc-message"]))).to.contain(
      "invalid grpc timeout value",
    );
  });

  it("takes a deadline too long for a timer as no deadline", async () => {
    const answer = await raw(envelope(getTaskBytes("t-5")), { "grpc-timeout": "99999999H" });
    expect(answer.trailers["grpc-status"]).to.equal("0");
  });

  it("aborts the call's signal when the client cancels", async () => {
    aborted.length = 0;
    // The fixture's client type leaves out the call object grpc-js returns.
    const call = client.GetTask(
      { id: "wait" },
      metadata(),
      () => undefined,
    ) as unknown as grpc.ClientUnaryCall;
    await new Promise((resolve) => setTimeout(resolve, 50));
    call.cancel();
    for (let i = 0; i < 100 && aborted.length === 0; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(aborted).to.deep.equal(["wait"]);
  });

  it("serves a gzip-compressed request (through Connect) with the same answer", async () => {
    const gzipClient = a2aGrpcClient(`127.0.0.1:${listener.port}`, undefined, {
      "grpc.default_compression_algorithm": grpc.compressionAlgorithms.gzip,
    });
    try {
      const task = await unary<Record<string, unknown>>((cb) =>
        gzipClient.GetTask({ id: "zipped" }, metadata(), cb),
      );
      expect(task.id).to.equal("zipped");
    } finally {
      gzipClient.close();
    }
  });
});
