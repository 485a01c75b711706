// The state layer: what the A2A server keeps between requests and across
// restarts, behind interfaces that an embedded store (SQLite, the default) and
// a networked one (Redis) can both implement. Reads are async; writes are
// staged and become durable together at the next commit(), which the core
// awaits before a client hears of a change (group commit).
import type { PermissionAuditLine, pb } from "../../contract/index.js";
import type { RuntimeStore } from "../../runtime/store/runtime-store.js";

/** One task as stored: the aggregated pb.Task and what the server needs besides. */
export interface StoredTask {
  /** The task; artifacts come from the artifact index. */
  readonly task: pb.Task;
  /** Auth principal that created the task; other owners never see it. */
  readonly owner: string;
  /** Epoch milliseconds of the last change. */
  readonly updatedAt: number;
  /** Language of the task's last turn: server texts written after a restart use it. */
  readonly language: string;
  /**
   * Names (never values) of the per-request credentials the last turn was
   * given: an answer after a restart must bring them again.
   */
  readonly credentialNames: readonly string[];
}

/** contextId -> runtime session, workspace and owner. */
export interface ContextRecord {
  contextId: string;
  sessionId: string;
  cwd: string;
  owner: string;
  updatedAt: number;
  /** The telemetry channel bound to the context (metadata.iac_code.channel; a later one replaces it). */
  channel?: string;
}

/**
 * One permission decision taken by the A2A server itself (auto-approve,
 * cancel), in the runtime's audit line shape (schemas/audit/permission-audit-line.json).
 */
export type AuditEntry = PermissionAuditLine;

/** The A2A state a store stages for its next commit; `A`: what it keeps of an artifact. */
export interface StagedState<A> {
  tasks: Map<string, StoredTask>;
  contexts: Map<string, ContextRecord>;
  /** By task and artifact id. */
  artifacts: Map<string, A>;
  audit: AuditEntry[];
}

export const nothingStaged = <A>(): StagedState<A> => ({
  tasks: new Map(),
  contexts: new Map(),
  artifacts: new Map(),
  audit: [],
});

/** ListTasks filters and page, already validated. */
export interface TaskQuery {
  owner: string;
  contextId?: string;
  state?: pb.TaskState;
  /** Keeps tasks whose status timestamp is at or after this (epoch ms). */
  statusAfterMs?: number;
  pageSize: number;
  /** Id of the first task of the page (the cursor); undefined = first page. */
  startId?: string;
  includeArtifacts: boolean;
}

/** One page in ListTasks order: status timestamp descending, then id descending. */
export interface TaskPage {
  tasks: StoredTask[];
  /** Id of the first task of the next page, if any. */
  nextId?: string;
  /** Tasks matching the filters, all pages. */
  totalSize: number;
}

export interface TaskStore {
  get(id: string): Promise<StoredTask | undefined>;
  /** Stages the task's current state (read when the commit runs). */
  save(task: StoredTask): void;
  /** undefined when startId names no task that matches the filters. */
  list(query: TaskQuery): Promise<TaskPage | undefined>;
  /** Tasks a previous process left SUBMITTED or WORKING: their turns died with it. */
  unfinished(): Promise<StoredTask[]>;
}

export interface ContextStore {
  get(contextId: string): Promise<ContextRecord | undefined>;
  /** Stages the record (copied now). */
  save(record: ContextRecord): void;
}

/** Artifacts of each task, in the order they were first announced. */
export interface ArtifactIndex {
  /** Stages an artifact of a task; one with the same artifactId is replaced in place. */
  save(taskId: string, artifact: pb.Artifact): void;
}

export interface PermissionAudit {
  /** Written and committed before it resolves (an approval counts only once audited). */
  record(entry: AuditEntry): Promise<void>;
  entries(): Promise<AuditEntry[]>;
}

/** A push notification config as stored: its secrets only sealed (push/keyring.ts). */
export interface StoredPushConfig {
  taskId: string;
  id: string;
  /** Owner of the task; only they read or change the config. */
  owner: string;
  url: string;
  /** authentication.scheme as given ("" = none). */
  scheme: string;
  /** The token and credentials, sealed by the push keyring ("" when neither was given). */
  sealedSecrets: string;
}

/** Push configs by task and id, owner-scoped. */
export interface PushConfigStore {
  /** Stages the config (same task and id: replaced). */
  save(config: StoredPushConfig): void;
  get(owner: string, taskId: string, id: string): Promise<StoredPushConfig | undefined>;
  /** A task's configs sorted by id, from startId (inclusive), at most limit of them. */
  list(
    owner: string,
    taskId: string,
    startId: string | undefined,
    limit: number,
  ): Promise<StoredPushConfig[]>;
  /** Stages the removal; a missing config is no error. */
  remove(owner: string, taskId: string, id: string): void;
}

/** One delivery of one task event to one config, as a queue holds it: no secret in clear. */
export interface PushJob {
  jobId: string;
  /** The same for every delivery of the event, to every config (receivers drop duplicates by it). */
  eventId: string;
  taskId: string;
  configId: string;
  url: string;
  scheme: string;
  sealedSecrets: string;
  /** The StreamResponse JSON of the event. */
  payload: string;
  /** Deliveries tried so far. */
  attempt: number;
  /** Epoch ms before which the job is not tried. */
  nextAttemptAt: number;
  /** Why the last delivery failed ("" = none yet), free of secrets. */
  lastError: string;
}

/**
 * The push outbox: a task event is enqueued in the same commit as the state
 * change that causes it (one job per config of the task), and leased to one
 * worker at a time. The embedded store is also the local-file queue; a Redis
 * queue is fed from it.
 */
export interface PushOutbox {
  /** Stages a task event; at the next commit it becomes one job per config the task has then. */
  enqueue(taskId: string, event: pb.StreamResponse): void;
  /** The next due job, leased for leaseMs (a lease that runs out makes it due again). */
  claim(leaseMs: number): Promise<PushJob | undefined>;
  /** Delivered (or handed on): removed. */
  ack(jobId: string): Promise<void>;
  /** Back in the queue with the job's attempt, nextAttemptAt and lastError; lease released. */
  retry(job: PushJob): Promise<void>;
  /** Moved to the dead letters. */
  dead(job: PushJob): Promise<void>;
  deadLetters(): Promise<PushJob[]>;
  /** Jobs not yet delivered nor dead (due, leased or waiting for a retry): the metrics' queue depth. */
  depth(): Promise<number>;
}

export interface StateStore {
  readonly tasks: TaskStore;
  readonly contexts: ContextStore;
  readonly artifacts: ArtifactIndex;
  readonly audit: PermissionAudit;
  readonly pushConfigs: PushConfigStore;
  readonly pushJobs: PushOutbox;
  /** The runtime's sessions and pipelines, written in the same commits as the task state. */
  readonly runtime: RuntimeStore;
  /** Makes every staged change durable, in one transaction. */
  commit(): Promise<void>;
  /** Transactions written so far (each a group commit of what several requests staged). */
  readonly commits: number;
  /** Commits what is staged and releases the store (and its persistence dir). */
  close(): Promise<void>;
}
