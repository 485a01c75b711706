// The shared state store: tasks, contexts, the artifact index and the
// permission audit in one Redis, for every replica of the server, the push
// configs and outbox (redis-push.ts), and the runtime's sessions and
// pipelines (runtime/store/redis-runtime-store.ts). Changes are staged and
// written by the group commit (server/group-commit.ts), as with SQLite: what
// one event-loop turn staged goes out as one Lua script call (atomic in Redis), and commit()
// resolves once Redis has applied it. A write for a context this replica holds
// a lease on carries the lease's fencing token, checked in the same script: a
// replica that lost its lease cannot write (its staged changes are dropped and
// logged). The same script appends the events relayed to other replicas
// (redis-cluster.ts) after the writes they report, and gives back the leases
// of contexts whose turn is over after their last writes: a trivial turn is
// then one call besides its lease's acquisition. Durability is Redis's: with
// AOF (appendfsync everysec) an acknowledged commit survives a Redis restart,
// and docs/deploy.md asks for it.
import type { Redis } from "ioredis";
import { inSpan } from "../../server/tracing/index.js";
import type { Logger } from "pino";
import type { pb } from "../../contract/index.js";
import { RedisRuntimeStore, type StagedRuntimeOps } from "../../runtime/store/redis-runtime-store.js";
import { GroupCommit, type Staged, type StagedPart } from "../../server/group-commit.js";
import { text, type RedisArg } from "../../server/redis.js";
import { RedisPush, type StagedPush } from "./redis-push.js";
import { COMMIT, GET_TASKS, LIST_TASKS, QUARANTINE_ARTIFACT, QUARANTINE_TASK } from "./redis-scripts.js";
import {
  nothingStaged,
  type ArtifactIndex,
  type AuditEntry,
  type ContextStore,
  type PermissionAudit,
  type PushConfigStore,
  type PushOutbox,
  type StagedState,
  type StateStore,
  type StoredTask,
  type TaskPage,
  type TaskQuery,
  type TaskStore,
} from "./state.js";
import {
  decodeArtifact,
  decodeTask,
  encodeArtifact,
  encodeTask,
  statusMs,
  UnreadableRecordError,
} from "./task-codec.js";

/** Key prefix of the A2A state. */
export const A2A_PREFIX = "iac-code:a2a:";

export interface RedisStateOptions {
  redis: Redis;
  logger: Logger;
  /** The lease value ("<replica>|<token>") this replica holds on a context, if any. */
  fenceOf(contextId: string): string | undefined;
}

/** The relay streams (read by redis-cluster.ts): trimmed to about this many entries, expiring an hour after the last. */
const EVENT_STREAM_MAX = 1000;
const EVENT_STREAM_TTL_MS = 3_600_000;
/** How long relayed events wait for a commit to ride on before they make one, and how many one entry holds. */
const RELAY_WAIT_MS = 20;
const RELAY_BATCH_MAX = 256;

/** Events for one stream entry: RelayedEvents messages, concatenated (one message of them all). */
interface StreamEntry {
  key: string;
  parts: Buffer[];
  end: boolean;
}

/** Fields of one task as the scripts return them, in readTask's order. */
const TASK_FIELDS = 9;

/** The A2A state staged for the next commit, the relayed events and the leases to give back (value by context). */
interface RedisStaged extends StagedState<{ taskId: string; contextId: string; artifact: pb.Artifact }> {
  stream: StreamEntry[];
  releases: Map<string, string>;
}

const nothingStagedInRedis = (): RedisStaged => ({ ...nothingStaged(), stream: [], releases: new Map() });

/** One commit: the COMMIT script's arguments (the state's, the push outbox's and the runtime's writes). */
type StagedCommit = Staged & { args: RedisArg[] };

export class RedisStateStore implements StateStore, StagedPart<StagedCommit> {
  readonly tasks: TaskStore;
  readonly contexts: ContextStore;
  readonly artifacts: ArtifactIndex;
  readonly audit: PermissionAudit;
  readonly pushConfigs: PushConfigStore;
  readonly pushJobs: PushOutbox;
  readonly runtime: RedisRuntimeStore;

