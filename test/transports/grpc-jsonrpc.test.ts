/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form JSON-RPC replies through `any` (Json) */
// The grpc-jsonrpc transport through grpc-js with the envelope proto loaded
// by proto-loader: the shared JSON-RPC behaviour (Send for unary methods,
// Stream for streaming ones), Send refusing a streaming method, Stream taking
// a unary one, and auth on the call metadata.
import { expect } from "chai";
import { status } from "@grpc/grpc-js";
import { startOurServer } from "../a2a-client/harness.js";
import { removeDir, type E2eServer } from "../e2e/helpers.js";
import {
  grpcEnvelopeConnection,
  message,
  request,
  type GrpcEnvelopeConnection,
  type Json,
} from "./raw-clients.js";
import { sharedBehaviour } from "./suite.js";

const target = (url: string) => url.replace(/^grpc-jsonrpc:\/\//, "");

async function failed(c: GrpcEnvelopeConnection, key: string): Promise<number | undefined> {
  for (let i = 0; i < 200 && !c.errors.has(key); i++) await new Promise((r) => setTimeout(r, 10));
  return c.errors.get(key)?.code;
}

describe("transport grpc-jsonrpc", function () {
  this.timeout(60_000);

  describe("without auth", () => {
    let s: E2eServer;
    let c: GrpcEnvelopeConnection;
    before(async () => {
      s = await startOurServer({ transport: "grpc-jsonrpc", "grpc-port": 0 });
      c = grpcEnvelopeConnection(target(s.url));
    });
    after(async () => {
      await c.close();
      await s.close();
      removeDir(s.dir);
    });

    sharedBehaviour(() => c, {
      protocolBinding: "grpc-jsonrpc",
      url: () => s.url,
      metrics: async () => (await s.server.metrics.scrape()).body,
      card: () => s.server.cards.publicCard.json,
    });

    it("a notification: Send returns one empty final envelope, Stream ends with no message", async () => {
      const note = JSON.stringify({ jsonrpc: "2.0", method: "ListTasks" });
      const sent = await c.next(c.send(note));
      expect(sent).to.deep.include({ raw: "", final: true });
      const key = c.send(note, { stream: true });
      for (let i = 0; i < 200 && !c.ended.has(key); i++) await new Promise((r) => setTimeout(r, 10));
      expect(c.ended.has(key)).to.equal(true);
      expect(c.waiting(key)).to.deep.equal([]);
      expect(c.errors.has(key)).to.equal(false);
    });

    it("Send refuses a streaming method (-32600, nothing started); Stream answers a unary one in one envelope", async () => {
      const refused = await c.next(c.send(request("SendStreamingMessage", message("hello"), "g-1")));
      expect(refused.final).to.equal(true);
      expect(refused.payload.error).to.deep.include({
        code: -32600,
        message: "Invalid request: SendStreamingMessage is a streaming method; call Stream",
      });
      const listed = await c.next(c.send(request("ListTasks", {}, "g-2"), { stream: true }));
      expect(listed.final).to.equal(true);
      expect(listed.payload.result.tasks).to.be.an("array");
    });
  });

  describe("with auth (same settings as HTTP)", () => {
    let s: E2eServer;
    before(async () => {
      s = await startOurServer({ transport: "grpc-jsonrpc", "grpc-port": 0, "api-key": "g-key" });
    });
    after(async () => {
      await s.close();
      removeDir(s.dir);
    });

    it("a call without the API key is UNAUTHENTICATED; with it, answered, the extended card included", async () => {
      const anonymous = grpcEnvelopeConnection(target(s.url));
      const keyed = grpcEnvelopeConnection(target(s.url), { "x-api-key": "g-key" });
      try {
        expect(await failed(anonymous, anonymous.send(request("ListTasks", {})))).to.equal(
          status.UNAUTHENTICATED,
        );
        expect(await failed(anonymous, anonymous.send(request("ListTasks", {}), { stream: true }))).to.equal(
          status.UNAUTHENTICATED,
        );
        const reply = await keyed.next(keyed.send(request("SendMessage", message("hello"))));
        expect(reply.payload.result.task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
        const extended = await keyed.next(keyed.send(request("GetExtendedAgentCard")));
        const card = extended.payload.result as Json;
        expect(card.capabilities.extendedAgentCard).to.equal(true);
        expect(card.supportedInterfaces).to.deep.equal([
          { url: s.url, protocolBinding: "grpc-jsonrpc", protocolVersion: "1.0" },
        ]);
        expect(Object.keys(card.securitySchemes as object)).to.deep.equal(["apiKeyAuth"]);
      } finally {
        await anonymous.close();
        await keyed.close();
      }
    });
  });
});
