// Interop: the official @a2a-js/sdk 1.3.0 JSON-RPC client drives our server
// over real HTTP; assertions are on what the SDK parsed.
import { expect } from "chai";
import {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  SendMessageRequest,
  TaskState,
  type StreamResponse,
} from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  type Client,
} from "@a2a-js/sdk/client";
import { cleanup, startTestServer, type TestServer } from "./helpers.js";

function request(text: string, extra: Record<string, unknown> = {}) {
  return SendMessageRequest.fromJSON({
    message: {
      messageId: `sdk-${Math.random().toString(16).slice(2)}`,
      role: "ROLE_USER",
      parts: [{ text }],
      ...extra,
    },
  });
}

function textOf(
  parts: Array<{ content?: { $case: string; value: unknown } }> | undefined,
): string | undefined {
  const content = parts?.[0]?.content;
  return content?.$case === "text" ? (content.value as string) : undefined;
}

async function expectRejects(promise: Promise<unknown>, name: string, reason: string): Promise<void> {
  try {
    await promise;
  } catch (error) {
    const e = error as { name?: string; reason?: string };
    expect(e.name).to.equal(name);
    expect(e.reason).to.equal(reason);
    return;
  }
  expect.fail(`expected ${name}`);
}

describe("A2A interop with the @a2a-js/sdk 1.3.0 JSON-RPC client", () => {
  let t: TestServer;
  let client: Client;
  before(async () => {
    t = await startTestServer();
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory()],
      }),
    );
    client = await factory.createFromUrl(t.url);
  });
  after(async () => {
    await t.close();
    cleanup(t.dir);
  });

  it("sendMessage returns the finished task", async () => {
    const result = await client.sendMessage(request("hello sdk"));
    expect("status" in result).to.equal(true);
    const task = result as Extract<typeof result, { status?: unknown }>;
    expect(task.status?.state).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(task.history[0]?.parts)).to.equal("hello sdk");
    expect(textOf(task.history.at(-1)?.parts)).to.equal("Echo(turn 1): hello sdk");
  });

  it("sendMessageStream yields the task first, then status updates, then the end of turn", async () => {
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(request("[[tool]] stream sdk"))) events.push(event);
    const cases = events.map((e) => e.payload?.$case);
    expect(cases[0]).to.equal("task");
    expect(cases).to.include("statusUpdate").and.include("artifactUpdate");
    const last = events.at(-1)!.payload;
    expect(last?.$case).to.equal("statusUpdate");
    if (last?.$case === "statusUpdate")
      expect(last.value.status?.state).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
    const artifact = events.find((e) => e.payload?.$case === "artifactUpdate")!.payload;
    if (artifact?.$case === "artifactUpdate") {
      const part = artifact.value.artifact?.parts[0];
      expect(part?.content?.$case).to.equal("url");
      expect(part?.mediaType).to.equal("text/yaml");
    }
  });

  it("getTask and listTasks read what the server stored", async () => {
    const sent = await client.sendMessage(request("list me", { contextId: "sdk-ctx" }));
    const id = (sent as { id: string }).id;
    const task = await client.getTask(GetTaskRequest.fromJSON({ id, historyLength: 1 }));
    expect(task.id).to.equal(id);
    expect(task.history).to.have.length(1);
    const list = await client.listTasks(ListTasksRequest.fromJSON({ contextId: "sdk-ctx", pageSize: 10 }));
    expect(list.tasks.map((x) => x.id)).to.deep.equal([id]);
    expect(list.totalSize).to.equal(1);
    expect(list.nextPageToken).to.equal("");
  });

  it("cancelTask cancels a running turn; errors arrive as typed SDK errors", async () => {
    const started = await client.sendMessage(
      SendMessageRequest.fromJSON({
        message: { messageId: "sdk-slow", role: "ROLE_USER", parts: [{ text: "[[slow]]" }] },
        configuration: { returnImmediately: true },
      }),
    );
    const id = (started as { id: string }).id;
    const canceled = await client.cancelTask(CancelTaskRequest.fromJSON({ id }));
    expect(canceled.status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
    await expectRejects(
      client.cancelTask(CancelTaskRequest.fromJSON({ id })),
      "TaskNotCancelableError",
      "TASK_NOT_CANCELABLE",
    );
    await expectRejects(
      client.getTask(GetTaskRequest.fromJSON({ id: "does-not-exist" })),
      "TaskNotFoundError",
      "TASK_NOT_FOUND",
    );
  });
});
