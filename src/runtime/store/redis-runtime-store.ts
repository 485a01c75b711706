// The runtime store in Redis (store: redis), shared by every replica: a log is
// a list, a document a string, under
//   iac-code:session:<session>:<part>:l:<log>   (row n is list index n-1)
//   iac-code:session:<session>:<part>:d:<name>
// Changes are staged and sent with the A2A state store's commit script
// (redis-state.ts): one atomic call per event-loop turn holds the task state
// and what the turn wrote, each write fenced by the lease of its context, so a
// replica that lost a context cannot write to its session any more. Reads
// wait for the commits in flight.
import type { Redis } from "ioredis";
import type { CommitHooks, Staged, StagedPart } from "../../server/group-commit.js";
import type { RedisArg } from "../../server/redis.js";
import type { PartCatalog, RuntimeStore, StoreLog, StoreScope } from "./runtime-store.js";

export const SESSION_PREFIX = "iac-code:session:";

/** The staged writes of one commit: the contexts to fence, and the script's ops. */
export interface StagedRuntimeOps extends Staged {
  contexts: Set<string>;
  /** L ctx key row (append), D ctx key value (set), X ctx key (delete). */
  ops: RedisArg[];
}

function partKey(scope: { sessionId: string; part: string }): string {
  return `${SESSION_PREFIX}${scope.sessionId}:${scope.part}:`;
}

class RedisLog implements StoreLog {
  constructor(
    private readonly store: RedisRuntimeStore,
    private readonly scope: StoreScope,
    private readonly key: string,
    private next: number,
  ) {}

  get nextSeq(): number {
    return this.next;
  }

  append(rows: readonly string[]): void {
    this.next += rows.length;
    this.store.stage(
      this.scope,
      rows.map((row) => ["L", this.scope.contextId, this.key, row]),
    );
  }

  async read(after = 0): Promise<string[]> {
    return this.store.range(this.key, after);
  }
}

export class RedisRuntimeStore implements RuntimeStore, StagedPart<StagedRuntimeOps> {
  private contexts = new Set<string>();
  private ops: RedisArg[] = [];
  private readonly staged = new Map<string, string | undefined>();

  constructor(
    private readonly redis: Redis,
    private readonly host: CommitHooks,
  ) {}

  /** @internal stages ops for a scope. */
  stage(scope: StoreScope, ops: RedisArg[][]): void {
    for (const op of ops) this.ops.push(...op);
    if (scope.contextId) this.contexts.add(scope.contextId);
    this.host.schedule();
  }

  /** @internal the rows of a list after row `after`, once the commits in flight are applied. */
  async range(key: string, after: number): Promise<string[]> {
    await this.host.commit();
    return this.redis.lrange(key, after, -1);
  }

  hasStaged(): boolean {
    return this.ops.length > 0;
  }

  /** The staged writes for the commit script; the store starts staging anew. */
  take(): StagedRuntimeOps {
    const contexts = this.contexts;
    const ops = this.ops;
    const docs = new Map(this.staged);
    this.contexts = new Set();
    this.ops = [];
    this.staged.clear();
    return {
      contexts,
      ops,
      restage: () => {
        // Before whatever was staged meanwhile: the order of a log's rows is kept.
        this.ops = [...ops, ...this.ops];
        for (const c of contexts) this.contexts.add(c);
        for (const [key, value] of docs) if (!this.staged.has(key)) this.staged.set(key, value);
      },
    };
  }

  async log(scope: StoreScope, name: string, options: { fresh?: boolean } = {}): Promise<StoreLog> {
    const key = `${partKey(scope)}l:${name}`;
    if (options.fresh) return new RedisLog(this, scope, key, 1);
    await this.host.commit();
    return new RedisLog(this, scope, key, (await this.redis.llen(key)) + 1);
  }

  async get(scope: StoreScope, name: string): Promise<string | undefined> {
    const key = `${partKey(scope)}d:${name}`;
    if (this.staged.has(key)) return this.staged.get(key);
    await this.host.commit();
    return (await this.redis.get(key)) ?? undefined;
  }

  put(scope: StoreScope, name: string, value: string | undefined): void {
    const key = `${partKey(scope)}d:${name}`;
    this.staged.set(key, value);
    this.stage(scope, [
      value === undefined ? ["X", scope.contextId, key] : ["D", scope.contextId, key, value],
    ]);
  }

  commit(): Promise<void> {
    return this.host.commit();
  }

  /** Found by a key scan (an export's cost, not a turn's). */
  async catalog(sessionId: string): Promise<PartCatalog[]> {
    await this.host.commit();
    const prefix = `${SESSION_PREFIX}${sessionId}:`;
    const parts = new Map<string, PartCatalog>();
    let cursor = "0";
    do {
      const [next, keys] = await this.redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      for (const key of keys) {
        // <part>:l:<log> or <part>:d:<name>; the part itself may hold ':' (transcript keys do not).
        const m = /^(.*):([ld]):([^:]*)$/.exec(key.slice(prefix.length));
        if (!m) continue;
        let entry = parts.get(m[1]);
        if (!entry) parts.set(m[1], (entry = { part: m[1], logs: [], docs: [] }));
        (m[2] === "l" ? entry.logs : entry.docs).push(m[3]);
      }
    } while (cursor !== "0");
    return [...parts.values()]
      .sort((a, b) => (a.part < b.part ? -1 : a.part > b.part ? 1 : 0))
      .map((e) => ({ ...e, logs: e.logs.sort(), docs: e.docs.sort() }));
  }

  /** The state store that hosts it closes the connection. */
  close(): Promise<void> {
    return this.host.commit();
  }
}
