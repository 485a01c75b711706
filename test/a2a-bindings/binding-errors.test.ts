// Failure shapes the real core rarely produces, driven through the REST and
// gRPC bindings with a stub core: an error after the stream started (SSE
// `event: error` / gRPC status after messages), a stream that ends before any
// event, and unexpected errors, which reach clients as a sanitised INTERNAL
// error with an id while the details go to the log only.
import { Writable } from "node:stream";
import { expect } from "chai";
import Koa from "koa";
import pino from "pino";
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { pb } from "../../src/contract/index.js";
import { Authenticator } from "../../src/a2a/core/request/auth.js";
import { A2AError } from "../../src/a2a/core/request/errors.js";
import type { A2AService } from "../../src/a2a/core/service.js";
import { createA2aGrpcHandler } from "../../src/a2a/bindings/grpc.js";
import { createRestRouter } from "../../src/a2a/bindings/rest.js";
import { listenOnePort, splitGrpc, type OnePortListener } from "../../src/server/one-port.js";
import {
  a2aGrpcClient,
  collect,
  errorInfoOf,
  metadata,
  unary,
  type A2AGrpcClient,
} from "./fixtures/grpc-client.js";

const LEAKY = "boom reading /home/alice/.secrets/key.pem with token=sk-abcdefghijklmnop";

function taskEvent(id: string): pb.StreamResponse {
  return create(pb.StreamResponseSchema, {
    payload: { case: "task", value: { id, contextId: "ctx", status: { state: pb.TaskState.WORKING } } },
  });
}

/** The slice of the core the bindings call, with scripted failures. */
const stubCore = {
  // eslint-disable-next-line @typescript-eslint/require-await -- the core's signature is async
  async subscribeToTask(request: pb.SubscribeToTaskRequest) {
    return (async function* () {
      yield taskEvent(request.id);
      await Promise.resolve();
      if (request.id === "a2a-failure")
        throw new A2AError("InvalidAgentResponseError", "The agent answered nonsense");
      throw new Error(LEAKY);
    })();
  },
  // eslint-disable-next-line @typescript-eslint/require-await -- the core's signature is async
  async sendStreamingMessage() {
    return (async function* () {
      // Ends without a single event.
    })();
  },
  getTask(): Promise<pb.Task> {
    return Promise.reject(new Error(LEAKY));
  },
  listTasks(): Promise<pb.ListTasksResponse> {
    return Promise.reject(new TypeError("Cannot read properties of undefined (reading 'x')"));
  },
} as unknown as A2AService;

