// The push config store and the push outbox, SQLite and Redis against the same
// expectations (owner-scoped configs sorted by id with read-your-writes; an
// event becomes one job per config at the commit; claims are leases; retry,
// ack and dead letters), then what only the shared store has: an event of a
// replica that lost its context's lease makes no job, replicas claiming at
// once get each job once, and the Redis outbox feeds push-queue redis-streams.
import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { pb } from "../../src/contract/index.js";
import { leaseKey, RedisLeases } from "../../src/a2a/stores/redis-leases.js";
import { RedisStateStore } from "../../src/a2a/stores/redis-state.js";
import type { PushJob, StateStore, StoredPushConfig } from "../../src/a2a/stores/state.js";
import { createLogger } from "../../src/server/logger.js";
import { bothStores } from "../fixtures/both-stores.js";
import { rpc, userMessage } from "../a2a/helpers.js";
import { startPushReceiver } from "../fixtures/push-receiver.js";
import { sleep, startPushServer, TOKEN } from "./harness.js";

const logger = createLogger({ silent: true });

const config = (taskId: string, id: string, extra: Partial<StoredPushConfig> = {}): StoredPushConfig => ({
  taskId,
  id,
  owner: "alice",
  url: `https://hooks.example.com/${id}`,
  scheme: "Bearer",
  sealedSecrets: `sealed-${id}`,
  ...extra,
});

const statusEvent = (taskId: string, contextId: string, state: pb.TaskState) =>
  create(pb.StreamResponseSchema, {
    payload: { case: "statusUpdate", value: { taskId, contextId, status: { state } } },
  });

const stateOf = (job: PushJob) =>
  (JSON.parse(job.payload) as { statusUpdate: { status: { state: string } } }).statusUpdate.status.state;

/** Claims until nothing is due; returns what was claimed (each leased for leaseMs). */
async function claimAll(store: StateStore, leaseMs = 60_000): Promise<PushJob[]> {
  const jobs: PushJob[] = [];
  for (let job = await store.pushJobs.claim(leaseMs); job; job = await store.pushJobs.claim(leaseMs))
    jobs.push(job);
  return jobs;
}

