// The Redis state store against the same expectations as the embedded one
// (filters, totals, keyset paging, artifacts, read-your-writes), and what only
// a shared store has: leases with fencing tokens that refuse the writes of a
// replica that lost its context, in the state store and in the runtime
// sessions; unreadable records quarantined; the settings that choose it.
import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { pb } from "../../src/contract/index.js";
import { leaseKey, RedisLeases } from "../../src/a2a/stores/redis-leases.js";
import { A2A_PREFIX, RedisStateStore } from "../../src/a2a/stores/redis-state.js";
import type { AuditEntry, StoredTask } from "../../src/a2a/stores/state.js";
import { openSessionData } from "../../src/runtime/session/store.js";
import { sessionScope } from "../../src/runtime/store/runtime-store.js";
import { ConfigError, resolveSettings } from "../../src/a2a/config/server-settings.js";
import { resolveSettings as resolveAguiSettings } from "../../src/agui/config.js";
import { createLogger } from "../../src/server/logger.js";
import { redactRedisUrl } from "../../src/server/redis.js";
import { bothStores } from "../fixtures/both-stores.js";

const logger = createLogger({ silent: true });

function storedTask(id: string, contextId: string, state: pb.TaskState, ms: number, owner = ""): StoredTask {
  return {
    task: create(pb.TaskSchema, {
      id,
      contextId,
      status: { state, timestamp: timestampFromMs(ms) },
      history: [
        { messageId: `${id}-m`, role: pb.Role.USER, parts: [{ content: { case: "text", value: id } }] },
      ],
    }),
    owner,
    updatedAt: ms,
    language: "fr",
    credentialNames: ["api_key"],
  };
}

const artifact = (id: string, text: string) =>
  create(pb.ArtifactSchema, {
    artifactId: id,
    name: id,
    parts: [{ content: { case: "text", value: text } }],
  });

const ids = (tasks: StoredTask[]) => tasks.map((t) => t.task.id);