  private readonly redis: Redis;
  private readonly push: RedisPush;
  /** Script calls, one per event-loop turn that staged something; this store is its only part. */
  private readonly group: GroupCommit<StagedCommit>;
  private staged = nothingStagedInRedis();
  /** The entry of the staged stream still taking events, by stream. */
  private openEntries = new Map<string, StreamEntry>();
  private streamTimer: NodeJS.Timeout | undefined;
  /** The context of the tasks this replica wrote lately (an artifact is fenced by its task's context). */
  private readonly contextOfTask = new Map<string, string>();

  constructor(private readonly options: RedisStateOptions) {
    this.redis = options.redis;
    this.group = new GroupCommit<StagedCommit>(([commit]) => this.send(commit.args), options.logger);
    this.group.join(this);
    this.push = new RedisPush(this.redis, A2A_PREFIX, {
      schedule: () => this.group.schedule(),
      commit: () => this.commit(),
      contextOf: (taskId, event) => event.payload.value?.contextId || this.contextOf(taskId),
    });
    this.pushConfigs = this.push.configs;
    this.pushJobs = this.push.jobs;
    this.runtime = new RedisRuntimeStore(this.redis, {
      schedule: () => this.group.schedule(),
      commit: () => this.commit(),
    });
    this.tasks = {
      get: async (id) => (await this.readTasks([id]))[0],
      save: (task) => {
        this.staged.tasks.set(task.task.id, task);
        this.rememberContext(task.task.id, task.task.contextId);
        this.group.schedule();
      },
      list: (query) => this.list(query),
      unfinished: async () => {
        await this.commit();
        const ids = await this.redis.smembers(`${A2A_PREFIX}unfinished`);
        return ids.length === 0 ? [] : this.readTasks(ids);
      },
    };
    this.contexts = {
      get: async (contextId) => {
        const staged = this.staged.contexts.get(contextId);
        if (staged) return { ...staged };
        const h = await this.redis.hgetall(`${A2A_PREFIX}c:${contextId}`);
        if (h.o === undefined) return undefined;
        return {
          contextId,
          owner: h.o,
          sessionId: h.s ?? "",
          cwd: h.w ?? "",
          updatedAt: Number(h.u),
          ...(h.h ? { channel: h.h } : {}),
        };
      },
      save: (record) => {
        this.staged.contexts.set(record.contextId, { ...record });
        this.group.schedule();
      },
    };
    this.artifacts = {
      save: (taskId, artifact) => {
        const contextId = this.contextOf(taskId);
        this.staged.artifacts.set(`${taskId}\u0000${artifact.artifactId}`, { taskId, contextId, artifact });
        this.group.schedule();
      },
    };
    this.audit = {
      record: (entry) => {
        this.staged.audit.push({ ...entry });
        return this.commit();
      },
      entries: async () => {
        await this.commit();
        const rows = await this.redis.lrange(`${A2A_PREFIX}audit`, 0, -1);
        return rows.map((row) => JSON.parse(row) as AuditEntry);
      },
    };
  }

  /**
   * Appends a RelayedEvents message (a batch of events) to a relay stream with
   * the next commit, after its writes; `end` closes the stream. Without a
   * commit within RELAY_WAIT_MS, the events make one.
   */
  appendEvents(key: string, events: Buffer, end: boolean): void {
    let entry = this.openEntries.get(key);
    if (!entry || entry.parts.length >= RELAY_BATCH_MAX) {
      entry = { key, parts: [], end: false };
      this.staged.stream.push(entry);
      this.openEntries.set(key, entry);
    }
    entry.parts.push(events);
    if (end) {
      entry.end = true;
      this.openEntries.delete(key);
      this.group.schedule();
    } else {
      this.streamTimer ??= setTimeout(() => this.group.schedule(), RELAY_WAIT_MS);
    }
  }

  /**
   * Gives a context's lease (this value) back with the next commit, after
   * every write staged for it; resolves once done.
   */
  releaseLease(contextId: string, value: string): Promise<void> {
    this.staged.releases.set(contextId, value);
    return this.commit();
  }

  /** Cancels a release not sent yet: the lease's value, still held; undefined when none is staged. */
  keepLease(contextId: string): string | undefined {
    const value = this.staged.releases.get(contextId);
    this.staged.releases.delete(contextId);
    return value;
  }

  /** Script calls written so far (each one a group commit). */
  get commits(): number {
    return this.group.commits;
  }

