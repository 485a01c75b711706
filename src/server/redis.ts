// What every Redis user of the servers shares: one way to connect (the URL's
// password never reaches a log), and Lua scripts run by their SHA with the
// text as the fallback (a restarted Redis has forgotten them).
import { createHash } from "node:crypto";
import { Command, Redis } from "ioredis";
import { redactRedisUrl } from "./redis-url.js";

export { redactRedisUrl, redisUrlForDisplay } from "./redis-url.js";

/** What connectRedis logs through (pino's logger, or the AG-UI adapter's). */
export interface RedisLogger {
  warn(obj: unknown, msg?: string): void;
  info?(obj: unknown, msg?: string): void;
}

/**
 * A client that reconnects on its own (commands wait in its queue while the
 * server restarts). Auto-pipelining sends the commands issued in one event-loop
 * turn as one write.
 */
export function connectRedis(url: string, logger: RedisLogger | undefined, name: string): Redis {
  const client = new Redis(url, {
    connectionName: name,
    enableAutoPipelining: true,
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
  });
  let down = false;
  client.on("error", (error: Error) => {
    if (down) return;
    down = true;
    logger?.warn({ redis: redactRedisUrl(url), err: { message: error.message } }, "redis connection error");
  });
  client.on("ready", () => {
    if (down) logger?.info?.({ redis: redactRedisUrl(url) }, "redis connection back");
    down = false;
  });
  return client;
}

export type RedisArg = string | Buffer | number;

/** A reply's value as text (LuaScript replies are Buffers). */
export const text = (value: unknown): string =>
  Buffer.isBuffer(value) ? value.toString("utf8") : String(value);

/** A command whose bulk replies stay Buffers (replyEncoding null). */
function send(redis: Redis, name: string, args: RedisArg[]): Promise<unknown> {
  return redis.sendCommand(new Command(name, args, { replyEncoding: null })) as Promise<unknown>;
}

export class LuaScript {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash("sha1").update(lua).digest("hex");
  }

  /** Runs the script; bulk replies come back as Buffers. */
  async run(redis: Redis, keys: readonly string[], args: readonly RedisArg[]): Promise<unknown> {
    try {
      return await send(redis, "evalsha", [this.sha, keys.length, ...keys, ...args]);
    } catch (error) {
      if (!String((error as Error).message).startsWith("NOSCRIPT")) throw error;
      return send(redis, "eval", [this.lua, keys.length, ...keys, ...args]);
    }
  }
}
