// gRPC binding against an independent client: @grpc/grpc-js with stubs loaded
// by @grpc/proto-loader from the project's proto/ (unary, server streaming,
// errors as gRPC status + google.rpc.ErrorInfo in grpc-status-details-bin,
// metadata-borne version, extensions and auth).
import { expect } from "chai";
import * as grpc from "@grpc/grpc-js";
import {
  a2aGrpcClient,
  collect,
  errorInfoOf,
  metadata,
  unary,
  type A2AGrpcClient,
} from "./fixtures/grpc-client.js";
import { startBindingsServer, type BindingsServer } from "./fixtures/server.js";

type Json = Record<string, unknown>;

const V1 = { "a2a-version": "1.0" };

function userMessage(text: string, id = `m-${Math.random().toString(16).slice(2)}`): Json {
  return { message: { messageId: id, role: "ROLE_USER", parts: [{ text }] } };
}

async function failure(promise: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await promise;
  } catch (error) {
    return error as grpc.ServiceError;
  }
  throw new Error("expected the call to fail");
}

function stateOf(event: Json): string | undefined {
  const value = event[event.payload as string] as { status?: { state?: string } };
  return value.status?.state;
}

describe("a2a-bindings: gRPC with @grpc/grpc-js + proto-loader", () => {
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

  it("SendMessage answers with the task at the end of the turn", async () => {
    const reply = await unary<Json>((cb) => client.SendMessage(userMessage("hello"), metadata(V1), cb));
    expect(reply.payload).to.equal("task");
    const task = reply.task as { id: string; status: { state: string }; history: Json[] };
    expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(task.history.length).to.be.greaterThan(1);
    const got = await unary<Json>((cb) =>
      client.GetTask({ id: task.id, historyLength: 0 }, metadata(V1), cb),
    );
    expect(got.id).to.equal(task.id);
    expect(got.history ?? []).to.have.length(0);
  });

  it("SendStreamingMessage streams the task, the deltas and the end of the turn, one payload each", async () => {
    const events = await collect(client.SendStreamingMessage(userMessage("chunks 2"), metadata(V1)));
    expect(events[0].payload).to.equal("task");
    expect(stateOf(events[events.length - 1])).to.equal("TASK_STATE_INPUT_REQUIRED");
    const cases = ["task", "message", "statusUpdate", "artifactUpdate"];
    for (const event of events) {
      expect(cases.filter((key) => event[key] !== undefined && event[key] !== null)).to.deep.equal([
        event.payload,
      ]);
    }
  });

  it("GetTask of an unknown task is NOT_FOUND with ErrorInfo TASK_NOT_FOUND", async () => {
    const error = await failure(unary((cb) => client.GetTask({ id: "missing-task" }, metadata(V1), cb)));
    expect(error.code).to.equal(grpc.status.NOT_FOUND);
    const info = errorInfoOf(error);
    expect(info?.reason).to.equal("TASK_NOT_FOUND");
    expect(info?.domain).to.equal("a2a-protocol.org");
    expect(info?.metadata.taskId).to.equal("missing-task");
  });

  it("a streaming call fails with its status before any message", async () => {
    const stream = client.SubscribeToTask({ id: "missing-task" }, metadata(V1));
    const received: Json[] = [];
    stream.on("data", (event: Json) => received.push(event));
    const error = await failure(collect(stream));
    expect(received).to.have.length(0);
    expect(error.code).to.equal(grpc.status.NOT_FOUND);
    expect(errorInfoOf(error)?.reason).to.equal("TASK_NOT_FOUND");
  });

  it("maps the other A2A errors onto their gRPC statuses (spec v1.0.1)", async () => {
    const cancelUnknown = await failure(
      unary((cb) => client.CancelTask({ id: "missing" }, metadata(V1), cb)),
    );
    expect(cancelUnknown.code).to.equal(grpc.status.NOT_FOUND);
    const done = await unary<Json>((cb) => client.SendMessage(userMessage("done"), metadata(V1), cb));
    const notCancelable = await failure(
      unary((cb) => client.CancelTask({ id: (done.task as { id: string }).id }, metadata(V1), cb)),
    );
    expect(notCancelable.code).to.equal(grpc.status.FAILED_PRECONDITION);
    expect(errorInfoOf(notCancelable)?.reason).to.equal("TASK_NOT_CANCELABLE");
    const noMessage = await failure(unary((cb) => client.SendMessage({}, metadata(V1), cb)));
    expect(noMessage.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(errorInfoOf(noMessage)?.reason).to.equal("INVALID_PARAMS");
    const push = await failure(
      new Promise((resolve, reject) => {
        // Not in the A2AGrpcClient slice; grpc-js exposes every RPC of the loaded service.
        const call = (client as unknown as Record<string, (...args: unknown[]) => void>)
          .CreateTaskPushNotificationConfig;
        call.call(
          client,
          { taskId: "t", url: "https://example.invalid/hook" },
          metadata(V1),
          (e: grpc.ServiceError | null, v: unknown) => (e ? reject(e) : resolve(v)),
        );
      }),
    );
    expect(push.code).to.equal(grpc.status.FAILED_PRECONDITION);
    expect(errorInfoOf(push)?.reason).to.equal("PUSH_NOTIFICATION_NOT_SUPPORTED");
  });

  it("reads a2a-version from metadata: missing or unsupported is VERSION_NOT_SUPPORTED", async () => {
    for (const md of [
      metadata({}),
      metadata({ "a2a-version": "0.3" }),
      metadata({ "a2a-version": "99.0" }),
    ]) {
      const error = await failure(unary((cb) => client.GetTask({ id: "x" }, md, cb)));
      expect(error.code).to.equal(grpc.status.FAILED_PRECONDITION);
      expect(errorInfoOf(error)?.reason).to.equal("VERSION_NOT_SUPPORTED");
    }
    const patch = await failure(
      unary((cb) => client.GetTask({ id: "x" }, metadata({ "a2a-version": "1.0.3" }), cb)),
    );
    expect(patch.code, "a patch version is 1.0").to.equal(grpc.status.NOT_FOUND);
  });

  it("accepts unknown a2a-extensions; without auth the extended card is FAILED_PRECONDITION UNSUPPORTED_OPERATION", async () => {
    const md = metadata({ ...V1, "a2a-extensions": "urn:example:one, urn:example:two" });
    const listed = await unary<Json>((cb) => client.ListTasks({}, md, cb));
    expect(listed.tasks).to.be.an("array");
    const refused = await failure(unary((cb) => client.GetExtendedAgentCard({}, md, cb)));
    expect(refused.code).to.equal(grpc.status.FAILED_PRECONDITION);
    expect(errorInfoOf(refused)?.reason).to.equal("UNSUPPORTED_OPERATION");
  });

  it("keeps serving after a client cancels a stream mid-turn", async () => {
    const call = client.SendStreamingMessage(userMessage("hold here"), metadata(V1));
    const first = await new Promise<Json>((resolve) => call.once("data", resolve));
    const taskId = (first.task as { id: string }).id;
    await s.runtime.whenHeld(1);
    const cancelled = new Promise<grpc.ServiceError>((resolve) => call.on("error", resolve));
    call.cancel();
    expect((await cancelled).code).to.equal(grpc.status.CANCELLED);
    // The turn itself keeps running until it is released; the server answers meanwhile.
    const task = await unary<Json>((cb) => client.GetTask({ id: taskId }, metadata(V1), cb));
    expect((task.status as { state: string }).state).to.equal("TASK_STATE_WORKING");
    s.runtime.release();
  });
});

describe("a2a-bindings: gRPC auth from metadata", () => {
  let s: BindingsServer;
  let client: A2AGrpcClient;

  before(async () => {
    s = await startBindingsServer({
      token: "grpc-token",
      "api-key": "grpc-key",
      "api-key-header": "X-Custom-Key",
    });
    client = a2aGrpcClient(s.server.grpcTarget);
  });
  after(async () => {
    client.close();
    await s.close();
  });

  it("rejects missing or wrong credentials with UNAUTHENTICATED", async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: "Bearer wrong" },
      { "x-custom-key": "nope" },
      { "x-api-key": "grpc-key" },
    ];
    for (const extra of attempts) {
      const error = await failure(
        unary((cb) => client.GetTask({ id: "x" }, metadata({ ...V1, ...extra }), cb)),
      );
      expect(error.code, JSON.stringify(extra)).to.equal(grpc.status.UNAUTHENTICATED);
    }
  });

  it("accepts a bearer token or the configured API key header, and scopes tasks by caller", async () => {
    const bearer = metadata({ ...V1, authorization: "Bearer grpc-token" });
    const apiKey = metadata({ ...V1, "x-custom-key": "grpc-key" });
    const reply = await unary<Json>((cb) => client.SendMessage(userMessage("mine"), bearer, cb));
    const taskId = (reply.task as { id: string }).id;
    const own = await unary<Json>((cb) =>
      client.GetTask({ id: taskId }, metadata({ ...V1, authorization: "Bearer grpc-token" }), cb),
    );
    expect(own.id).to.equal(taskId);
    const other = await failure(unary((cb) => client.GetTask({ id: taskId }, apiKey, cb)));
    expect(other.code).to.equal(grpc.status.NOT_FOUND);
  });

  it("serves the extended card to an authenticated caller only", async () => {
    const anonymous = await failure(unary((cb) => client.GetExtendedAgentCard({}, metadata(V1), cb)));
    expect(anonymous.code).to.equal(grpc.status.UNAUTHENTICATED);
    const md = metadata({ ...V1, "x-custom-key": "grpc-key" });
    const card = await unary<Json>((cb) => client.GetExtendedAgentCard({}, md, cb));
    expect((card.capabilities as { extendedAgentCard: boolean }).extendedAgentCard).to.equal(true);
    const skills = (card.skills as Array<{ id: string }>).map((skill) => skill.id);
    expect(skills).to.include("iac_code_runtime_details");
  });
});