  /** Resolves once what is staged now is applied in Redis (and once a commit in flight is). */
  commit(): Promise<void> {
    if (!this.hasStaged()) return this.group.commit();
    return inSpan("iac-code.a2a", "store commit", { attributes: { "db.system.name": "redis" } }, () =>
      this.group.commit(),
    );
  }

  close(): Promise<void> {
    return this.group.close();
  }

  hasStaged(): boolean {
    const { tasks, contexts, artifacts, audit, stream, releases } = this.staged;
    return (
      tasks.size + contexts.size + artifacts.size + audit.length + stream.length + releases.size > 0 ||
      this.push.hasStaged() ||
      this.runtime.hasStaged()
    );
  }

  /** What is staged, as one script call; the next one may be sent before this one is answered. */
  take(): StagedCommit {
    const staged = this.staged;
    this.staged = nothingStagedInRedis();
    this.openEntries = new Map();
    clearTimeout(this.streamTimer);
    this.streamTimer = undefined;
    const push = this.push.take();
    const runtime = this.runtime.take();
    return {
      args: this.commitArgs(staged, push, runtime),
      restage: () => {
        // Staged again unless something newer was staged meanwhile.
        const now = this.staged;
        for (const [id, task] of staged.tasks) if (!now.tasks.has(id)) now.tasks.set(id, task);
        for (const [id, c] of staged.contexts) if (!now.contexts.has(id)) now.contexts.set(id, c);
        for (const [id, a] of staged.artifacts) if (!now.artifacts.has(id)) now.artifacts.set(id, a);
        push.restage();
        runtime.restage();
        now.stream.unshift(...staged.stream);
        if (staged.stream.length > 0)
          this.streamTimer ??= setTimeout(() => this.group.schedule(), RELAY_WAIT_MS);
        // A lease this replica took again meanwhile stays; the others are given back next time.
        for (const [id, value] of staged.releases) {
          if (!now.releases.has(id) && this.options.fenceOf(id) === undefined) now.releases.set(id, value);
        }
        // An audit record that was not written does not land later (the decision fails closed).
      },
    };
  }

  private async send(args: RedisArg[]): Promise<void> {
    const refused = (await COMMIT.run(this.redis, [], args)) as Buffer[];
    if (refused.length > 0) {
      this.options.logger.warn(
        { contexts: refused.map(text) },
        "writes dropped: this replica no longer holds these contexts' leases",
      );
    }
  }

  /** The context of a task staged or written lately ("" when unknown: not fenced). */
  private contextOf(taskId: string): string {
    return this.staged.tasks.get(taskId)?.task.contextId ?? this.contextOfTask.get(taskId) ?? "";
  }

  private rememberContext(taskId: string, contextId: string): void {
    this.contextOfTask.delete(taskId);
    this.contextOfTask.set(taskId, contextId);
    if (this.contextOfTask.size > 10_000) {
      const oldest = this.contextOfTask.keys().next();
      if (!oldest.done) this.contextOfTask.delete(oldest.value);
    }
  }

  private commitArgs(
    { tasks, contexts, artifacts, audit, stream, releases }: RedisStaged,
    push: StagedPush,
    runtime: StagedRuntimeOps,
  ): RedisArg[] {
    const args: RedisArg[] = [A2A_PREFIX];
    const fenced = new Set<string>();
    const fence = (contextId: string): void => {
      if (fenced.has(contextId)) return;
      fenced.add(contextId);
      // A lease given back in this commit still fences the writes before it.
      const value = this.options.fenceOf(contextId) ?? releases.get(contextId);
      if (value !== undefined) args.push("F", contextId, value);
    };
    for (const { task } of tasks.values()) fence(task.contextId);
    for (const { contextId } of artifacts.values()) fence(contextId);
    for (const id of contexts.keys()) fence(id);
    for (const id of push.contexts) fence(id);
    for (const id of runtime.contexts) fence(id);
    for (const { task, owner, updatedAt, language, credentialNames } of tasks.values()) {
      args.push(
        "T",
        task.contextId,
        task.id,
        owner,
        String(task.status?.state ?? 0),
        String(statusMs(task)),
        String(updatedAt),
        language,
        credentialNames.join(","),
        Buffer.from(encodeTask(task)),
      );
    }
    for (const { taskId, contextId, artifact } of artifacts.values()) {
      args.push("A", contextId, taskId, artifact.artifactId, Buffer.from(encodeArtifact(artifact)));
    }
    for (const c of contexts.values()) {
      args.push("C", c.contextId, c.owner, c.sessionId, c.cwd, String(c.updatedAt), c.channel ?? "");
    }
    args.push(...push.ops);
    for (const entry of audit) args.push("U", JSON.stringify(entry));
    args.push(...runtime.ops);
    for (const { key, parts, end } of stream) {
      const body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
      args.push("V", key, String(EVENT_STREAM_MAX), String(EVENT_STREAM_TTL_MS), body, end ? "1" : "0");
    }
    for (const [contextId, value] of releases) args.push("Z", contextId, value);
    return args;
  }