describe("A2A state store: Redis and SQLite answer alike", () => {
  const s = bothStores("iac-state-");

  for (const [name, open] of s.stores) {
    it(`${name}: filters, totals, keyset pages in (status time desc, id desc) order, artifacts and read-your-writes`, async () => {
      const store = open();
      try {
        const states = [pb.TaskState.WORKING, pb.TaskState.INPUT_REQUIRED, pb.TaskState.FAILED];
        const all: StoredTask[] = [];
        for (let i = 0; i < 30; i += 1) {
          // Pairs share a timestamp: the id breaks the tie.
          const task = storedTask(
            `t-${String(i).padStart(2, "0")}`,
            `ctx-${i % 4}`,
            states[i % 3],
            1000 + (i >> 1),
          );
          all.push(task);
          store.tasks.save(task);
        }
        store.tasks.save(storedTask("other", "ctx-0", pb.TaskState.WORKING, 9999, "someone-else"));
        const moved = storedTask("t-00", "ctx-0", pb.TaskState.CANCELED, 5000);
        store.tasks.save(moved);
        all[0] = moved;
        store.artifacts.save("t-03", artifact("a1", "first"));
        store.artifacts.save("t-03", artifact("a2", "second"));
        store.artifacts.save("t-03", artifact("a1", "first, replaced"));
        // Read your writes: nothing was awaited yet.
        const got = await store.tasks.get("t-03");
        expect(got?.task.artifacts.map((a) => [a.artifactId, a.parts[0].content.value])).to.deep.equal([
          ["a1", "first, replaced"],
          ["a2", "second"],
        ]);
        expect(got).to.deep.include({ owner: "", language: "fr", credentialNames: ["api_key"] });
        const order = (a: StoredTask, b: StoredTask) =>
          a.updatedAt === b.updatedAt ? (a.task.id < b.task.id ? 1 : -1) : b.updatedAt - a.updatedAt;
        const cases = [
          {},
          { state: pb.TaskState.INPUT_REQUIRED },
          { state: pb.TaskState.CANCELED },
          { contextId: "ctx-1" },
          { contextId: "ctx-2", state: pb.TaskState.FAILED },
          { statusAfterMs: 1008 },
        ];
        for (const filter of cases) {
          const expected = all
            .filter(
              (t) =>
                (filter.state === undefined || t.task.status?.state === filter.state) &&
                (filter.contextId === undefined || t.task.contextId === filter.contextId) &&
                (filter.statusAfterMs === undefined || t.updatedAt >= filter.statusAfterMs),
            )
            .sort(order);
          const pages: string[] = [];
          let startId: string | undefined;
          do {
            const page = await store.tasks.list({
              owner: "",
              pageSize: 4,
              includeArtifacts: true,
              ...filter,
              startId,
            });
            expect(page!.totalSize, JSON.stringify(filter)).to.equal(expected.length);
            pages.push(...ids(page!.tasks));
            startId = page!.nextId;
          } while (startId);
          expect(pages, JSON.stringify(filter)).to.deep.equal(ids(expected));
        }
        // A cursor that names no matching task is refused; other owners see nothing of ours.
        expect(
          await store.tasks.list({ owner: "", pageSize: 4, includeArtifacts: false, startId: "other" }),
        ).to.equal(undefined);
        expect(
          await store.tasks.list({
            owner: "",
            pageSize: 4,
            includeArtifacts: false,
            contextId: "ctx-1",
            startId: "t-02",
          }),
        ).to.equal(undefined);
        const theirs = await store.tasks.list({
          owner: "someone-else",
          pageSize: 10,
          includeArtifacts: false,
        });
        expect([ids(theirs!.tasks), theirs!.totalSize]).to.deep.equal([["other"], 1]);
        expect(ids(await store.tasks.unfinished()).sort()).to.deep.equal(
          ids(all.filter((t) => t.task.status?.state === pb.TaskState.WORKING).concat([]))
            .concat("other")
            .sort(),
        );
        // Keyset paging: tasks created after the first page never shift the next ones.
        const first = await store.tasks.list({ owner: "", pageSize: 5, includeArtifacts: false });
        for (let i = 0; i < 5; i += 1)
          store.tasks.save(storedTask(`new-${i}`, "ctx-9", pb.TaskState.WORKING, 20_000 + i));
        const second = await store.tasks.list({
          owner: "",
          pageSize: 5,
          includeArtifacts: false,
          startId: first!.nextId,
        });
        expect(ids(second!.tasks)).to.deep.equal(ids(all.slice().sort(order)).slice(5, 10));

        store.contexts.save({ contextId: "ctx-1", sessionId: "s-1", cwd: "/tmp/w", owner: "", updatedAt: 7 });
        expect(await store.contexts.get("ctx-1")).to.deep.equal({
          contextId: "ctx-1",
          sessionId: "s-1",
          cwd: "/tmp/w",
          owner: "",
          updatedAt: 7,
        });
        expect(await store.contexts.get("nope")).to.equal(undefined);
        const entry: AuditEntry = {
          ts: "2026-01-01T00:00:00.000Z",
          sessionId: "s-1",
          taskId: "t-01",
          contextId: "ctx-1",
          owner: "",
          toolName: "write_file",
          toolUseId: "u1",
          inputId: "i1",
          decision: "allow_once",
          reason: "auto-approve-permissions",
          autoApproved: true,
        };
        await store.audit.record(entry);
        expect(await store.audit.entries()).to.deep.equal([entry]);
      } finally {
        await store.close();
      }
    });
  }

  it("redis: a replica that lost its context's lease cannot write for it; the new holder can", async () => {
    const a = new RedisLeases(s.client, "replica-a", 60_000, logger);
    const b = new RedisLeases(s.client, "replica-b", 60_000, logger);
    const storeA = new RedisStateStore({ redis: s.client, logger, fenceOf: (id) => a.fenceOf(id) });
    const storeB = new RedisStateStore({ redis: s.client, logger, fenceOf: (id) => b.fenceOf(id) });
    try {
      expect(await a.acquire("ctx")).to.equal("acquired");
      expect(await a.acquire("ctx")).to.equal("held");
      expect(await b.acquire("ctx")).to.equal("busy");
      expect(await b.holder("ctx")).to.equal("replica-a");
      storeA.tasks.save(storedTask("t", "ctx", pb.TaskState.WORKING, 1000));
      await storeA.commit();
      const tokenA = a.fenceOf("ctx")!;

      // A's lease runs out (it stopped renewing); B takes the context with a higher token.
      await s.client.del(leaseKey("ctx"));
      expect(await b.acquire("ctx")).to.equal("acquired");
      expect(Number(b.fenceOf("ctx")!.split("|")[1])).to.be.above(Number(tokenA.split("|")[1]));
      storeA.tasks.save(storedTask("t", "ctx", pb.TaskState.COMPLETED, 2000));
      storeA.artifacts.save("t", artifact("late", "from A"));
      storeA.tasks.save(storedTask("elsewhere", "ctx-free", pb.TaskState.WORKING, 2000));
      await storeA.commit();
      const t = await storeB.tasks.get("t");
      expect(t?.task.status?.state).to.equal(pb.TaskState.WORKING);
      expect(t?.task.artifacts).to.deep.equal([]);
      // Writes for contexts A holds no lease on went through in the same commit.
      expect((await storeB.tasks.get("elsewhere"))?.task.status?.state).to.equal(pb.TaskState.WORKING);

      storeB.tasks.save(storedTask("t", "ctx", pb.TaskState.FAILED, 3000));
      await storeB.commit();
      expect((await storeA.tasks.get("t"))?.task.status?.state).to.equal(pb.TaskState.FAILED);

      // The runtime session of the context is fenced the same way, in the same commits.
      const onA = await openSessionData(storeA.runtime, sessionScope("s", "ctx"), logger);
      const onB = await openSessionData(storeB.runtime, sessionScope("s", "ctx"), logger);
      const message = (id: string) => ({
        id,
        role: "user" as const,
        content: [{ type: "text" as const, text: id }],
        createdAt: "2026-01-01T00:00:00.000Z",
      });
      await onB.appendMessage(message("from-b"));
      await onA.appendMessage(message("from-a"));
      await onA.savePending({ version: 1, assistantMessageId: "x", decisions: {}, inputs: [] });
      expect((await onA.loadConversation()).map((m) => m.id)).to.deep.equal(["from-b"]);
      expect(await onB.loadPending()).to.equal(undefined);
      await onB.saveSessionRules([{ raw: "write_file(out.txt)" } as never]);
      expect(await onA.loadSessionRules()).to.deep.equal([{ raw: "write_file(out.txt)" }]);
      await b.release("ctx");
      expect(await s.client.exists(leaseKey("ctx"))).to.equal(0);
    } finally {
      await a.close();
      await b.close();
      await storeA.close();
      await storeB.close();
    }
  });

  it("redis: a lease is renewed while held, and a replica that finds it lost is told", async () => {
    const a = new RedisLeases(s.client, "replica-a", 1000, logger);
    try {
      const lost: string[] = [];
      a.onLost((id) => lost.push(id));
      await a.acquire("ctx");
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await s.client.pttl(leaseKey("ctx"))).to.be.above(0);
      await s.client.set(leaseKey("ctx"), "replica-b|999");
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(lost).to.deep.equal(["ctx"]);
      expect(await a.acquire("ctx")).to.equal("busy");
    } finally {
      await a.close();
    }
  });

  it("redis: an unreadable task or artifact is quarantined, the others still answer", async () => {
    const store = new RedisStateStore({ redis: s.client, logger, fenceOf: () => undefined });
    try {
      for (const id of ["t1", "t2", "t3"]) store.tasks.save(storedTask(id, "ctx", pb.TaskState.FAILED, 1000));
      store.artifacts.save("t3", artifact("ok", "fine"));
      store.artifacts.save("t3", artifact("bad", "broken"));
      await store.commit();
      await s.client.hset(`${A2A_PREFIX}t:t2`, "b", Buffer.from([0xff, 0xff, 0xff]));
      await s.client.hset(`${A2A_PREFIX}a:t3`, "bad", Buffer.from([0xff, 0xff]));
      const page = await store.tasks.list({ owner: "", pageSize: 10, includeArtifacts: true });
      expect(ids(page!.tasks)).to.deep.equal(["t3", "t1"]);
      expect(page!.totalSize).to.equal(2);
      expect(page!.tasks[0].task.artifacts.map((a) => a.artifactId)).to.deep.equal(["ok"]);
      expect(await store.tasks.get("t2")).to.equal(undefined);
      expect(await s.client.lrange(`${A2A_PREFIX}quarantine`, 0, -1)).to.deep.equal([
        "artifact t3 bad",
        "task t2",
      ]);
    } finally {
      await store.close();
    }
  });
});

