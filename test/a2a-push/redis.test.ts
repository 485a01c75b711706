// The Redis Streams push queue against a real redis-server of the test's own:
// enqueue / claim / ack, a claimed entry taken over only after the lease
// (XAUTOCLAIM), retries through the sorted set, dead letters, the clients
// closed; then two A2A servers on one consumer group, each job delivered
// once, and no token or credential in what Redis stores (its AOF included).
import { expect } from "chai";
import { randomBytes, randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { Redis } from "ioredis";
import { RedisPushQueue, type RedisQueueSettings } from "../../src/a2a/push/redis-queue.js";
import type { PushJob } from "../../src/a2a/stores/state.js";
import { createLogger } from "../../src/server/logger.js";
import { rpc, userMessage } from "../a2a/helpers.js";
import { startPushReceiver, type PushReceiver } from "../fixtures/push-receiver.js";
import { startRedis, type TestRedis } from "../fixtures/redis-server.js";
import { BEARER_CRED, sleep, startPushServer, TOKEN, type PushHarness } from "./harness.js";

const logger = createLogger({ silent: true });

function settingsFor(redis: TestRedis, consumerName: string, leaseTimeoutMs = 300_000): RedisQueueSettings {
  return {
    redisUrl: redis.url,
    stream: "t:push",
    retryKey: "t:push:retry",
    deadStream: "t:push:dead",
    consumerGroup: "t-group",
    consumerName,
    leaseTimeoutMs,
  };
}

function job(extra: Partial<PushJob> = {}): PushJob {
  return {
    jobId: randomUUID(),
    eventId: randomUUID(),
    taskId: "task-1",
    configId: "hook",
    url: "https://hooks.example.com/a2a",
    scheme: "",
    sealedSecrets: "",
    payload: JSON.stringify({ statusUpdate: { taskId: "task-1" } }),
    attempt: 0,
    nextAttemptAt: Date.now(),
    lastError: "",
    ...extra,
  };
}

describe("a2a-push: the Redis Streams queue", function () {
  this.timeout(30_000);
  let redis: TestRedis;
  let client: Redis;
  const queues: RedisPushQueue[] = [];
  const open = async (name: string, lease?: number) => {
    const queue = await RedisPushQueue.open(settingsFor(redis, name, lease), logger);
    queues.push(queue);
    return queue;
  };

  before(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
  });
  afterEach(async () => {
    await Promise.all(queues.splice(0).map((q) => q.close()));
    await client.flushall();
  });
  after(async () => {
    client.disconnect();
    await redis.close();
  });

  it("creates the group with MKSTREAM (an existing one is fine); enqueue, claim, ack leaves nothing behind", async () => {
    const a = await open("a");
    await open("a-again");
    expect(await client.xlen("t:push")).to.equal(0);
    const groups = (await client.xinfo("GROUPS", "t:push")) as unknown[][];
    expect(groups).to.have.length(1);
    const sent = job();
    await a.enqueue(sent);
    const claimed = await a.claim();
    expect(claimed?.job).to.deep.equal(sent);
    await a.ack(claimed!);
    expect(await client.xlen("t:push")).to.equal(0);
    expect((await client.xpending("t:push", "t-group"))[0]).to.equal(0);
  });

  it("another consumer takes over a claimed job only once the lease is over", async () => {
    const a = await open("a", 800);
    const b = await open("b", 800);
    const sent = job();
    await a.enqueue(sent);
    expect((await a.claim())?.job.jobId).to.equal(sent.jobId);
    expect(await b.claim()).to.equal(undefined); // held by a: b blocks, then gets nothing
    await sleep(900);
    const stolen = await b.claim();
    expect(stolen?.job.jobId).to.equal(sent.jobId);
    await b.ack(stolen!);
    expect((await client.xpending("t:push", "t-group"))[0]).to.equal(0);
  });

  it("a retry waits in the sorted set until due, then comes back with its attempt; a dead letter goes to the dead stream", async () => {
    const a = await open("a");
    await a.enqueue(job());
    const claimed = (await a.claim())!;
    const retried = {
      ...claimed.job,
      attempt: 1,
      lastError: "HTTPError: HTTP 503",
      nextAttemptAt: Date.now() + 1500,
    };
    await a.retry(claimed, retried);
    expect(await client.zcard("t:push:retry")).to.equal(1);
    expect(await client.xlen("t:push")).to.equal(0);
    expect(await a.claim()).to.equal(undefined);
    await sleep(600);
    const again = await a.claim();
    expect(again?.job).to.deep.equal(retried);
    expect(await client.zcard("t:push:retry")).to.equal(0);
    await a.dead(again!, { ...retried, attempt: 2, lastError: "HTTPError: HTTP 400" });
    const dead = await client.xrange("t:push:dead", "-", "+");
    expect(dead).to.have.length(1);
    expect(JSON.parse(dead[0][1][1])).to.deep.include({
      jobId: retried.jobId,
      lastError: "HTTPError: HTTP 400",
    });
    expect((await client.xpending("t:push", "t-group"))[0]).to.equal(0);
  });

  it("closes the connections it opened", async () => {
    const a = await open("a");
    const before = Number(/connected_clients:(\d+)/.exec(await client.info("clients"))![1]);
    await a.close();
    queues.splice(queues.indexOf(a), 1);
    await sleep(100);
    const after = Number(/connected_clients:(\d+)/.exec(await client.info("clients"))![1]);
    expect(before - after).to.equal(2);
  });
});

