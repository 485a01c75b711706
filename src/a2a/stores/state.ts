// The state layer: what the A2A server keeps between requests and across
// restarts, behind interfaces that an embedded store (SQLite, the default) and
// a networked one (Redis) can both implement. Reads are async; writes are
// staged and become durable together at the next commit(), which the core
// awaits before a client hears of a change (group commit).
import type { pb } from "../../contract/index.js";

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
}

/** One permission decision taken by the A2A server itself (auto-approve, cancel). */
export interface AuditEntry {
  at: string;
  taskId: string;
  contextId: string;
  owner: string;
  toolName: string;
  toolUseId: string;
  inputId: string;
  decision: string;
  reason: string;
}

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

export interface StateStore {
  readonly tasks: TaskStore;
  readonly contexts: ContextStore;
  readonly artifacts: ArtifactIndex;
  readonly audit: PermissionAudit;
  /** Makes every staged change durable, in one transaction. */
  commit(): Promise<void>;
  /** Commits what is staged and releases the store (and its persistence dir). */
  close(): Promise<void>;
}
