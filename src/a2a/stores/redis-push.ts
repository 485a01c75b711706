// Push configs and the push outbox in the shared Redis (store: redis). Config
// changes and task events are staged like the rest of the state and go out in
// the store's group commit (the COMMIT script, redis-scripts.ts): an event
// becomes one job per config the task has when the script runs, in the same
// atomic step as the state change it reports, and is dropped with it when the
// writer lost the context's lease (fenced like the task's other writes).
// Config changes are not fenced: they are a client's calls, valid whichever
// replica runs the turn, and the last one wins.
//
// The queue is a sorted set of job ids scored by the time a job may next be
// claimed: its due time while it waits, the end of its lease once claimed. A
// claim (one Lua script) takes the first id whose score has passed and moves
// its score to now + lease, so one replica gets it; ack deletes it; a replica
// that died holding it lets the score pass and any replica claims it again.
// One structure holds due times, retry backoff and leases, which a Redis Stream
// with a consumer group would split in three (the stream, a retry sorted set,
// XAUTOCLAIM of idle entries) and tie to consumer names; push-queue:
// redis-streams remains for those who want a stream, fed from this outbox.
//
// Keys, under the prefix P:
//   P pcfg:<task>       hash: config id -> JSON {owner, url, scheme, sealedSecrets}
//   P outbox:j:<job>    hash e t i g p a n r: event id, task, config id, config
//                       JSON, payload, attempt, next attempt ms, last error
//   P outbox:due        zset of job ids (score: due ms, or lease end once claimed)
//   P outbox:seq        counter: job ids in commit order (equal scores sort by id)
//   P outbox:dead       list of dead jobs (PushJob JSON)
// Secrets are only ever the keyring's sealed form (push/keyring.ts).
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { encodeProtoJson, pb } from "../../contract/index.js";
import type { CommitHooks, Staged, StagedPart } from "../../server/group-commit.js";
import { LuaScript, text, type RedisArg } from "../../server/redis.js";
import type { PushConfigStore, PushJob, PushOutbox, StoredPushConfig } from "./state.js";

/** What the COMMIT script keeps of a config (the task and id are its key and field). */
interface ConfigJson {
  owner: string;
  url: string;
  scheme: string;
  sealedSecrets: string;
}

/** ARGV: P now leaseUntil. The first due job, leased until leaseUntil: { id, e t i g p a n r }, or false. */
const CLAIM = new LuaScript(`
local P = ARGV[1]
local due = P .. 'outbox:due'
while true do
  local ids = redis.call('ZRANGEBYSCORE', due, '-inf', ARGV[2], 'LIMIT', 0, 1)
  if #ids == 0 then return false end
  local id = ids[1]
  local f = redis.call('HMGET', P .. 'outbox:j:' .. id, 'e', 't', 'i', 'g', 'p', 'a', 'n', 'r')
  if f[1] then
    redis.call('ZADD', due, ARGV[3], id)
    return { id, f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8] }
  end
  redis.call('ZREM', due, id)
end
`);

/** ARGV: P id attempt nextMs error. Back in the queue, due at nextMs (a job acked meanwhile stays gone). */
const RETRY = new LuaScript(`
local P, id = ARGV[1], ARGV[2]
local key = P .. 'outbox:j:' .. id
if redis.call('EXISTS', key) == 0 then return 0 end
redis.call('HSET', key, 'a', ARGV[3], 'n', ARGV[4], 'r', ARGV[5])
redis.call('ZADD', P .. 'outbox:due', ARGV[4], id)
return 1
`);

/** ARGV: P id [deadJson]. Removes the job; with deadJson, appends it to the dead letters (if still queued). */
const SETTLE = new LuaScript(`
local P, id = ARGV[1], ARGV[2]
if redis.call('DEL', P .. 'outbox:j:' .. id) == 1 and ARGV[3] then
  redis.call('RPUSH', P .. 'outbox:dead', ARGV[3])
end
redis.call('ZREM', P .. 'outbox:due', id)
return 1
`);

function storedConfig(taskId: string, id: string, raw: string): StoredPushConfig {
  const c = JSON.parse(raw) as ConfigJson;
  return { taskId, id, owner: c.owner, url: c.url, scheme: c.scheme, sealedSecrets: c.sealedSecrets };
}

export interface RedisPushHooks extends CommitHooks {
  /** The context a task's writes are fenced by ("" when unknown). */
  contextOf(taskId: string, event: pb.StreamResponse): string;
}

