// Sessions shared by several replicas of the A2A server (store: redis): what
// another replica needs to continue a context lives in Redis, under
// iac-code:session:<id>: meta (identity), conv (the conversation rows, in
// write order), pending (the tool round waiting for human input), rules (the
// session's allow_always rules). Usage records, large tool results, the
// runtime's own audit lines and pipeline files stay in the session's local
// directory. Secrets are never written (as with the files).
//
// Every write checks, in Redis and in the same step, that the replica still
// holds the context's lease (fencing): a replica that lost the context cannot
// append to its conversation any more.
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { LuaScript } from "../../server/redis.js";
import { ensureDir } from "../fs-util.js";
import type { Message, ToolResultBlock } from "../messages.js";
import type { PermissionRule } from "../permissions/rules.js";
import {
  rebuildConversation,
  SessionStore,
  toolResultRow,
  type ConversationRow,
  type PendingRound,
  type SessionData,
  type SessionDataFactory,
  type SessionMeta,
  type UsageRecord,
} from "./store.js";

export const SESSION_PREFIX = "iac-code:session:";

/** KEYS: lease, target. ARGV: lease value ('' = not fenced), op (rpush|set|del), value. */
const FENCED_WRITE = new LuaScript(`
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('FENCED this replica no longer holds the context')
end
if ARGV[2] == 'rpush' then return redis.call('RPUSH', KEYS[2], ARGV[3]) end
if ARGV[2] == 'set' then return redis.call('SET', KEYS[2], ARGV[3]) end
return redis.call('DEL', KEYS[2])
`);

export interface RedisSessionsOptions {
  redis: Redis;
  /** The key of a context's lease, and the value this replica's writes must match (undefined: none held). */
  leaseKey(contextId: string): string;
  fenceOf(contextId: string): string | undefined;
}

export function redisSessions(options: RedisSessionsOptions): SessionDataFactory {
  return {
    open: ({ sessionId, contextId, dir, logger }) =>
      new RedisSessionData(options, sessionId, contextId, new SessionStore(dir, logger), logger),
  };
}

class RedisSessionData implements SessionData {
  private readonly key: string;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly options: RedisSessionsOptions,
    sessionId: string,
    private readonly contextId: string,
    private readonly local: SessionStore,
    private readonly logger: Logger,
  ) {
    this.key = `${SESSION_PREFIX}${sessionId}:`;
  }

  get dir(): string {
    return this.local.dir;
  }

  get auditFile(): string {
    return this.local.auditFile;
  }

  async readMeta(): Promise<SessionMeta | undefined> {
    const text = await this.options.redis.get(`${this.key}meta`);
    if (!text) return undefined;
    // A session created on another replica: this one's local files (audit log, usage) go here.
    await ensureDir(this.local.dir);
    return JSON.parse(text) as SessionMeta;
  }

  async create(meta: SessionMeta): Promise<void> {
    await this.write("set", "meta", JSON.stringify(meta));
    await ensureDir(this.local.dir);
  }

  async flush(): Promise<void> {
    await this.tail;
    await this.local.flush();
  }

  appendMessage(message: Message): Promise<void> {
    return this.row({ type: "message", message });
  }

  appendMarker(marker: Message, insertBefore: string): Promise<void> {
    return this.row({ type: "message", message: marker, insertBefore });
  }

  appendToolResult(assistantMessageId: string, block: ToolResultBlock): Promise<void> {
    return this.row(toolResultRow(assistantMessageId, block));
  }

  appendUsage(record: UsageRecord): Promise<void> {
    return this.local.appendUsage(record);
  }

  async loadConversation(): Promise<Message[]> {
    const rows = await this.options.redis.lrange(`${this.key}conv`, 0, -1);
    return rebuildConversation(rows, this.logger, this.key);
  }

  async loadPending(): Promise<PendingRound | undefined> {
    const text = await this.options.redis.get(`${this.key}pending`);
    if (!text) return undefined;
    const data = JSON.parse(text) as PendingRound;
    return data.version === 1 && Array.isArray(data.inputs) ? data : undefined;
  }

  async savePending(round: PendingRound | undefined): Promise<void> {
    await (round ? this.write("set", "pending", JSON.stringify(round)) : this.write("del", "pending", ""));
  }

  async loadSessionRules(): Promise<PermissionRule[]> {
    const text = await this.options.redis.get(`${this.key}rules`);
    if (!text) return [];
    const data = JSON.parse(text) as { rules?: PermissionRule[] };
    return Array.isArray(data.rules) ? data.rules : [];
  }

  async saveSessionRules(rules: PermissionRule[]): Promise<void> {
    await this.write("set", "rules", JSON.stringify({ rules }));
  }

  storeLargeResult(toolUseId: string, content: string): Promise<string> {
    return this.local.storeLargeResult(toolUseId, content);
  }

  private async row(row: ConversationRow): Promise<void> {
    await this.write("rpush", "conv", JSON.stringify(row));
  }

  /** One fenced write; writes go out in call order on the one connection. */
  private write(op: "rpush" | "set" | "del", name: string, value: string): Promise<unknown> {
    const fence = this.options.fenceOf(this.contextId) ?? "";
    const done = FENCED_WRITE.run(
      this.options.redis,
      [this.options.leaseKey(this.contextId), `${this.key}${name}`],
      [fence, op, value],
    );
    this.tail = Promise.all([this.tail, done.catch(() => undefined)]);
    return done;
  }
}
