// Interop with @a2a-js/sdk 1.3.0 over each of its transports against one
// running server (one port): send, stream, get, list with paging, cancel,
// subscribe, the extended card, and errors compared by ErrorInfo reason.
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { SendMessageRequest, StreamResponse, TaskState, type Task } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { BINDINGS, sdkClient, startBindingsServer, type BindingsServer } from "./fixtures/server.js";

function message(text: string, extra: { contextId?: string; taskId?: string } = {}): SendMessageRequest {
  return SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra },
  });
}

async function collect(stream: AsyncIterable<StreamResponse>): Promise<Array<Record<string, unknown>>> {
  const events: Array<Record<string, unknown>> = [];
  for await (const event of stream) events.push(StreamResponse.toJSON(event) as Record<string, unknown>);
  return events;
}

/** The error's ErrorInfo reason as the SDK decoded it (name and reason, not instanceof; see a2a-spec §5.2). */
async function reasonOf(promise: Promise<unknown>): Promise<{ name: string; reason: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { name?: string; reason?: string };
    return { name: e.name ?? "", reason: e.reason ?? "" };
  }
  throw new Error("expected the call to fail");
}

function stateOf(event: Record<string, unknown>): string | undefined {
  const update = event.statusUpdate as { status?: { state?: string } } | undefined;
  const task = event.task as { status?: { state?: string } } | undefined;
  return update?.status?.state ?? task?.status?.state;
}

/** Text streamed as deltas (the assistantFinal status repeats the whole answer). */
function agentText(events: Array<Record<string, unknown>>): string {
  return events
    .map(
      (event) =>
        event.statusUpdate as
          | {
              status?: { state?: string; message?: { parts?: Array<{ text?: string }> } };
              metadata?: { iac_code?: { assistantFinal?: unknown } };
            }
          | undefined,
    )
    .filter(
      (update) =>
        update?.status?.state === "TASK_STATE_WORKING" && !update.metadata?.iac_code?.assistantFinal,
    )
    .flatMap((update) => update?.status?.message?.parts ?? [])
    .map((part) => part.text ?? "")
    .join("");
}