describe("a2a-push: the push stores, SQLite and Redis answer alike", () => {
  const s = bothStores("iac-push-stores-");

  for (const [name, open] of s.stores) {
    it(`${name}: configs by owner, task and id, sorted by id, paged from an id, replaced, removed; reads see staged writes`, async () => {
      const store = open();
      try {
        for (const id of ["c", "a", "b", "d"]) store.pushConfigs.save(config("t1", id));
        store.pushConfigs.save(config("t2", "a", { url: "https://other.example.com/" }));
        store.pushConfigs.save(config("t1", "b", { url: "https://hooks.example.com/b2", scheme: "" }));
        // Nothing committed yet: the reads see it all the same.
        expect(await store.pushConfigs.get("alice", "t1", "b")).to.deep.equal(
          config("t1", "b", { url: "https://hooks.example.com/b2", scheme: "" }),
        );
        const list = (startId: string | undefined, limit: number, owner = "alice", task = "t1") =>
          store.pushConfigs.list(owner, task, startId, limit).then((rows) => rows.map((c) => c.id));
        expect(await list(undefined, 10)).to.deep.equal(["a", "b", "c", "d"]);
        expect(await list(undefined, 2)).to.deep.equal(["a", "b"]);
        expect(await list("b", 2)).to.deep.equal(["b", "c"]);
        expect(await list("bb", 10)).to.deep.equal(["c", "d"]);
        expect(await list(undefined, 10, "alice", "t2")).to.deep.equal(["a"]);
        // Another owner sees nothing and removes nothing.
        expect(await store.pushConfigs.get("mallory", "t1", "a")).to.equal(undefined);
        expect(await list(undefined, 10, "mallory")).to.deep.equal([]);
        store.pushConfigs.remove("mallory", "t1", "a");
        store.pushConfigs.remove("alice", "t1", "c");
        store.pushConfigs.remove("alice", "t1", "missing");
        expect(await list(undefined, 10)).to.deep.equal(["a", "b", "d"]);
        expect(await store.pushConfigs.get("alice", "t1", "c")).to.equal(undefined);
      } finally {
        await store.close();
      }
    });

    it(`${name}: an event is one job per config at its commit, the event id shared; claims lease, in order; retry, ack, dead letters`, async () => {
      const store = open();
      try {
        store.pushJobs.enqueue("t1", statusEvent("t1", "ctx", pb.TaskState.SUBMITTED)); // no config yet: no job
        await store.commit();
        // A config staged in the same commit as the event gets its job.
        store.pushConfigs.save(config("t1", "a"));
        store.pushConfigs.save(config("t1", "b", { sealedSecrets: "" }));
        store.pushConfigs.save(config("t2", "x"));
        store.pushJobs.enqueue("t1", statusEvent("t1", "ctx", pb.TaskState.WORKING));
        store.pushJobs.enqueue("t1", statusEvent("t1", "ctx", pb.TaskState.COMPLETED));
        await store.commit();

        const jobs = await claimAll(store);
        expect(jobs.map((j) => [stateOf(j), j.configId]).sort()).to.deep.equal([
          ["TASK_STATE_COMPLETED", "a"],
          ["TASK_STATE_COMPLETED", "b"],
          ["TASK_STATE_WORKING", "a"],
          ["TASK_STATE_WORKING", "b"],
        ]);
        // Per config, the events in the order they were committed.
        for (const id of ["a", "b"])
          expect(jobs.filter((j) => j.configId === id).map(stateOf)).to.deep.equal([
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED",
          ]);
        const working = jobs.filter((j) => stateOf(j) === "TASK_STATE_WORKING");
        expect(working[0].eventId).to.equal(working[1].eventId);
        expect(new Set(jobs.map((j) => j.eventId)).size).to.equal(2);
        expect(new Set(jobs.map((j) => j.jobId)).size).to.equal(4);
        const a = jobs.find((j) => j.configId === "a")!;
        expect(a).to.deep.include({
          taskId: "t1",
          url: "https://hooks.example.com/a",
          scheme: "Bearer",
          sealedSecrets: "sealed-a",
          attempt: 0,
          lastError: "",
        });
        expect(jobs.find((j) => j.configId === "b")!.sealedSecrets).to.equal("");

        const [first, second, third, fourth] = jobs;
        await store.pushJobs.ack(first.jobId);
        // A retry waits until it is due, then comes back with its attempt and error.
        await store.pushJobs.retry({
          ...second,
          attempt: 1,
          nextAttemptAt: Date.now() + 300,
          lastError: "HTTP 503",
        });
        await store.pushJobs.dead({ ...third, attempt: 1, lastError: "HTTP 400" });
        expect(await store.pushJobs.claim(60_000)).to.equal(undefined);
        await sleep(350);
        const again = await store.pushJobs.claim(60_000);
        expect(again).to.deep.include({ jobId: second.jobId, attempt: 1, lastError: "HTTP 503" });
        await store.pushJobs.ack(again!.jobId);
        const dead = await store.pushJobs.deadLetters();
        expect(dead.map((j) => [j.jobId, j.eventId, j.attempt, j.lastError, j.sealedSecrets])).to.deep.equal([
          [third.jobId, third.eventId, 1, "HTTP 400", third.sealedSecrets],
        ]);

        // A lease that runs out makes the job due again (its holder died).
        await store.pushJobs.retry({ ...fourth });
        const leased = await store.pushJobs.claim(200);
        expect(leased?.jobId).to.equal(fourth.jobId);
        expect(await store.pushJobs.claim(200)).to.equal(undefined);
        await sleep(250);
        expect((await store.pushJobs.claim(60_000))?.jobId).to.equal(fourth.jobId);
        await store.pushJobs.ack(fourth.jobId);
        expect(await store.pushJobs.claim(60_000)).to.equal(undefined);
      } finally {
        await store.close();
      }
    });
  }

  it("redis: the event of a replica that lost its context's lease makes no job; the new holder's does", async () => {
    const a = new RedisLeases(s.client, "replica-a", 60_000, logger);
    const b = new RedisLeases(s.client, "replica-b", 60_000, logger);
    const storeA = new RedisStateStore({ redis: s.client, logger, fenceOf: (id) => a.fenceOf(id) });
    const storeB = new RedisStateStore({ redis: s.client, logger, fenceOf: (id) => b.fenceOf(id) });
    try {
      await a.acquire("ctx");
      storeB.pushConfigs.save(config("t1", "hook")); // a client's call on B: not fenced
      await storeB.commit();
      storeA.pushJobs.enqueue("t1", statusEvent("t1", "ctx", pb.TaskState.WORKING));
      await storeA.commit();
      await s.client.del(leaseKey("ctx"));
      await b.acquire("ctx");
      storeA.pushJobs.enqueue("t1", statusEvent("t1", "ctx", pb.TaskState.COMPLETED));
      storeA.pushJobs.enqueue("t9", statusEvent("t9", "ctx-free", pb.TaskState.COMPLETED));
      storeA.pushConfigs.save(config("t9", "hook"));
      await storeA.commit();
      storeB.pushJobs.enqueue("t1", statusEvent("t1", "ctx", pb.TaskState.FAILED));
      await storeB.commit();
      const jobs = await claimAll(storeB);
      expect(jobs.map((j) => [j.taskId, stateOf(j)])).to.deep.equal([
        ["t1", "TASK_STATE_WORKING"],
        ["t9", "TASK_STATE_COMPLETED"],
        ["t1", "TASK_STATE_FAILED"],
      ]);
    } finally {
      await a.close();
      await b.close();
      await storeA.close();
      await storeB.close();
    }
  });

  it("redis: replicas claiming at once get each job once", async () => {
    const clients = [0, 1, 2].map(() => new Redis(s.redis.url));
    const replicas = clients.map((c) => new RedisStateStore({ redis: c, logger, fenceOf: () => undefined }));
    const [writer] = replicas;
    try {
      writer.pushConfigs.save(config("t1", "a"));
      writer.pushConfigs.save(config("t1", "b"));
      for (let i = 0; i < 50; i += 1)
        writer.pushJobs.enqueue("t1", statusEvent("t1", "ctx", pb.TaskState.WORKING));
      await writer.commit();
      const claimed = (await Promise.all(replicas.map((r) => claimAll(r)))).flat();
      expect(claimed).to.have.length(100);
      expect(new Set(claimed.map((j) => j.jobId)).size).to.equal(100);
    } finally {
      for (const r of replicas) await r.close();
      for (const c of clients) c.disconnect();
    }
  });

  it("store: redis with push-queue redis-streams: the outbox in Redis feeds the stream, the jobs are delivered", async () => {
    const receiver = await startPushReceiver();
    const keyring = JSON.stringify({
      activeKeyId: "k",
      keys: [{ id: "k", key: randomBytes(32).toString("base64") }],
    });
    const server = await startPushServer({
      file: {
        store: "redis",
        "redis-url": s.redis.url,
        "push-queue": "redis-streams",
        "push-redis-url": s.redis.url,
      },
      env: { IAC_CODE_A2A_PUSH_KEYRING: keyring },
    });
    try {
      const reply = await rpc(server.url, "SendMessage", {
        message: userMessage("hello"),
        configuration: { taskPushNotificationConfig: { url: receiver.url, token: TOKEN } },
      });
      expect(reply.body.error, JSON.stringify(reply.body.error)).to.equal(undefined);
      const received = await receiver.waitFor((r) => r.some((e) => e.state === "TASK_STATE_INPUT_REQUIRED"));
      expect(received.map((r) => r.state)).to.deep.equal([
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_INPUT_REQUIRED",
      ]);
      expect(received.every((r) => r.headers["x-a2a-notification-token"] === TOKEN)).to.equal(true);
      // Handed on: nothing left in the outbox, the stream entries acked and deleted.
      expect(await s.client.zcard("iac-code:a2a:outbox:due")).to.equal(0);
      expect(await s.client.xlen("iac-code:a2a:push")).to.equal(0);
    } finally {
      await server.close();
      await receiver.close();
    }
  });
});
