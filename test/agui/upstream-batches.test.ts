// The adapter reads an A2A stream a batch at a time: the responses that arrived
// together are handled in one go (one write to the AG-UI client). An error event
// inside a batch still ends the stream where it stands: what precedes it is
// handed over, then the error is thrown.
import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { A2aClient } from "../../src/agui/upstream/a2a-client.js";
import { A2aCallError } from "../../src/a2a/client/errors.js";

const frame = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const result = (n: number) => ({ jsonrpc: "2.0", id: 1, result: { statusUpdate: { taskId: "t", n } } });
const failure = { jsonrpc: "2.0", id: 1, error: { code: -32001, message: "Task not found" } };

/** A server answering every POST with `body`, written at once. */
async function serve(body: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      res.end(body);
    });
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("agui upstream: stream batches", () => {
  it("hands over the responses that arrived together as one batch", async () => {
    const server = await serve(frame(result(1)) + frame(result(2)) + frame(result(3)));
    try {
      const client = new A2aClient({ url: server.url });
      const batches: unknown[][] = [];
      for await (const batch of client.streamBatches("SubscribeToTask", { id: "t" })) batches.push(batch);
      expect(batches).to.deep.equal([[result(1), result(2), result(3)]]);
    } finally {
      await server.close();
    }
  });

  it("hands over what precedes an error event of a batch, then throws it", async () => {
    const server = await serve(frame(result(1)) + frame(result(2)) + frame(failure) + frame(result(3)));
    try {
      const client = new A2aClient({ url: server.url });
      const batches: unknown[][] = [];
      let error: unknown;
      try {
        for await (const batch of client.streamBatches("SubscribeToTask", { id: "t" })) batches.push(batch);
      } catch (err) {
        error = err;
      }
      expect(batches).to.deep.equal([[result(1), result(2)]]);
      expect(error).to.be.instanceOf(A2aCallError);
      expect((error as A2aCallError).message).to.include("Task not found (JSON-RPC -32001)");

      // One at a time, the same order: two responses, then the error.
      const items: unknown[] = [];
      error = undefined;
      try {
        for await (const item of client.stream("SubscribeToTask", { id: "t" })) items.push(item);
      } catch (err) {
        error = err;
      }
      expect(items).to.deep.equal([result(1), result(2)]);
      expect((error as A2aCallError).message).to.include("Task not found (JSON-RPC -32001)");
    } finally {
      await server.close();
    }
  });
});