describe("a2a-push: a push Redis that cannot be reached", () => {
  it("stops the start with a clear message that hides the Redis password", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    let message = "";
    await startPushServer({
      file: { "push-queue": "redis-streams", "push-redis-url": `redis://:hunter2@127.0.0.1:${port}/0` },
    }).catch((error: unknown) => (message = (error as Error).message));
    expect(message).to.match(new RegExp(`^Cannot use the push Redis at redis://127\\.0\\.0\\.1:${port}/0: `));
    expect(message).to.not.include("hunter2");
  });
});

describe("a2a-push: two A2A servers on one Redis consumer group", function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let receiver: PushReceiver;
  let servers: PushHarness[] = [];

  before(async () => {
    redis = await startRedis({ appendOnly: true });
    receiver = await startPushReceiver();
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await receiver.close();
    await redis.close();
  });

  it("deliver each job once, and Redis (entries, dead letters, AOF) holds no token or credential", async () => {
    const keyring = JSON.stringify({
      activeKeyId: "shared",
      keys: [{ id: "shared", key: randomBytes(32).toString("base64") }],
    });
    const file = {
      "push-queue": "redis-streams",
      "push-redis-url": redis.url,
      "push-lease-timeout-ms": 60_000,
    };
    servers = await Promise.all(
      ["one", "two"].map((name) =>
        startPushServer({
          file: { ...file, "push-consumer-name": name },
          env: { IAC_CODE_A2A_PUSH_KEYRING: keyring },
        }),
      ),
    );
    // Every WORKING update is refused for good: its job ends in the dead stream, as stored.
    receiver.reply = (r) => (r.state === "TASK_STATE_WORKING" ? 400 : 200);
    const hook = {
      url: receiver.url,
      token: TOKEN,
      authentication: { scheme: "bearer", credentials: BEARER_CRED },
    };
    const turns = 6;
    await Promise.all(
      Array.from({ length: turns }, (_, i) =>
        rpc(servers[i % 2].url, "SendMessage", {
          message: userMessage(`turn ${i}`),
          configuration: { taskPushNotificationConfig: hook },
        }),
      ),
    );
    // SUBMITTED, WORKING and INPUT_REQUIRED per turn.
    const received = await receiver.waitFor((r) => r.length >= turns * 3);
    await sleep(1500);
    expect(receiver.received).to.have.length(turns * 3);
    expect(new Set(received.map((r) => r.eventId)).size).to.equal(turns * 3);
    expect(received.every((r) => r.headers["x-a2a-notification-token"] === TOKEN)).to.equal(true);
    expect(received.every((r) => r.headers.authorization === `Bearer ${BEARER_CRED}`)).to.equal(true);

    const client = new Redis(redis.url);
    try {
      const dead = await client.xrange("iac-code:a2a:push:dead", "-", "+");
      expect(dead).to.have.length(turns);
      const stored = dead.map((entry) => entry[1].join(" ")).join("\n");
      expect(stored).to.include("sealedSecrets");
      for (const secret of [TOKEN, BEARER_CRED]) expect(stored).to.not.include(secret);
      expect(await client.xlen("iac-code:a2a:push")).to.equal(0);
    } finally {
      client.disconnect();
    }
    const aof = path.join(redis.dir, "appendonlydir");
    const text = readdirSync(aof)
      .map((name) => readFileSync(path.join(aof, name), "latin1"))
      .join("");
    expect(text).to.include("iac-code:a2a:push");
    for (const secret of [TOKEN, BEARER_CRED]) expect(text).to.not.include(secret);
  });
});
