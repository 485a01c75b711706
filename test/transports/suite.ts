/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return -- tests read free-form JSON-RPC replies through `any` (Json) */
// The behaviour every custom JSON-RPC transport shares, checked through a raw
// client of that transport against our server (real runtime, scripted model:
// test/a2a-client/fixtures/client-script.yaml): unary and streaming calls,
// SubscribeToTask, the agent card's interface, the errors for bad frames, and
// a request answered while a long stream runs on the same connection.
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { metricValue } from "../fixtures/prometheus.js";
import { message, request, untilFinal, type Json, type RawConnection } from "./raw-clients.js";

const stateOf = (payload: Json): string | undefined =>
  payload.result?.statusUpdate?.status?.state ?? payload.result?.task?.status?.state;

/** The final reply of a stream: exactly {"jsonrpc":"2.0","id":…}. */
function expectEndMarker(payload: Json, id: string): void {
  expect(payload).to.deep.equal({ jsonrpc: "2.0", id });
}

export function sharedBehaviour(
  connect: () => RawConnection,
  expected: {
    protocolBinding: string;
    url: () => string;
    /** Line framing (stdio, unix): a unary reply line carries no `final`. */
    lines?: boolean;
    /** The server's metrics text (ServerMetrics.scrape), when it runs in this process. */
    metrics?: () => Promise<string>;
    /** The server's public card as JSON, when it runs in this process. */
    card?: () => Json;
  },
): void {
  const metrics = expected.metrics;
  if (metrics) {
    it("a call is counted in the metrics under the transport's own binding label", async () => {
      const labels = { method: "ListTasks", binding: expected.protocolBinding, outcome: "ok" };
      const before = metricValue(await metrics(), "iac_code_requests_total", labels);
      const c = connect();
      await c.next(c.send(request("ListTasks", {}, "metrics-1")));
      const after = await metrics();
      expect(metricValue(after, "iac_code_requests_total", labels) - before).to.equal(1);
      expect(metricValue(after, "iac_code_requests_total", { binding: "unknown" })).to.equal(0);
    });
  }

  it("SendMessage: one final reply with the task at the end of the turn", async () => {
    const c = connect();
    const key = c.send(request("SendMessage", message("hello"), "unary-1"));
    const reply = await c.next(key);
    expect(reply.final).to.equal(!expected.lines);
    expect(reply.payload.id).to.equal("unary-1");
    expect(reply.payload.result.task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
  });

  it("SendStreamingMessage: the events, then the end-of-stream reply", async () => {
    const c = connect();
    const key = c.send(request("SendStreamingMessage", message("hello"), "stream-1"), { stream: true });
    const frames = await untilFinal(c, key);
    expect(frames.slice(0, -1).every((f) => !f.final)).to.equal(true);
    expect(frames[0].payload.result.task.id).to.be.a("string");
    const texts = frames.map((f) => f.payload.result?.statusUpdate?.status?.message?.parts?.[0]?.text);
    expect(texts).to.include("Hello from the scripted agent.");
    expect(stateOf(frames.at(-2)!.payload)).to.equal("TASK_STATE_INPUT_REQUIRED");
    expectEndMarker(frames.at(-1)!.payload, "stream-1");
  });

  it("SubscribeToTask follows a running turn: the task first, then its events to the end", async () => {
    const c = connect();
    const started = await c.next(
      c.send(
        request("SendMessage", message("[SLOW] follow me", { configuration: { returnImmediately: true } })),
      ),
    );
    const taskId = started.payload.result.task.id as string;
    const frames = await untilFinal(
      c,
      c.send(request("SubscribeToTask", { id: taskId }, "sub-1"), { stream: true }),
    );
    expect(frames[0].payload.result.task.id).to.equal(taskId);
    const texts = frames.map((f) => f.payload.result?.statusUpdate?.status?.message?.parts?.[0]?.text);
    expect(texts).to.include("slow end");
    expect(stateOf(frames.at(-2)!.payload)).to.equal("TASK_STATE_INPUT_REQUIRED");
    expectEndMarker(frames.at(-1)!.payload, "sub-1");
  });

  it("a request sent during a long stream on the same connection is answered before the stream ends", async () => {
    const c = connect();
    const stream = c.send(request("SendStreamingMessage", message("[SLOW] long"), "long-1"), {
      stream: true,
    });
    const first = await c.next(stream);
    const list = await c.next(c.send(request("ListTasks", {}, "list-1")));
    expect(list.payload.result.tasks).to.be.an("array");
    const rest = await untilFinal(c, stream);
    expect(first.payload.result.task.id).to.be.a("string");
    // The stream was still running when the ListTasks reply arrived.
    expect(list.seq).to.be.lessThan(rest.at(-1)!.seq!);
    expect(rest.some((f) => f.seq! > list.seq! && !f.final)).to.equal(true);
  });

  it("without credentials GetExtendedAgentCard is UnsupportedOperationError; the card lists this transport and does not declare it", async () => {
    const c = connect();
    const reply = await c.next(c.send(request("GetExtendedAgentCard", {}, "card-1")));
    expect(reply.payload.id).to.equal("card-1");
    expect(reply.payload.error.code).to.equal(-32004);
    expect(reply.payload.error.data[0].reason).to.equal("UNSUPPORTED_OPERATION");
    const card = expected.card?.();
    if (!card) return; // stdio: the server is another process
    expect(card.supportedInterfaces).to.deep.equal([
      { url: expected.url(), protocolBinding: expected.protocolBinding, protocolVersion: "1.0" },
    ]);
    expect(card.capabilities.extendedAgentCard).to.equal(false);
  });

  it("notifications (no id) run and get no JSON-RPC response, not even an error", async () => {
    const c = connect();
    const contextId = `note-${randomUUID()}`;
    const note = (method: string, params?: unknown) =>
      c.send(JSON.stringify({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }));
    const keys = [
      note("SendMessage", {
        message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "noted" }], contextId },
        configuration: { returnImmediately: true },
      }),
      note("NoSuchMethod"),
      note("GetTask", { id: 5 }),
      note("GetTask", { id: "no-such-task" }),
    ];
    // The first one ran: its task exists (it may take a few requests to show).
    let tasks: Json[] = [];
    for (let i = 0; i < 200 && tasks.length === 0; i++) {
      tasks = (await c.next(c.send(request("ListTasks", { contextId })))).payload.result.tasks as Json[];
    }
    expect(tasks.map((t) => t.contextId)).to.deep.equal([contextId]);
    await c.next(c.send(request("ListTasks", {}, "after-notes")));
    for (const key of keys) expect(c.waiting(key).filter((f) => f.raw !== "")).to.deep.equal([]);
  });

  it("bad JSON is -32700 and a non-object -32600, both with id null; an unknown method -32601", async () => {
    const c = connect();
    const parse = await c.next(c.send("{not json"));
    expect(parse.payload).to.deep.include({ jsonrpc: "2.0", id: null });
    expect(parse.payload.error).to.deep.include({ code: -32700, message: "Invalid JSON payload" });
    const scalar = await c.next(c.send("42"));
    expect(scalar.payload.id).to.equal(null);
    expect(scalar.payload.error).to.deep.include({
      code: -32600,
      message: "Invalid request: expected a JSON object",
    });
    const unknown = await c.next(c.send(request("NoSuchMethod", {}, "m-1")));
    expect(unknown.final).to.equal(!expected.lines);
    expect(unknown.payload.id).to.equal("m-1");
    expect(unknown.payload.error.code).to.equal(-32601);
    expect(unknown.payload.error.data[0].reason).to.equal("METHOD_NOT_FOUND");
  });

  it("a stream refused before its first event is one final error reply", async () => {
    const c = connect();
    const key = c.send(request("SubscribeToTask", { id: "no-such-task" }, "sub-missing"), { stream: true });
    const reply = await c.next(key);
    expect(reply.final).to.equal(true);
    expect(reply.payload.id).to.equal("sub-missing");
    expect(reply.payload.error.data[0].reason).to.equal("TASK_NOT_FOUND");
  });
}