describe("a2a-bindings: failure shapes on REST and gRPC (stub core)", () => {
  let listener: OnePortListener;
  let client: A2AGrpcClient;
  let base = "";
  const logs: string[] = [];

  before(async () => {
    const logger = pino(
      { level: "error" },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          logs.push(chunk.toString("utf8"));
          done();
        },
      }),
    );
    const auth = new Authenticator({ apiKeyHeader: "X-API-Key" });
    const app = new Koa();
    const router = createRestRouter({ core: stubCore, auth, logger });
    app.use(router.routes()).use(router.allowedMethods());
    const koa = app.callback();
    const grpcHandler = createA2aGrpcHandler({ core: stubCore, auth, logger });
    listener = await listenOnePort({
      host: "127.0.0.1",
      port: 0,
      http1: (req, res) => void koa(req, res),
      http2: splitGrpc(grpcHandler, (req, res) => void koa(req, res)),
    });
    base = `http://127.0.0.1:${listener.port}`;
    client = a2aGrpcClient(`127.0.0.1:${listener.port}`);
  });

  after(async () => {
    client.close();
    await listener.close();
  });

  const get = (path: string, method = "GET") =>
    fetch(`${base}${path}`, { method, headers: { "A2A-Version": "1.0" } });

  it("REST: an error after the first event is an `event: error` frame with the status body", async () => {
    const response = await get("/tasks/a2a-failure:subscribe");
    expect(response.status).to.equal(200);
    const text = await response.text();
    const frames = text.split("\n\n").filter((frame) => frame !== "");
    expect(frames).to.have.length(2);
    expect(frames[0].startsWith("data: ")).to.equal(true);
    expect(Object.keys(JSON.parse(frames[0].slice(6)) as object)).to.deep.equal(["task"]);
    const [eventLine, dataLine] = frames[1].split("\n");
    expect(eventLine).to.equal("event: error");
    const body = JSON.parse(dataLine.slice(6)) as {
      error: { code: number; status: string; message: string; details: Array<{ reason: string }> };
    };
    expect(body.error.code).to.equal(500);
    expect(body.error.status).to.equal("INTERNAL");
    expect(body.error.details[0].reason).to.equal("INVALID_AGENT_RESPONSE");
  });

  it("REST: an unexpected error mid-stream is sanitised and logged", async () => {
    const text = await (await get("/tasks/leaky:subscribe", "POST")).text();
    expect(text).to.contain("event: error");
    expect(text).to.not.contain("/home/alice");
    expect(text).to.not.contain("sk-abcdefghijklmnop");
    const error = (JSON.parse(text.split("event: error\ndata: ")[1]) as { error: { message: string } }).error;
    expect(error.message).to.equal("Internal error");
    expect(logs.join("")).to.contain("/home/alice/.secrets/key.pem");
  });

  it("REST: unexpected unary errors are 500 INTERNAL with an error id, details only in the log", async () => {
    const response = await get("/tasks/any");
    expect(response.status).to.equal(500);
    const body = (await response.json()) as {
      error: { message: string; details: Array<{ reason: string; metadata: { errorId: string } }> };
    };
    expect(body.error.message).to.equal("Internal error");
    expect(body.error.details[0].reason).to.equal("INTERNAL");
    const errorId = body.error.details[0].metadata.errorId;
    expect(errorId).to.match(/^[0-9a-f-]{36}$/);
    expect(logs.some((line) => line.includes(errorId) && line.includes("/home/alice"))).to.equal(true);
    const list = await get("/tasks");
    expect(list.status).to.equal(500);
    expect(await list.text()).to.not.contain("Cannot read properties");
  });

  it("REST: a stream that ends before any event is an INTERNAL error, not an empty stream", async () => {
    const response = await fetch(`${base}/message:stream`, {
      method: "POST",
      headers: { "A2A-Version": "1.0", "Content-Type": "application/json" },
      body: JSON.stringify({ message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] } }),
    });
    expect(response.status).to.equal(500);
    expect(response.headers.get("content-type")).to.match(/^application\/json/);
  });

  it("gRPC: an error after messages ends the call with its status and ErrorInfo", async () => {
    const stream = client.SubscribeToTask({ id: "a2a-failure" }, metadata());
    const received: unknown[] = [];
    stream.on("data", (event: unknown) => received.push(event));
    let error: grpc.ServiceError | undefined;
    try {
      await collect(stream);
    } catch (e) {
      error = e as grpc.ServiceError;
    }
    expect(received).to.have.length(1);
    expect(error?.code).to.equal(grpc.status.INTERNAL);
    expect(error?.details).to.equal("The agent answered nonsense");
    expect(error && errorInfoOf(error)?.reason).to.equal("INVALID_AGENT_RESPONSE");
  });

  it("gRPC: unexpected errors are INTERNAL 'Internal error' without details", async () => {
    let error: grpc.ServiceError | undefined;
    try {
      await unary((cb) => client.GetTask({ id: "any" }, metadata(), cb));
    } catch (e) {
      error = e as grpc.ServiceError;
    }
    expect(error?.code).to.equal(grpc.status.INTERNAL);
    expect(error?.details).to.equal("Internal error");
    expect(error && errorInfoOf(error)?.reason).to.equal("INTERNAL");
    expect(JSON.stringify(error?.metadata.getMap())).to.not.contain("/home/alice");
    let midStream: grpc.ServiceError | undefined;
    try {
      await collect(client.SubscribeToTask({ id: "leaky" }, metadata()));
    } catch (e) {
      midStream = e as grpc.ServiceError;
    }
    expect(midStream?.code).to.equal(grpc.status.INTERNAL);
    expect(midStream?.details).to.equal("Internal error");
  });
});
