// The Redis Streams push queue (push-queue: redis-streams), at least once:
// jobs are entries of push-stream (field `job`), read through the consumer
// group push-consumer-group (created with MKSTREAM). A claim first moves the
// due retries from the sorted set push-retry-key back to the stream, then
// takes over an entry another consumer has held longer than the lease
// (XAUTOCLAIM), then reads a new one (XREADGROUP, blocking a bounded time so
// the loop can stop). Ack, retry and dead letter each end with XACK (and
// XDEL, so the stream does not grow without bound), in one MULTI.
// Jobs reach the stream from the state database's outbox (PushRelay): they are
// written in the commit of the state change that causes them, then handed on.
import { randomBytes } from "node:crypto";
import os from "node:os";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import type { PushJob, PushOutbox } from "../stores/state.js";
import { Loop } from "./loop.js";
import { publicUrl } from "./retry.js";
import type { ClaimedJob, PushQueue } from "./worker.js";

export interface RedisQueueSettings {
  redisUrl: string;
  stream: string;
  retryKey: string;
  deadStream: string;
  consumerGroup: string;
  consumerName: string;
  leaseTimeoutMs: number;
}

/** How long one XREADGROUP waits for a new entry. */
const BLOCK_MS = 1000;
/** Due retries moved back to the stream per claim. */
const PROMOTE_BATCH = 10;

/** Moves due retries back to the stream atomically: a retry is promoted once, never lost in between. */
const PROMOTE_SCRIPT = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, job in ipairs(due) do
  redis.call('ZREM', KEYS[1], job)
  redis.call('XADD', KEYS[2], '*', 'job', job)
end
return #due`;

export function defaultConsumerName(): string {
  return `${os.hostname()}-${process.pid}-${randomBytes(6).toString("hex")}`;
}

type Entry = [id: string, fields: string[]] | null;

/** The `job` field of a stream entry's field list. */
function jobField(fields: string[]): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === "job") return fields[i + 1];
  return undefined;
}

export class RedisPushQueue implements PushQueue {
  /** Commands; the blocking read has a connection of its own so it never delays them. */
  private readonly redis: Redis;
  private readonly reader: Redis;

  private constructor(
    private readonly settings: RedisQueueSettings,
    private readonly logger: Logger,
  ) {
    const options = { lazyConnect: true, maxRetriesPerRequest: 3 };
    this.redis = new Redis(settings.redisUrl, options);
    this.reader = new Redis(settings.redisUrl, options);
    for (const client of [this.redis, this.reader]) {
      client.on("error", (error: Error) =>
        logger.warn(
          { redis: publicUrl(settings.redisUrl), error: error.message },
          "push Redis connection error",
        ),
      );
    }
  }

  /** Connects and creates the consumer group (an existing group is fine). */
  static async open(settings: RedisQueueSettings, logger: Logger): Promise<RedisPushQueue> {
    const queue = new RedisPushQueue(settings, logger);
    try {
      await Promise.all([queue.redis.connect(), queue.reader.connect()]);
      await queue.redis.xgroup("CREATE", settings.stream, settings.consumerGroup, "0-0", "MKSTREAM");
    } catch (error) {
      if (!/BUSYGROUP/.test((error as Error).message)) {
        await queue.close();
        throw new Error(
          `Cannot use the push Redis at ${publicUrl(settings.redisUrl)}: ${(error as Error).message}`,
          { cause: error },
        );
      }
    }
    return queue;
  }

  async enqueue(job: PushJob): Promise<void> {
    await this.redis.xadd(this.settings.stream, "*", "job", JSON.stringify(job));
  }

