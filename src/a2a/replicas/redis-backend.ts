// store: redis, assembled: the connections, this replica's id, the context
// leases, the shared state store (which also holds the runtime's sessions and
// pipelines) and the cluster seam the core uses. Opened before the runtime
// (which writes sessions through it) and closed after the state store's last
// commit.
import { randomBytes } from "node:crypto";
import os from "node:os";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { connectRedis, redactRedisUrl } from "../../server/redis.js";
import { RedisLeases } from "../stores/redis-leases.js";
import { RedisStateStore } from "../stores/redis-state.js";
import { RedisCluster } from "./redis-cluster.js";

export interface RedisBackend {
  readonly replicaId: string;
  readonly leaseMs: number;
  readonly state: RedisStateStore;
  readonly cluster: RedisCluster;
  /** Gives the leases back and closes the connections (after the state store's close). */
  close(): Promise<void>;
}

export class RedisUnavailableError extends Error {
  override readonly name = "RedisUnavailableError";
}

const CONNECT_TIMEOUT_MS = 10_000;

async function reachable(redis: Redis, url: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new RedisUnavailableError(`Cannot reach Redis at ${redactRedisUrl(url)} (redis-url).`)),
          CONNECT_TIMEOUT_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function openRedisBackend(url: string, leaseMs: number, logger: Logger): Promise<RedisBackend> {
  const redis = connectRedis(url, logger, "iac-code-a2a");
  const subscriber = connectRedis(url, logger, "iac-code-a2a-events");
  try {
    await reachable(redis, url);
  } catch (error) {
    redis.disconnect();
    subscriber.disconnect();
    throw error;
  }
  const replicaId = `${os.hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`;
  const leases = new RedisLeases(redis, replicaId, leaseMs, logger);
  const state = new RedisStateStore({ redis, logger, fenceOf: (id) => leases.fenceOf(id) });
  const cluster = new RedisCluster({ redis, subscriber, leases, state, logger });
  await cluster.whenReady();
  return {
    replicaId,
    leaseMs,
    state,
    cluster,
    async close() {
      cluster.close();
      await leases.close().catch((error: unknown) => logger.warn({ err: error }, "leases not released"));
      subscriber.disconnect();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