/** What one commit takes of the staged push changes. */
export interface StagedPush extends Staged {
  /** COMMIT ops: config changes first (so a config created in the same commit gets its jobs), then events. */
  ops: RedisArg[];
  /** The contexts the events are fenced by. */
  contexts: string[];
}

export class RedisPush implements StagedPart<StagedPush> {
  readonly configs: PushConfigStore;
  readonly jobs: PushOutbox;
  private stagedConfigs = new Map<string, RedisArg[]>();
  private stagedEvents: Array<{ contextId: string; taskId: string; event: pb.StreamResponse }> = [];

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly hooks: RedisPushHooks,
  ) {
    this.configs = this.configStore();
    this.jobs = this.outbox();
  }

  hasStaged(): boolean {
    return this.stagedConfigs.size > 0 || this.stagedEvents.length > 0;
  }

  take(): StagedPush {
    const configs = this.stagedConfigs;
    const events = this.stagedEvents;
    this.stagedConfigs = new Map();
    this.stagedEvents = [];
    const ops: RedisArg[] = [...configs.values()].flat();
    const now = String(Date.now());
    for (const { contextId, taskId, event } of events) {
      const payload = JSON.stringify(encodeProtoJson(pb.StreamResponseSchema, event));
      ops.push("E", contextId, taskId, randomUUID(), payload, now);
    }
    return {
      ops,
      contexts: events.map((e) => e.contextId),
      restage: () => {
        for (const [key, op] of configs) if (!this.stagedConfigs.has(key)) this.stagedConfigs.set(key, op);
        this.stagedEvents.unshift(...events);
      },
    };
  }

  private configStore(): PushConfigStore {
    const key = (taskId: string) => `${this.prefix}pcfg:${taskId}`;
    const stage = (taskId: string, id: string, op: RedisArg[]) => {
      this.stagedConfigs.set(`${taskId}\u0000${id}`, op);
      this.hooks.schedule();
    };
    return {
      save: (c) => {
        const json: ConfigJson = {
          owner: c.owner,
          url: c.url,
          scheme: c.scheme,
          sealedSecrets: c.sealedSecrets,
        };
        stage(c.taskId, c.id, ["P", "", c.taskId, c.id, JSON.stringify(json)]);
      },
      remove: (owner, taskId, id) => stage(taskId, id, ["R", "", taskId, id, owner]),
      get: async (owner, taskId, id) => {
        await this.hooks.commit();
        const raw = await this.redis.hget(key(taskId), id);
        const config = raw === null ? undefined : storedConfig(taskId, id, raw);
        return config?.owner === owner ? config : undefined;
      },
      list: async (owner, taskId, startId, limit) => {
        await this.hooks.commit();
        const all = await this.redis.hgetall(key(taskId));
        return Object.entries(all)
          .map(([id, raw]) => storedConfig(taskId, id, raw))
          .filter((c) => c.owner === owner && (startId === undefined || c.id >= startId))
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .slice(0, limit);
      },
    };
  }

  private outbox(): PushOutbox {
    const P = this.prefix;
    return {
      enqueue: (taskId, event) => {
        this.stagedEvents.push({ contextId: this.hooks.contextOf(taskId, event), taskId, event });
        this.hooks.schedule();
      },
      claim: async (leaseMs) => {
        const now = Date.now();
        const row = (await CLAIM.run(this.redis, [], [P, String(now), String(now + leaseMs)])) as
          Buffer[] | null;
        if (!row) return undefined;
        const [jobId, eventId, taskId, configId, config, payload, attempt, next, lastError] = row.map(text);
        const c = JSON.parse(config) as ConfigJson;
        return {
          jobId,
          eventId,
          taskId,
          configId,
          url: c.url,
          scheme: c.scheme,
          sealedSecrets: c.sealedSecrets,
          payload,
          attempt: Number(attempt),
          nextAttemptAt: Number(next),
          lastError,
        };
      },
      ack: async (jobId) => void (await SETTLE.run(this.redis, [], [P, jobId])),
      retry: async (job) =>
        void (await RETRY.run(
          this.redis,
          [],
          [P, job.jobId, String(job.attempt), String(job.nextAttemptAt), job.lastError],
        )),
      dead: async (job) => void (await SETTLE.run(this.redis, [], [P, job.jobId, JSON.stringify(job)])),
      deadLetters: async () =>
        (await this.redis.lrange(`${P}outbox:dead`, 0, -1)).map((raw) => JSON.parse(raw) as PushJob),
      depth: () => this.redis.zcard(`${P}outbox:due`),
    };
  }
}