  async claim(): Promise<ClaimedJob | undefined> {
    const s = this.settings;
    await this.redis.eval(PROMOTE_SCRIPT, 2, s.retryKey, s.stream, String(Date.now()), String(PROMOTE_BATCH));
    const reclaimed = (await this.redis.xautoclaim(
      s.stream,
      s.consumerGroup,
      s.consumerName,
      s.leaseTimeoutMs,
      "0-0",
      "COUNT",
      1,
    )) as [string, Entry[], ...unknown[]];
    const stolen = this.claimedOf(reclaimed[1]);
    if (stolen) return stolen;
    const read = (await this.reader.xreadgroup(
      "GROUP",
      s.consumerGroup,
      s.consumerName,
      "COUNT",
      1,
      "BLOCK",
      BLOCK_MS,
      "STREAMS",
      s.stream,
      ">",
    )) as Array<[string, Entry[]]> | null;
    return read ? this.claimedOf(read[0][1]) : undefined;
  }

  /** The first readable entry; an unreadable one is moved to the dead stream as it is. */
  private claimedOf(entries: Entry[]): ClaimedJob | undefined {
    for (const entry of entries) {
      if (!entry) continue; // deleted meanwhile
      const [id, fields] = entry;
      const raw = jobField(fields);
      try {
        return { job: JSON.parse(raw ?? "") as PushJob, receipt: id };
      } catch {
        this.logger.error({ entryId: id }, "unreadable push job in Redis; moved to the dead stream");
        void this.settle(id, ["XADD", this.settings.deadStream, "*", "job", raw ?? ""]);
      }
    }
    return undefined;
  }

  private async settle(entryId: string, command: Array<string | number>): Promise<void> {
    const s = this.settings;
    const [name, ...args] = command;
    const results = await this.redis
      .multi()
      .call(String(name), ...args)
      .xack(s.stream, s.consumerGroup, entryId)
      .xdel(s.stream, entryId)
      .exec();
    const failed = results?.find(([error]) => error);
    if (!results || failed) throw failed?.[0] ?? new Error("the Redis transaction was discarded");
  }

  async ack(claimed: ClaimedJob): Promise<void> {
    const s = this.settings;
    const results = await this.redis
      .multi()
      .xack(s.stream, s.consumerGroup, claimed.receipt)
      .xdel(s.stream, claimed.receipt)
      .exec();
    const failed = results?.find(([error]) => error);
    if (!results || failed) throw failed?.[0] ?? new Error("the Redis transaction was discarded");
  }

  retry(claimed: ClaimedJob, job: PushJob): Promise<void> {
    return this.settle(claimed.receipt, [
      "ZADD",
      this.settings.retryKey,
      job.nextAttemptAt,
      JSON.stringify(job),
    ]);
  }

  dead(claimed: ClaimedJob, job: PushJob): Promise<void> {
    return this.settle(claimed.receipt, ["XADD", this.settings.deadStream, "*", "job", JSON.stringify(job)]);
  }

  async close(): Promise<void> {
    // The blocked read ends with the disconnect; quit waits for replies to what was sent.
    this.reader.disconnect();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * Hands jobs from the state database's outbox to the Redis stream: claim
 * (leased), XADD, ack. A crash between the XADD and the ack hands the job on
 * again after a restart (the same job and event id: at least once).
 */
export class PushRelay extends Loop {
  constructor(
    private readonly outbox: PushOutbox,
    private readonly queue: RedisPushQueue,
    private readonly logger: Logger,
    private readonly leaseMs: number,
  ) {
    super();
  }

  protected async run(): Promise<void> {
    while (!this.stopped) {
      let moved = false;
      try {
        const job = await this.outbox.claim(this.leaseMs);
        if (job) {
          try {
            await this.queue.enqueue(job);
          } catch (error) {
            await this.outbox.retry(job); // unchanged, lease released: handed on at the next try
            throw error;
          }
          await this.outbox.ack(job.jobId);
          moved = true;
        }
      } catch (error) {
        this.logger.warn({ err: error }, "push job not handed to Redis yet");
      }
      if (!moved && !this.stopped) await this.rest(250);
    }
  }
}
