/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form JSON-RPC replies through `any` (Json) */
// The redis-streams transport against a private redis-server, through plain
// Redis commands: the shared JSON-RPC behaviour, two servers in one consumer
// group answering each request once, the consumer leaving its group at
// shutdown, and access through a Redis ACL user (never shown on the card).
import { expect } from "chai";
import { Redis } from "ioredis";
import { encodeProtoJson, pb } from "../../src/contract/index.js";
import { startOurServer } from "../a2a-client/harness.js";
import { removeDir, type E2eServer } from "../e2e/helpers.js";
import { startRedis, type TestRedis } from "../fixtures/redis-server.js";
import {
  message,
  redisConnection,
  request,
  untilFinal,
  type Json,
  type RawConnection,
} from "./raw-clients.js";
import { sharedBehaviour } from "./suite.js";

type Consumers = Array<[string, string, string, number, ...unknown[]]>;

async function consumersOf(redis: Redis, stream: string, group: string): Promise<string[]> {
  const rows = (await redis.call("XINFO", "CONSUMERS", stream, group)) as Consumers;
  return rows.map((row) => String(row[1]));
}

describe("transport redis-streams", function () {
  this.timeout(60_000);
  let redis: TestRedis;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis.close();
  });

  describe("one server", () => {
    let s: E2eServer;
    let c: RawConnection;
    before(async () => {
      s = await startOurServer({ transport: "redis-streams", "redis-url": redis.url });
      c = await redisConnection(redis.url, { request: "iac-code:a2a:requests", reply: "test:replies" });
    });
    after(async () => {
      await c.close();
      await s.close();
      removeDir(s.dir);
    });

    sharedBehaviour(() => c, {
      protocolBinding: "redis-streams",
      url: () => `redis-streams://${redis.url}/iac-code:a2a:requests/iac-code:a2a:responses/iac-code`,
      metrics: async () => (await s.server.metrics.scrape()).body,
      card: () => s.server.cards.publicCard.json,
    });

    it("a request without reply_stream is answered on response-stream; final is 'true'/'false'", async () => {
      const admin = new Redis(redis.url);
      try {
        await admin.xadd(
          "iac-code:a2a:requests",
          "*",
          "correlation_id",
          "no-reply-stream",
          "payload",
          request("SendStreamingMessage", message("hello"), "d-1"),
        );
        let entries: Array<[string, string[]]> = [];
        for (let i = 0; i < 300; i++) {
          entries = (await admin.xrange("iac-code:a2a:responses", "-", "+")).filter((e) =>
            e[1].includes("no-reply-stream"),
          );
          if (entries.some((e) => e[1].includes('{"jsonrpc":"2.0","id":"d-1"}'))) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        const finals = entries.map((e) => e[1][e[1].indexOf("final") + 1]);
        expect(finals.at(-1)).to.equal("true");
        expect(finals.slice(0, -1).every((f) => f === "false")).to.equal(true);
        expect(entries.length).to.be.greaterThan(2);
      } finally {
        admin.disconnect();
      }
    });
  });

  it("two servers in one consumer group answer each request once, and leave the group at shutdown", async () => {
    const file = {
      transport: "redis-streams",
      "redis-url": redis.url,
      "request-stream": "pair:req",
      "consumer-group": "pair",
    };
    const a = await startOurServer(file);
    const b = await startOurServer(file);
    const c = await redisConnection(redis.url, { request: "pair:req", reply: "pair:replies" });
    const admin = new Redis(redis.url);
    try {
      expect(await consumersOf(admin, "pair:req", "pair")).to.have.length(2);
      const taskIds: string[] = [];
      for (let i = 0; i < 8; i++) {
        const frames = await untilFinal(c, c.send(request("SendMessage", message(`hello ${i}`))));
        expect(frames).to.have.length(1);
        taskIds.push(frames[0].payload.result.task.id as string);
      }
      // No request got a second answer meanwhile.
      const replies = await admin.xrange("pair:replies", "-", "+");
      expect(replies).to.have.length(8);
      const answeredBy = async (s: E2eServer) =>
        (
          await s.server.service.listTasks({ pageSize: 100 } as never, {
            owner: "",
            authenticated: false,
            requestedExtensions: [],
            signal: new AbortController().signal,
            binding: "jsonrpc",
          })
        ).tasks.map((t) => t.id);
      const [byA, byB] = [await answeredBy(a), await answeredBy(b)];
      expect([...byA, ...byB].sort()).to.deep.equal([...taskIds].sort());
      expect(byA.length).to.be.greaterThan(0);
      expect(byB.length).to.be.greaterThan(0);
      const pending = (await admin.xpending("pair:req", "pair")) as [number, ...unknown[]];
      expect(pending[0]).to.equal(0);

      await a.close();
      expect(await consumersOf(admin, "pair:req", "pair")).to.have.length(1);
      await b.close();
      expect(await consumersOf(admin, "pair:req", "pair")).to.deep.equal([]);
    } finally {
      await c.close();
      admin.disconnect();
      await a.close();
      await b.close();
      removeDir(a.dir);
      removeDir(b.dir);
    }
  });

  it("a Redis ACL user in the URL: the card shows the URL without the password; a wrong one stops the start", async () => {
    const admin = new Redis(redis.url);
    await admin.call("ACL", "SETUSER", "agent", "on", ">agent-pw", "~acl:*", "+@all");
    const url = redis.url.replace("redis://", "redis://agent:agent-pw@");
    const s = await startOurServer({
      transport: "redis-streams",
      "redis-url": url,
      "request-stream": "acl:req",
      "response-stream": "acl:resp",
    });
    try {
      const c = await redisConnection(url, { request: "acl:req", reply: "acl:replies" });
      // The transport is up (a reply came back through the ACL user); its card is read in process.
      const listed = await c.next(c.send(request("ListTasks")));
      expect(listed.payload.result.tasks).to.deep.equal([]);
      const card: Json = s.server.cards.publicCard.json;
      expect(card.supportedInterfaces[0].url).to.equal(
        `redis-streams://${redis.url.replace("redis://", "redis://agent@")}/acl:req/acl:resp/iac-code`,
      );
      expect(JSON.stringify(card)).to.not.include("agent-pw");
      expect(JSON.stringify(encodeProtoJson(pb.AgentCardSchema, s.server.cards.extendedCard))).to.not.include(
        "agent-pw",
      );
      await c.close();
      let failure: Error | undefined;
      try {
        const bad = await startOurServer({
          transport: "redis-streams",
          "redis-url": url.replace("agent-pw", "wrong-pw"),
        });
        await bad.close();
      } catch (error) {
        failure = error as Error;
      }
      expect(failure?.message).to.match(
        /^Cannot connect to Redis at redis:\/\/agent@127\.0\.0\.1:\d+: WRONGPASS/,
      );
      expect(failure?.message).to.not.include("wrong-pw");
    } finally {
      await s.close();
      removeDir(s.dir);
      admin.disconnect();
    }
  });

  it("an unreachable Redis stops the start with the address and the reason", async () => {
    let failure: Error | undefined;
    try {
      const s = await startOurServer({ transport: "redis-streams", "redis-url": "redis://127.0.0.1:1" });
      await s.close();
    } catch (error) {
      failure = error as Error;
    }
    expect(failure?.message).to.equal(
      "Cannot connect to Redis at redis://127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1",
    );
  });
});
