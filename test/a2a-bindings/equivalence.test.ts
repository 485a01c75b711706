// One scenario, three doors: the same conversation driven through the SDK's
// JSON-RPC, REST and gRPC transports (each against a fresh server) must leave
// equal task states and produce equal event sequences once the values that are
// random by nature (ids, timestamps) are replaced by stable placeholders.
import { expect } from "chai";
import { SendMessageRequest, StreamResponse, Task, TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { BINDINGS, sdkClient, startBindingsServer, type Binding } from "./fixtures/server.js";

type Json = unknown;

/** Replaces UUIDs and session ids by their order of first appearance, and timestamps by a marker. */
function normaliser(): (value: Json) => Json {
  const seen = new Map<string, string>();
  const stable = (token: string): string => {
    if (!seen.has(token)) seen.set(token, `<id${seen.size}>`);
    return seen.get(token) ?? token;
  };
  const pattern = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|session-\d+/g;
  const walk = (value: Json, key?: string): Json => {
    if (typeof value === "string") return key === "timestamp" ? "<ts>" : value.replace(pattern, stable);
    if (Array.isArray(value)) return value.map((item) => walk(item));
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
    }
    return value;
  };
  return walk;
}

function request(messageId: string, text: string, extra: Record<string, string> = {}): SendMessageRequest {
  return SendMessageRequest.fromJSON({
    message: { messageId, role: "ROLE_USER", parts: [{ text }], ...extra },
  });
}

async function events(stream: AsyncIterable<StreamResponse>): Promise<Json[]> {
  const out: Json[] = [];
  for await (const event of stream) out.push(StreamResponse.toJSON(event));
  return out;
}

const listAll = (client: Client, contextId: string) =>
  client.listTasks({
    tenant: "",
    contextId,
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageSize: 10,
    pageToken: "",
    historyLength: undefined,
    statusTimestampAfter: undefined,
    includeArtifacts: undefined,
  });

/** The scenario; returns everything a client observed, in order. */
async function scenario(binding: Binding): Promise<Json[]> {
  const s = await startBindingsServer();
  try {
    const client = await sdkClient(s.base, binding);
    const observed: Json[] = [];
    const streamed = await events(client.sendMessageStream(request("eq-1", "chunks 3")));
    observed.push({ step: "stream", events: streamed });
    const first = streamed[0] as { task: { id: string; contextId: string } };
    const { id: taskId, contextId } = first.task;

    const followUp = (await client.sendMessage(request("eq-2", "hello again", { contextId }))) as Task;
    observed.push({ step: "send", task: Task.toJSON(followUp) });
    observed.push({
      step: "get",
      task: Task.toJSON(await client.getTask({ tenant: "", id: taskId, historyLength: 2 })),
    });

    const holding = events(client.sendMessageStream(request("eq-3", "hold now", { contextId })));
    await s.runtime.whenHeld(1);
    const list = await listAll(client, contextId);
    const running = list.tasks.find((task) => task.status?.state === TaskState.TASK_STATE_WORKING);
    observed.push({
      step: "list-while-running",
      states: list.tasks.map((task) => task.status?.state).sort(),
    });
    const canceled = await client.cancelTask({ tenant: "", id: running?.id ?? "", metadata: undefined });
    observed.push({ step: "cancel", task: Task.toJSON(canceled) });
    observed.push({ step: "canceled-stream", events: await holding });

    const finalList = await listAll(client, contextId);
    observed.push({
      step: "final-list",
      tasks: finalList.tasks.map((task) => Task.toJSON(task)),
      total: finalList.totalSize,
    });
    for (const [step, promise] of [
      ["get-unknown", client.getTask({ tenant: "", id: "missing", historyLength: undefined })],
      ["cancel-canceled", client.cancelTask({ tenant: "", id: running?.id ?? "", metadata: undefined })],
      ["subscribe-finished", events(client.resubscribeTask({ tenant: "", id: taskId }))],
    ] as const) {
      try {
        await promise;
        observed.push({ step, error: null });
      } catch (error) {
        const e = error as { name?: string; reason?: string };
        observed.push({ step, error: { name: e.name, reason: e.reason } });
      }
    }
    return normaliser()(observed) as Json[];
  } finally {
    await s.close();
  }
}

describe("a2a-bindings: the same scenario through JSON-RPC, REST and gRPC", () => {
  const results = new Map<Binding, Json[]>();

  for (const binding of BINDINGS) {
    it(`runs the scenario over ${binding}`, async () => {
      const observed = await scenario(binding);
      results.set(binding, observed);
      const steps = observed as Array<{ step: string; error?: { reason?: string } | null }>;
      expect(steps.map((step) => step.step)).to.deep.equal([
        "stream",
        "send",
        "get",
        "list-while-running",
        "cancel",
        "canceled-stream",
        "final-list",
        "get-unknown",
        "cancel-canceled",
        "subscribe-finished",
      ]);
      const stream = (observed[0] as { events: Json[] }).events;
      expect(stream.length, "task, working, 3 deltas, usage, final text, end of turn").to.equal(8);
      expect(steps.slice(-3).map((step) => step.error?.reason)).to.deep.equal([
        "TASK_NOT_FOUND",
        "TASK_NOT_CANCELABLE",
        "TASK_NOT_FOUND",
      ]);
    });
  }

  it("yields equal task states and equal event sequences on all three bindings", () => {
    const [reference, ...others] = BINDINGS.map((binding) => results.get(binding));
    expect(reference, "the JSON-RPC run").to.not.equal(undefined);
    for (const [index, other] of others.entries()) {
      expect(other, BINDINGS[index + 1]).to.deep.equal(reference);
    }
  });
});