describe("store, redis-url and context-lease-seconds settings", () => {
  it("come from the flag, the file or the environment, in that order", () => {
    expect(resolveSettings({}, {}, {})).to.include({ store: "sqlite", contextLeaseMs: 15_000 });
    const env = {
      IACCODE_A2A_STORE: "redis",
      IACCODE_A2A_REDIS_URL: "redis://env:1",
      IACCODE_A2A_CONTEXT_LEASE_SECONDS: "3",
    };
    expect(resolveSettings({}, {}, env)).to.include({
      store: "redis",
      redisUrl: "redis://env:1",
      contextLeaseMs: 3000,
    });
    expect(
      resolveSettings(
        { store: "sqlite", "redis-url": "redis://file:1", "context-lease-seconds": 4 },
        {},
        env,
      ),
    ).to.include({ store: "sqlite", redisUrl: "redis://file:1", contextLeaseMs: 4000 });
    expect(
      resolveSettings(
        { store: "sqlite", "redis-url": "redis://file:1" },
        { store: "redis", "redis-url": "rediss://cli:2", "context-lease-seconds": "1.5" },
        env,
      ),
    ).to.include({ store: "redis", redisUrl: "rediss://cli:2", contextLeaseMs: 1500 });
  });

  it("are refused with the setting named when they do not fit", () => {
    const refused: Array<[Parameters<typeof resolveSettings>, RegExp]> = [
      [[{}, { store: "postgres" }, {}], /Invalid --store 'postgres': expected one of sqlite, redis/],
      [[{ store: "redis" }, {}, {}], /store: redis needs redis-url/],
      [[{}, { "redis-url": "http://x" }, {}], /Invalid --redis-url 'http:\/\/x': must match pattern/],
      [
        [{}, {}, { IACCODE_A2A_CONTEXT_LEASE_SECONDS: "0.5" }],
        /Invalid IACCODE_A2A_CONTEXT_LEASE_SECONDS 0.5: must be >= 1/,
      ],
      [[{}, { "context-lease-seconds": "soon" }, {}], /Invalid --context-lease-seconds 'soon'/],
      [
        [{ store: "redis", "redis-url": "redis://r:1", "push-notifications": true }, {}, {}],
        /push-notifications with store: redis needs IAC_CODE_A2A_PUSH_KEYRING, the same keyring on every replica/,
      ],
    ];
    for (const [args, message] of refused)
      expect(() => resolveSettings(...args)).to.throw(ConfigError, message);
    // With the shared keyring in the environment, push and store: redis go together.
    const withKeyring = resolveSettings(
      { store: "redis", "redis-url": "redis://r:1", "push-notifications": true },
      {},
      { IAC_CODE_A2A_PUSH_KEYRING: "{}" },
    );
    expect([withKeyring.store, withKeyring.push.enabled]).to.deep.equal(["redis", true]);
  });

  it("a password in the Redis URL is never shown", () => {
    expect(redactRedisUrl("redis://user:s3cret@cache:6380/2")).to.equal("redis://***:***@cache:6380/2");
    expect(redactRedisUrl("rediss://:s3cret@cache")).to.not.include("s3cret");
  });
});

describe("AG-UI thread-store and redis-url settings", () => {
  it("default to files; command line beats file beats environment", () => {
    expect(resolveAguiSettings({}, {})).to.include({ threadStore: "file", redisUrl: undefined });
    const env = { IAC_CODE_AGUI_THREAD_STORE: "redis", IAC_CODE_AGUI_REDIS_URL: "redis://env:1" };
    expect(resolveAguiSettings({}, env)).to.include({ threadStore: "redis", redisUrl: "redis://env:1" });
    expect(resolveAguiSettings({ threadStore: "file", redisUrl: "rediss://cli:2" }, env)).to.include({
      threadStore: "file",
      redisUrl: "rediss://cli:2",
    });
  });

  it("are refused with the setting named when they do not fit", () => {
    expect(() => resolveAguiSettings({ threadStore: "sqlite" }, {})).to.throw(
      /Invalid --thread-store 'sqlite': expected one of file, redis/,
    );
    expect(() => resolveAguiSettings({ threadStore: "redis" }, {})).to.throw(
      /thread-store redis needs redis-url/,
    );
    expect(() => resolveAguiSettings({ redisUrl: "tcp://x" }, {})).to.throw(
      /Invalid --redis-url 'tcp:\/\/x'/,
    );
  });
});
