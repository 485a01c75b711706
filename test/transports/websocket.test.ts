/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form JSON-RPC replies through `any` (Json) */
// The websocket transport through a raw `ws` client: the shared JSON-RPC
// behaviour, the {id, payload, final} frames, the HTTP auth settings checked
// at the upgrade, the route, and connections closed at shutdown.
import { expect } from "chai";
import { startOurServer } from "../a2a-client/harness.js";
import { removeDir, type E2eServer } from "../e2e/helpers.js";
import { message, request, wsConnection, wsRefusal, type WsConnection } from "./raw-clients.js";
import { sharedBehaviour } from "./suite.js";

describe("transport websocket", function () {
  this.timeout(60_000);

  describe("without auth", () => {
    let s: E2eServer;
    let c: WsConnection;
    before(async () => {
      s = await startOurServer({ transport: "websocket" });
      c = await wsConnection(s.url);
    });
    after(async () => {
      await c.close();
      await s.close();
      removeDir(s.dir);
    });

    sharedBehaviour(() => c, {
      protocolBinding: "websocket",
      url: () => s.url,
      metrics: async () => (await s.server.metrics.scrape()).body,
      card: () => s.server.cards.publicCard.json,
    });

    it("frames are {id, payload, final}: a unary reply is one final frame", async () => {
      const key = c.send(request("ListTasks", {}, "ws-1"));
      const frame = await c.next(key);
      expect(Object.keys(JSON.parse(frame.raw) as object)).to.deep.equal(["id", "payload", "final"]);
      expect(frame.final).to.equal(true);
      expect(frame.payload.id).to.equal("ws-1");
    });

    it("the URL is ws://host:port/a2a; another route is 404 and a plain request 426", async () => {
      expect(s.url).to.match(/^ws:\/\/127\.0\.0\.1:\d+\/a2a$/);
      expect(await wsRefusal(s.url.replace(/\/a2a$/, "/other"))).to.equal(404);
      const plain = await fetch(s.url.replace(/^ws:/, "http:"));
      expect(plain.status).to.equal(426);
    });
  });

  describe("with auth (same settings as HTTP)", () => {
    let s: E2eServer;
    before(async () => {
      s = await startOurServer({ transport: "websocket", token: "ws-token", "ws-path": "/rpc" });
    });
    after(async () => {
      await s.close();
      removeDir(s.dir);
    });

    it("refuses the upgrade without or with a wrong token (401); the bearer token gets in, and the extended card", async () => {
      expect(s.url).to.match(/\/rpc$/);
      expect(await wsRefusal(s.url)).to.equal(401);
      expect(await wsRefusal(s.url, { Authorization: "Bearer nope" })).to.equal(401);
      const c = await wsConnection(s.url, { Authorization: "Bearer ws-token" });
      try {
        const reply = await c.next(c.send(request("SendMessage", message("hello"))));
        expect(reply.payload.result.task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
        const card = await c.next(c.send(request("GetExtendedAgentCard")));
        expect(Object.keys(card.payload.result.securitySchemes as object)).to.deep.equal(["bearerAuth"]);
        expect(card.payload.result.capabilities.extendedAgentCard).to.equal(true);
        expect(card.payload.result.supportedInterfaces).to.deep.equal([
          { url: s.url, protocolBinding: "websocket", protocolVersion: "1.0" },
        ]);
      } finally {
        await c.close();
      }
    });

    it("shutdown ends a running stream's connection after the turn is cancelled", async () => {
      const c = await wsConnection(s.url, { Authorization: "Bearer ws-token" });
      const key = c.send(request("SendStreamingMessage", message("[SLOW] interrupted")));
      await c.next(key);
      const closed = new Promise<number>((done) => c.socket.once("close", (code) => done(code)));
      await s.close();
      const frames = [];
      for (;;) {
        const frame = await c.next(key).catch(() => undefined);
        if (!frame) break;
        frames.push(frame);
        if (frame.final) break;
      }
      expect(
        frames.some((f) => f.payload.result?.statusUpdate?.status?.state === "TASK_STATE_CANCELED"),
      ).to.equal(true);
      expect(await closed).to.equal(1001);
    });
  });
});