  // ---- reads ----------------------------------------------------------------

  private async readTasks(ids: string[]): Promise<StoredTask[]> {
    await this.commit();
    const flat = (await GET_TASKS.run(this.redis, [], [A2A_PREFIX, ...ids])) as Array<Buffer | number>;
    const { tasks, unreadable } = await this.decodeAll(flat, 0);
    return unreadable ? this.readTasks(ids) : tasks;
  }

  private async list(query: TaskQuery): Promise<TaskPage | undefined> {
    await this.commit();
    for (;;) {
      const reply = (await LIST_TASKS.run(
        this.redis,
        [],
        [
          A2A_PREFIX,
          query.owner,
          query.contextId ?? "",
          query.state === undefined ? "" : String(query.state),
          query.statusAfterMs === undefined ? "" : String(query.statusAfterMs),
          query.startId ?? "",
          String(query.pageSize + 1),
          query.includeArtifacts ? "1" : "0",
        ],
      )) as Array<Buffer | number> | null;
      if (!reply) return undefined;
      const { tasks, unreadable } = await this.decodeAll(reply, 1);
      // The unreadable records are quarantined now: read the page again without them.
      if (unreadable) continue;
      const next = tasks[query.pageSize];
      return { tasks: tasks.slice(0, query.pageSize), nextId: next?.task.id, totalSize: Number(reply[0]) };
    }
  }

  /** Decodes the tasks laid out from `at`; unreadable ones are quarantined (unreadable: true). */
  private async decodeAll(
    flat: Array<Buffer | number>,
    at: number,
  ): Promise<{ tasks: StoredTask[]; unreadable: boolean }> {
    const tasks: StoredTask[] = [];
    let unreadable = false;
    let i = at;
    while (i < flat.length) {
      const [id, owner, , , , updated, language, names] = flat.slice(i, i + 8).map(text);
      const rawBody = flat[i + 8] as Buffer;
      const count = Number(flat[i + TASK_FIELDS]);
      const artifacts = flat.slice(i + TASK_FIELDS + 1, i + TASK_FIELDS + 1 + count * 2) as Buffer[];
      i += TASK_FIELDS + 1 + count * 2;
      let task: pb.Task;
      try {
        task = decodeTask(id, rawBody);
      } catch (error) {
        if (!(error instanceof UnreadableRecordError)) throw error;
        this.warnUnreadable("task", id, error);
        await QUARANTINE_TASK.run(this.redis, [], [A2A_PREFIX, id]);
        unreadable = true;
        continue;
      }
      for (let a = 0; a < artifacts.length; a += 2) {
        const artifactId = text(artifacts[a]);
        try {
          task.artifacts.push(decodeArtifact(id, artifacts[a + 1]));
        } catch (error) {
          if (!(error instanceof UnreadableRecordError)) throw error;
          this.warnUnreadable("artifact", id, error);
          await QUARANTINE_ARTIFACT.run(this.redis, [], [A2A_PREFIX, id, artifactId]);
        }
      }
      tasks.push({
        task,
        owner,
        updatedAt: Number(updated),
        language,
        credentialNames: names === "" ? [] : names.split(","),
      });
    }
    return { tasks, unreadable };
  }

  /** Logged before the record moves to the quarantine. */
  private warnUnreadable(kind: string, id: string, error: Error): void {
    this.options.logger.warn({ kind, id, reason: error.message }, "unreadable stored record quarantined");
  }
}
