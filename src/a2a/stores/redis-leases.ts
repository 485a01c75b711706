// One owner per context at a time across replicas: a lease in Redis,
// "<replica>|<token>" with an expiry, taken before a turn starts, renewed
// every third of its length while held, released when the turn is over. The
// token comes from one counter and only grows (a fencing token): every write a
// replica makes for a context it holds carries the lease value, and Redis
// refuses it once the lease is someone else's or gone (redis-scripts.ts,
// redis-session-data.ts). A replica that notices it lost a lease keeps the
// stale value, so its late writes stay refused, and tells its listeners.
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { LuaScript } from "../../server/redis.js";
import { A2A_PREFIX } from "./redis-state.js";

/** held: this replica already had it; acquired: newly taken (caches may be stale); busy: another replica's. */
export type LeaseResult = "held" | "acquired" | "busy";

/** KEYS: lease, counter. ARGV: replica, ms. Returns {0|1|2, value}: busy, already ours, new. */
const ACQUIRE = new LuaScript(`
local v = redis.call('GET', KEYS[1])
if v then
  if string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return { 1, v }
  end
  return { 0, v }
end
v = ARGV[1] .. '|' .. redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], v, 'PX', ARGV[2])
return { 2, v }
`);

/** KEYS: lease. ARGV: value, ms. 1 when renewed, 0 when the lease is no longer this value. */
const RENEW = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`);

/** KEYS: lease. ARGV: value. Deletes the lease if it is still this value. */
const RELEASE = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/**
 * KEYS: lease, counter. ARGV: gone replica, this replica, ms. Takes the lease
 * if the gone replica still holds it (a new fencing token: the gone one's late
 * writes are refused); the new value, or false.
 */
const TAKE_OVER = new LuaScript(`
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, #ARGV[1] + 1) ~= ARGV[1] .. '|' then return false end
v = ARGV[2] .. '|' .. redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], v, 'PX', ARGV[3])
return v
`);

export const leaseKey = (contextId: string): string => `${A2A_PREFIX}lease:${contextId}`;

export class RedisLeases {
  private readonly held = new Map<string, { value: string; lost: boolean }>();
  private readonly lostListeners: Array<(contextId: string) => void> = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    readonly replicaId: string,
    readonly leaseMs: number,
    private readonly logger: Logger,
  ) {
    this.timer = setInterval(() => void this.renewAll(), Math.max(100, Math.floor(leaseMs / 3)));
    this.timer.unref();
  }

  /** The value writes for this context carry, while this replica holds (or lost) its lease. */
  fenceOf(contextId: string): string | undefined {
    return this.held.get(contextId)?.value;
  }

  onLost(listener: (contextId: string) => void): void {
    this.lostListeners.push(listener);
  }

  async acquire(contextId: string): Promise<LeaseResult> {
    const local = this.held.get(contextId);
    if (local) return local.lost ? "busy" : "held";
    const [code, value] = (await ACQUIRE.run(
      this.redis,
      [leaseKey(contextId), `${A2A_PREFIX}fence`],
      [this.replicaId, this.leaseMs],
    )) as [number, Buffer];
    if (code === 0) return "busy";
    // Another acquire of this replica may have won meanwhile: the same value.
    this.held.set(contextId, { value: value.toString("utf8"), lost: false });
    return "acquired";
  }

  /** Takes the context's lease from a replica known to be gone; false when it no longer holds it. */
  async takeOver(contextId: string, gone: string): Promise<boolean> {
    if (this.held.has(contextId)) return false;
    const value = (await TAKE_OVER.run(
      this.redis,
      [leaseKey(contextId), `${A2A_PREFIX}fence`],
      [gone, this.replicaId, this.leaseMs],
    )) as Buffer | null;
    if (!value) return false;
    this.held.set(contextId, { value: value.toString("utf8"), lost: false });
    return true;
  }

  async release(contextId: string): Promise<void> {
    const value = this.handOver(contextId);
    if (value !== undefined) await RELEASE.run(this.redis, [leaseKey(contextId)], [value]);
  }

  /**
   * Stops holding a context's lease (no more renewals) without deleting it:
   * the caller gives it back (the state store, with the turn's last writes).
   * The value to give back; undefined when it was not held or was lost.
   */
  handOver(contextId: string): string | undefined {
    const local = this.held.get(contextId);
    this.held.delete(contextId);
    return local && !local.lost ? local.value : undefined;
  }

  /** Holds again a lease handed over and not given back yet. */
  keep(contextId: string, value: string): void {
    this.held.set(contextId, { value, lost: false });
  }

  /** The replica that holds the context's lease now, if any. */
  async holder(contextId: string): Promise<string | undefined> {
    const value = await this.redis.get(leaseKey(contextId));
    return value ? value.slice(0, value.lastIndexOf("|")) : undefined;
  }

  private async renewAll(): Promise<void> {
    for (const [contextId, lease] of this.held) {
      if (lease.lost) continue;
      let renewed: unknown;
      try {
        renewed = await RENEW.run(this.redis, [leaseKey(contextId)], [lease.value, this.leaseMs]);
      } catch (error) {
        // Redis unreachable: try again next time; the lease may run out meanwhile.
        this.logger.warn({ err: error, contextId }, "context lease not renewed");
        return;
      }
      if (renewed === 1 || this.held.get(contextId) !== lease) continue;
      lease.lost = true;
      this.logger.warn({ contextId }, "context lease lost: this replica stops writing for it");
      for (const listener of this.lostListeners) listener(contextId);
    }
  }

  /** Stops renewing and gives back every lease still held (after the last commit). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.held.keys()].map((contextId) => this.release(contextId)));
  }
}
