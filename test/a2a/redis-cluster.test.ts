// Two replicas' Redis backends (openRedisBackend, as `iac-code a2a --store
// redis` assembles them) on one private Redis: what a turn costs Redis when no
// other replica looks (its lease goes back in its last commit; its events are
// not written, only its end) and what a follower gets (the events from its
// follow on, whole and in order, then the end).
import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Redis } from "ioredis";
import { pb } from "../../src/contract/index.js";
import { EventHub } from "../../src/a2a/core/turn/event-hub.js";
import { openRedisBackend, type RedisBackend } from "../../src/a2a/replicas/redis-backend.js";
import { leaseKey } from "../../src/a2a/stores/redis-leases.js";
import { A2A_PREFIX } from "../../src/a2a/stores/redis-state.js";
import { createLogger } from "../../src/server/logger.js";
import { startRedis, type TestRedis } from "../fixtures/redis-server.js";

const logger = createLogger({ silent: true });

const working = (taskId: string, ms: number): pb.Task =>
  create(pb.TaskSchema, {
    id: taskId,
    contextId: "ctx",
    status: { state: pb.TaskState.WORKING, timestamp: timestampFromMs(ms) },
  });

const chunk = (taskId: string, text: string): pb.StreamResponse =>
  create(pb.StreamResponseSchema, {
    payload: {
      case: "artifactUpdate",
      value: {
        taskId,
        contextId: "ctx",
        append: true,
        artifact: { artifactId: "a", parts: [{ content: { case: "text", value: text } }] },
      },
    },
  });

const textOf = (event: pb.StreamResponse): string => {
  const part = event.payload.case === "artifactUpdate" ? event.payload.value.artifact?.parts[0] : undefined;
  return part?.content.case === "text" ? part.content.value : "";
};

/** Resolves on the next macrotask after the staged writes have had their chance to flush. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 50));

describe("Redis replicas: leases and relayed events", () => {
  let redis: TestRedis;
  let client: Redis;
  let a: RedisBackend;
  let b: RedisBackend;

  before(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
  });
  after(async () => {
    client.disconnect();
    await redis.close();
  });
  beforeEach(async () => {
    await client.flushall();
    a = await openRedisBackend(redis.url, 15_000, logger);
    b = await openRedisBackend(redis.url, 15_000, logger);
  });
  afterEach(async () => {
    await a.state.close();
    await b.state.close();
    await a.close();
    await b.close();
  });

  it("a context's lease goes back in the commit of its last writes; a claim before that commit keeps it", async () => {
    expect(await a.cluster.acquire("ctx")).to.equal("acquired");
    // The commit script is loaded (a first call to a fresh Redis is answered NOSCRIPT, then sent whole).
    a.state.contexts.save({ contextId: "other", owner: "", sessionId: "", cwd: "", updatedAt: 1 });
    await a.state.commit();
    const monitor = await client.monitor();
    const calls: string[][] = [];
    monitor.on("monitor", (_time: string, args: string[]) => calls.push(args));
    a.state.tasks.save({
      task: working("t", 1000),
      owner: "",
      updatedAt: 1000,
      language: "en",
      credentialNames: [],
    });
    await a.cluster.release("ctx");
    await settled();
    monitor.disconnect();
    const scripts = calls.filter(([name]) => /^eval/i.test(name));
    expect(scripts, "the writes and the release: one script call").to.have.length(1);
    expect(scripts[0]).to.include.members(["T", "Z"]);
    expect(await client.exists(leaseKey("ctx"))).to.equal(0);
    expect((await b.state.tasks.get("t"))?.task.status?.state).to.equal(pb.TaskState.WORKING);

    expect(await a.cluster.acquire("ctx")).to.equal("acquired");
    const value = await client.get(leaseKey("ctx"));
    const released = a.cluster.release("ctx");
    // A new request for the context arrives before the release is sent: the lease stays.
    expect(await a.cluster.acquire("ctx")).to.equal("held");
    await released;
    await settled();
    expect(await client.get(leaseKey("ctx"))).to.equal(value);
    expect(await b.cluster.acquire("ctx")).to.equal("busy");
    // The lease is still renewed and fences A's writes: it is held, not just left in Redis.
    a.state.tasks.save({
      task: working("t", 2000),
      owner: "",
      updatedAt: 2000,
      language: "en",
      credentialNames: [],
    });
    await a.state.commit();
    expect((await b.state.tasks.get("t"))?.task.status?.timestamp).to.deep.equal(timestampFromMs(2000));
    await a.cluster.release("ctx");
    expect(await b.cluster.acquire("ctx")).to.equal("acquired");
  });

  it("a turn no replica follows writes only its end; a follower gets the events from its follow on, in order", async () => {
    expect(await a.cluster.acquire("ctx")).to.equal("acquired");
    const quiet = new EventHub<pb.StreamResponse>();
    a.cluster.relay("quiet", quiet.subscribe());
    for (let i = 0; i < 5; i += 1) quiet.publish(chunk("quiet", `q${i}`));
    quiet.close();
    await settled();
    const entries = await client.xrangeBuffer(`${A2A_PREFIX}ev2:quiet`, "-", "+");
    expect(entries.map(([, fields]) => fields.map(String))).to.deep.equal([["b", "", "end", "1"]]);

    const hub = new EventHub<pb.StreamResponse>();
    a.cluster.relay("t", hub.subscribe());
    hub.publish(chunk("t", "before"));
    await settled();
    const abort = new AbortController();
    const followed = await b.cluster.follow("t", "ctx", abort.signal);
    const texts = Array.from({ length: 300 }, (_, i) => `c${i}`);
    for (const text of texts) hub.publish(chunk("t", text));
    hub.close();
    const seen: string[] = [];
    for await (const event of followed) seen.push(textOf(event));
    expect(seen).to.deep.equal(texts);
    // 300 events in one event-loop turn: two entries (at most 256 events each), then the end.
    const stream = await client.xlen(`${A2A_PREFIX}ev2:t`);
    expect(stream).to.be.at.most(3);
  });
});
