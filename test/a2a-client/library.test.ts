// The client library as a program uses it (the AG-UI adapter): a JSON-RPC
// client whose endpoint and headers are asked for at every request, typed
// stream responses decoded from SSE, and an AbortSignal that ends a stream.
import { expect } from "chai";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pb } from "../../src/contract/index.js";
import { jsonRpcClient } from "../../src/a2a/client/client.js";
import { sseComment, sseFrame } from "../../src/server/sse.js";

const method = pb.A2AService.method;
const task = { id: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING" } };

interface Seen {
  port: number;
  headers: IncomingMessage["headers"];
}

async function fakeServer(seen: Seen[], hold = false): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ port: (req.socket.address() as AddressInfo).port, headers: req.headers });
      const call = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string; method: string };
      if (call.method === "GetTask") {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result: task }));
        return;
      }
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      // Cut mid-line and with CRLF: the client reads it as the same events.
      const wire =
        sseFrame(JSON.stringify({ jsonrpc: "2.0", id: call.id, result: { task } })) +
        sseComment("keep-alive").replace("\n\n", "\r\n\r\n");
      res.write(wire.slice(0, 20));
      res.write(wire.slice(20));
      if (!hold) res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe("a2a client library: JSON-RPC with a target and headers per request", () => {
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.close()));

  it("asks for the endpoint and the headers at each request", async () => {
    const seen: Seen[] = [];
    const one = await fakeServer(seen);
    const two = await fakeServer(seen);
    servers.push(one.server, two.server);
    let port = one.port;
    let n = 0;
    const client = jsonRpcClient(
      () => `http://127.0.0.1:${port}/`,
      () => ({ traceparent: `00-${String(++n).padStart(32, "0")}-${"1".padStart(16, "0")}-01` }),
      5_000,
    );
    const first = await client.unary(method.getTask, { id: "t-1" });
    expect(first.id).to.equal("t-1");
    port = two.port;
    expect(client.endpoint.url).to.equal(`http://127.0.0.1:${two.port}/`);
    const events = [];
    for await (const event of client.stream(method.sendStreamingMessage, { message: { messageId: "m" } }))
      events.push(event);
    expect(events.map((e) => e.payload.case)).to.deep.equal(["task"]);
    expect(seen.map((s) => s.port)).to.deep.equal([one.port, two.port]);
    expect(seen.map((s) => s.headers.traceparent?.slice(3, 35))).to.deep.equal([
      "1".padStart(32, "0"),
      "2".padStart(32, "0"),
    ]);
    expect(seen[1].headers.accept).to.equal("text/event-stream");
  });

  it("ends a stream when its signal aborts", async () => {
    const seen: Seen[] = [];
    const held = await fakeServer(seen, true);
    servers.push(held.server);
    const client = jsonRpcClient(`http://127.0.0.1:${held.port}/`, {}, 0);
    const controller = new AbortController();
    const events = [];
    let failure: unknown;
    try {
      for await (const event of client.stream(method.subscribeToTask, { id: "t-1" }, controller.signal)) {
        events.push(event);
        controller.abort();
      }
    } catch (error) {
      failure = error;
    }
    expect(events).to.have.length(1);
    expect((failure as Error | undefined)?.name).to.equal("AbortError");
  });
});
