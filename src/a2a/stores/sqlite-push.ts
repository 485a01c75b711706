// Push configs and the push outbox in the state database. Both are staged like
// the rest of the state and written in the store's group commit: a task event
// staged for delivery becomes one job per config of the task inside the same
// transaction as the state change it reports (an outbox), so a commit either
// holds the change and its jobs or neither. Claims are leases; the process
// that holds the database is the only one that claims, so at open every lease
// of a previous (dead) process is released and its jobs are due again.
import { randomUUID } from "node:crypto";
import type { Database, Statement } from "better-sqlite3";
import { encodeProtoJson, pb } from "../../contract/index.js";
import { settled, type StagedPart } from "../../server/group-commit.js";
import type { SqliteCommitHooks, SqliteStaged } from "../../runtime/store/sqlite-group-commit.js";
import type { PushConfigStore, PushJob, PushOutbox, StoredPushConfig } from "./state.js";

interface ConfigRow {
  task_id: string;
  id: string;
  owner: string;
  url: string;
  scheme: string;
  sealed_secrets: string;
}

interface JobRow {
  job_id: string;
  event_id: string;
  task_id: string;
  config_id: string;
  url: string;
  scheme: string;
  sealed_secrets: string;
  payload: string;
  attempt: number;
  next_attempt_ms: number;
  last_error: string;
}

const configOf = (r: ConfigRow): StoredPushConfig => ({
  taskId: r.task_id,
  id: r.id,
  owner: r.owner,
  url: r.url,
  scheme: r.scheme,
  sealedSecrets: r.sealed_secrets,
});

const jobOf = (r: JobRow): PushJob => ({
  jobId: r.job_id,
  eventId: r.event_id,
  taskId: r.task_id,
  configId: r.config_id,
  url: r.url,
  scheme: r.scheme,
  sealedSecrets: r.sealed_secrets,
  payload: r.payload,
  attempt: r.attempt,
  nextAttemptAt: r.next_attempt_ms,
  lastError: r.last_error,
});

type StagedConfig = { config: StoredPushConfig } | { removed: { owner: string; taskId: string; id: string } };
type StagedEvent = { taskId: string; event: pb.StreamResponse };

export class SqlitePush implements StagedPart<SqliteStaged> {
  readonly configs: PushConfigStore;
  readonly jobs: PushOutbox;
  private stagedConfigs = new Map<string, StagedConfig>();
  private stagedEvents: StagedEvent[] = [];
  private readonly putConfig: Statement;
  private readonly deleteConfig: Statement;
  private readonly configsOfTask: Statement<[string], ConfigRow>;
  private readonly putJob: Statement;

  constructor(
    private readonly db: Database,
    hooks: SqliteCommitHooks,
  ) {
    this.putConfig = db.prepare(
      `INSERT INTO push_configs (task_id, id, owner, url, scheme, sealed_secrets) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (task_id, id) DO UPDATE SET owner = excluded.owner, url = excluded.url,
         scheme = excluded.scheme, sealed_secrets = excluded.sealed_secrets`,
    );
    this.deleteConfig = db.prepare("DELETE FROM push_configs WHERE task_id = ? AND id = ? AND owner = ?");
    this.configsOfTask = db.prepare("SELECT * FROM push_configs WHERE task_id = ? ORDER BY id");
    this.putJob = db.prepare(
      `INSERT INTO push_jobs (job_id, event_id, task_id, config_id, url, scheme, sealed_secrets, payload,
         attempt, next_attempt_ms, lease_until_ms, last_error)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 0, '')`,
    );
    // The previous owner of the database is gone: its leases are.
    db.prepare("UPDATE push_jobs SET lease_until_ms = 0 WHERE lease_until_ms > 0").run();
    this.configs = this.configStore(hooks);
    this.jobs = this.outbox(hooks);
  }

  hasStaged(): boolean {
    return this.stagedConfigs.size > 0 || this.stagedEvents.length > 0;
  }

  take(): SqliteStaged {
    const configs = this.stagedConfigs;
    const events = this.stagedEvents;
    this.stagedConfigs = new Map();
    this.stagedEvents = [];
    return {
      write: (now) => this.write(configs, events, now),
      restage: () => {
        this.stagedConfigs = configs;
        this.stagedEvents = events;
      },
    };
  }