for (const binding of BINDINGS) {
  describe(`a2a-bindings: @a2a-js/sdk over ${binding}`, () => {
    let s: BindingsServer;
    let client: Client;

    before(async () => {
      s = await startBindingsServer();
      client = await sdkClient(s.base, binding);
      expect(client.transport.protocolName).to.equal(binding);
    });
    after(() => s.close());

    it("sends a message and gets the task at the end of the turn", async () => {
      const request = message("hello");
      const result = (await client.sendMessage(request)) as Task;
      expect(result.status?.state).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(result.history?.[0]?.messageId).to.equal(request.message?.messageId);
      const texts = (result.history ?? [])
        .flatMap((m) => m.parts)
        .map((p) => (p.content?.$case === "text" ? p.content.value : ""));
      expect(texts.join("|")).to.contain("echo: hello");
    });

    it("streams a turn: the task first, text deltas, then the end-of-turn state", async () => {
      const events = await collect(client.sendMessageStream(message("chunks 3")));
      expect(Object.keys(events[0])).to.deep.equal(["task"]);
      expect(stateOf(events[0])).to.equal("TASK_STATE_SUBMITTED");
      expect(agentText(events)).to.equal("chunk-0 chunk-1 chunk-2 ");
      expect(stateOf(events[events.length - 1])).to.equal("TASK_STATE_INPUT_REQUIRED");
      for (const event of events) expect(Object.keys(event)).to.have.length(1);
    });

    it("gets a task with and without history", async () => {
      const sent = (await client.sendMessage(message("for get"))) as Task;
      const full = await client.getTask({ tenant: "", id: sent.id, historyLength: undefined });
      expect(full.id).to.equal(sent.id);
      expect(full.history?.length).to.be.greaterThan(1);
      const none = await client.getTask({ tenant: "", id: sent.id, historyLength: 0 });
      expect(none.history ?? []).to.have.length(0);
      const one = await client.getTask({ tenant: "", id: sent.id, historyLength: 1 });
      expect(one.history).to.have.length(1);
    });

    it("lists a context's tasks page by page", async () => {
      const first = (await client.sendMessage(message("page 1"))) as Task;
      const contextId = first.contextId;
      await client.sendMessage(message("page 2", { contextId }));
      await client.sendMessage(message("page 3", { contextId }));
      const page1 = await client.listTasks({
        tenant: "",
        contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 2,
        pageToken: "",
        historyLength: undefined,
        statusTimestampAfter: undefined,
        includeArtifacts: undefined,
      });
      expect(page1.tasks).to.have.length(2);
      expect(page1.totalSize).to.equal(3);
      expect(page1.nextPageToken).to.not.equal("");
      const page2 = await client.listTasks({
        tenant: "",
        contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 2,
        pageToken: page1.nextPageToken,
        historyLength: undefined,
        statusTimestampAfter: undefined,
        includeArtifacts: undefined,
      });
      expect(page2.tasks).to.have.length(1);
      expect(page2.nextPageToken).to.equal("");
      const ids = [...page1.tasks, ...page2.tasks].map((task) => task.id);
      expect(new Set(ids).size).to.equal(3);
      expect(ids).to.include(first.id);
    });

    it("cancels a running turn; a second cancel is TASK_NOT_CANCELABLE", async () => {
      const streamed = collect(client.sendMessageStream(message("hold on")));
      await s.runtime.whenHeld(1);
      const [running] = (
        await client.listTasks({
          tenant: "",
          contextId: "",
          status: TaskState.TASK_STATE_WORKING,
          pageSize: 10,
          pageToken: "",
          historyLength: undefined,
          statusTimestampAfter: undefined,
          includeArtifacts: undefined,
        })
      ).tasks;
      const canceled = await client.cancelTask({ tenant: "", id: running.id, metadata: undefined });
      expect(canceled.status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
      const events = await streamed;
      expect(stateOf(events[events.length - 1])).to.equal("TASK_STATE_CANCELED");
      expect(
        await reasonOf(client.cancelTask({ tenant: "", id: running.id, metadata: undefined })),
      ).to.deep.equal({
        name: "TaskNotCancelableError",
        reason: "TASK_NOT_CANCELABLE",
      });
    });

    it("subscribes to a running task and follows it to the end of the turn", async () => {
      const streamed = collect(client.sendMessageStream(message("hold please")));
      await s.runtime.whenHeld(1);
      const [running] = (
        await client.listTasks({
          tenant: "",
          contextId: "",
          status: TaskState.TASK_STATE_WORKING,
          pageSize: 10,
          pageToken: "",
          historyLength: undefined,
          statusTimestampAfter: undefined,
          includeArtifacts: undefined,
        })
      ).tasks;
      // The first event (the task) arrives once the server has registered the subscriber.
      const subscription = client.resubscribeTask({ tenant: "", id: running.id })[Symbol.asyncIterator]();
      const head = await subscription.next();
      s.runtime.release();
      const rest = collect({ [Symbol.asyncIterator]: () => subscription });
      const [own, tail] = await Promise.all([streamed, rest]);
      const followed = [
        StreamResponse.toJSON(head.value as StreamResponse) as Record<string, unknown>,
        ...tail,
      ];
      expect(Object.keys(followed[0])).to.deep.equal(["task"]);
      expect((followed[0].task as { id: string }).id).to.equal(running.id);
      expect(stateOf(followed[followed.length - 1])).to.equal("TASK_STATE_INPUT_REQUIRED");
      expect(agentText(followed)).to.contain("released");
      expect(stateOf(own[own.length - 1])).to.equal("TASK_STATE_INPUT_REQUIRED");
      // A finished turn cannot be subscribed to (the seed: task-not-found style error at once).
      expect(await reasonOf(collect(client.resubscribeTask({ tenant: "", id: running.id })))).to.deep.equal({
        name: "TaskNotFoundError",
        reason: "TASK_NOT_FOUND",
      });
    });

    it("reports unknown tasks as TASK_NOT_FOUND on every method", async () => {
      const notFound = { name: "TaskNotFoundError", reason: "TASK_NOT_FOUND" };
      expect(
        await reasonOf(client.getTask({ tenant: "", id: "nope", historyLength: undefined })),
      ).to.deep.equal(notFound);
      expect(
        await reasonOf(client.cancelTask({ tenant: "", id: "nope", metadata: undefined })),
      ).to.deep.equal(notFound);
      expect(await reasonOf(collect(client.resubscribeTask({ tenant: "", id: "nope" })))).to.deep.equal(
        notFound,
      );
      expect(await reasonOf(client.sendMessage(message("x", { taskId: "nope" })))).to.deep.equal(notFound);
      expect(
        await reasonOf(collect(client.sendMessageStream(message("x", { taskId: "nope" })))),
      ).to.deep.equal(notFound);
    });

    it("without auth: the card declares no extended card, the SDK keeps the public one, a direct call is refused", async () => {
      const card = await client.getAgentCard();
      expect(card.name).to.equal("iac-code");
      expect(card.capabilities?.extendedAgentCard).to.equal(false);
      expect(card.skills.map((skill) => skill.id)).to.not.include("iac_code_runtime_details");
      expect(card.supportedInterfaces.map((i) => i.protocolBinding)).to.deep.equal([
        "JSONRPC",
        "HTTP+JSON",
        "GRPC",
      ]);
      const v1 = { serviceParameters: { "A2A-Version": "1.0" } };
      expect(await reasonOf(client.transport.getExtendedAgentCard({ tenant: "" }, v1))).to.deep.equal({
        name: "UnsupportedOperationError",
        reason: "UNSUPPORTED_OPERATION",
      });
    });
  });
}

describe("a2a-bindings: @a2a-js/sdk with required extensions and auth", () => {
  let s: BindingsServer;
  before(async () => {
    s = await startBindingsServer({ "required-extensions": ["urn:test:required:v1"], token: "tok-123" });
  });
  after(() => s.close());

  for (const binding of BINDINGS) {
    it(`${binding}: EXTENSION_SUPPORT_REQUIRED without the extension, success with it and a token; the extended card with the token`, async () => {
      const { ClientFactory, JsonRpcTransportFactory, RestTransportFactory } =
        await import("@a2a-js/sdk/client");
      const { GrpcTransportFactory } = await import("@a2a-js/sdk/client/grpc");
      const transport = {
        JSONRPC: () => new JsonRpcTransportFactory(),
        "HTTP+JSON": () => new RestTransportFactory(),
        GRPC: () => new GrpcTransportFactory(),
      }[binding]();
      const factory = new ClientFactory({ transports: [transport], preferredTransports: [binding] });
      // The card is public; every A2A call needs the bearer token.
      const client = await factory.createFromUrl(s.base);
      const auth = { serviceParameters: { authorization: "Bearer tok-123" } };
      const withExtension = {
        serviceParameters: { authorization: "Bearer tok-123", "A2A-Extensions": "urn:test:required:v1" },
      };
      expect(await reasonOf(client.sendMessage(message("no ext"), auth))).to.deep.equal({
        name: "ExtensionSupportRequiredError",
        reason: "EXTENSION_SUPPORT_REQUIRED",
      });
      const task = (await client.sendMessage(message("with ext"), withExtension)) as Task;
      expect(task.status?.state).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
      let unauthorized = "";
      try {
        await client.getTask(
          { tenant: "", id: task.id, historyLength: undefined },
          {
            serviceParameters: { "A2A-Extensions": "urn:test:required:v1" },
          },
        );
      } catch (error) {
        unauthorized = String((error as Error).message);
      }
      expect(unauthorized).to.match(/401|Unauthori[sz]ed|UNAUTHENTICATED/i);
      // The card declares the extended card; the SDK fetches it with the token.
      const extended = await client.getAgentCard(auth);
      expect(extended.capabilities?.extendedAgentCard).to.equal(true);
      expect(extended.skills.map((skill) => skill.id)).to.include("iac_code_runtime_details");
    });
  }
});