  /** Writes what was staged; runs inside the store's transaction (configs first, so new ones get jobs). */
  private write(configs: Map<string, StagedConfig>, events: StagedEvent[], now: number): void {
    for (const staged of configs.values()) {
      if ("config" in staged) {
        const c = staged.config;
        this.putConfig.run(c.taskId, c.id, c.owner, c.url, c.scheme, c.sealedSecrets);
      } else this.deleteConfig.run(staged.removed.taskId, staged.removed.id, staged.removed.owner);
    }
    for (const { taskId, event } of events) {
      const targets = this.configsOfTask.all(taskId);
      if (targets.length === 0) continue;
      const payload = JSON.stringify(encodeProtoJson(pb.StreamResponseSchema, event));
      const eventId = randomUUID();
      for (const c of targets) {
        this.putJob.run(randomUUID(), eventId, taskId, c.id, c.url, c.scheme, c.sealed_secrets, payload, now);
      }
    }
  }

  private configStore(hooks: SqliteCommitHooks): PushConfigStore {
    const one = this.db.prepare<[string, string, string], ConfigRow>(
      "SELECT * FROM push_configs WHERE task_id = ? AND id = ? AND owner = ?",
    );
    const page = this.db.prepare<[string, string, string, number], ConfigRow>(
      "SELECT * FROM push_configs WHERE task_id = ? AND owner = ? AND id >= ? ORDER BY id LIMIT ?",
    );
    const key = (taskId: string, id: string) => `${taskId}\u0000${id}`;
    return {
      save: (config) => {
        this.stagedConfigs.set(key(config.taskId, config.id), { config: { ...config } });
        hooks.schedule();
      },
      remove: (owner, taskId, id) => {
        this.stagedConfigs.set(key(taskId, id), { removed: { owner, taskId, id } });
        hooks.schedule();
      },
      get: (owner, taskId, id) =>
        settled(() => {
          hooks.commitNow();
          const row = one.get(taskId, id, owner);
          return row && configOf(row);
        }),
      list: (owner, taskId, startId, limit) =>
        settled(() => {
          hooks.commitNow();
          return page.all(taskId, owner, startId ?? "", limit).map(configOf);
        }),
    };
  }

  private outbox(hooks: SqliteCommitHooks): PushOutbox {
    const claim = this.db.prepare<[number, number, number], JobRow>(
      `UPDATE push_jobs SET lease_until_ms = ? WHERE seq = (
         SELECT seq FROM push_jobs WHERE next_attempt_ms <= ? AND lease_until_ms <= ?
         ORDER BY next_attempt_ms, seq LIMIT 1)
       RETURNING *`,
    );
    const ack = this.db.prepare("DELETE FROM push_jobs WHERE job_id = ?");
    const retry = this.db.prepare(
      `UPDATE push_jobs SET attempt = ?, next_attempt_ms = ?, last_error = ?, lease_until_ms = 0
       WHERE job_id = ?`,
    );
    const bury = this.db.prepare(
      `INSERT INTO push_dead (job_id, event_id, task_id, config_id, url, scheme, sealed_secrets, payload,
         attempt, next_attempt_ms, last_error, dead_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const dead = this.db.transaction((job: PushJob) => {
      bury.run(
        job.jobId,
        job.eventId,
        job.taskId,
        job.configId,
        job.url,
        job.scheme,
        job.sealedSecrets,
        job.payload,
        job.attempt,
        job.nextAttemptAt,
        job.lastError,
        Date.now(),
      );
      ack.run(job.jobId);
    });
    const deadRows = this.db.prepare<[], JobRow>("SELECT * FROM push_dead ORDER BY seq");
    const depth = this.db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM push_jobs");
    return {
      enqueue: (taskId, event) => {
        this.stagedEvents.push({ taskId, event });
        hooks.schedule();
      },
      claim: (leaseMs) =>
        settled(() => {
          const now = Date.now();
          const row = claim.get(now + leaseMs, now, now);
          return row && jobOf(row);
        }),
      ack: (jobId) => settled(() => void ack.run(jobId)),
      retry: (job) => settled(() => void retry.run(job.attempt, job.nextAttemptAt, job.lastError, job.jobId)),
      dead: (job) => settled(() => dead(job)),
      deadLetters: () => settled(() => deadRows.all().map(jobOf)),
      depth: () => settled(() => depth.get()?.n ?? 0),
    };
  }
}
