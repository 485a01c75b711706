// One task as the server holds it: the aggregated pb.Task (folded from the
// events it emitted), its owner, and helpers to snapshot it for clients.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { pb } from "../../contract/index.js";
import type { StoredTask, TaskStore } from "../stores/task-store.js";

export const TERMINAL_STATES = new Set<pb.TaskState>([
  pb.TaskState.COMPLETED,
  pb.TaskState.FAILED,
  pb.TaskState.CANCELED,
  pb.TaskState.REJECTED,
]);
export const INTERRUPTED_STATES = new Set<pb.TaskState>([
  pb.TaskState.INPUT_REQUIRED,
  pb.TaskState.AUTH_REQUIRED,
]);

export function isTerminal(state: pb.TaskState | undefined): boolean {
  return state !== undefined && TERMINAL_STATES.has(state);
}

export function iacCode(metadata: JsonObject | undefined): JsonObject {
  const value = metadata?.iac_code;
  return value && typeof value === "object" && !Array.isArray(value) ? value : {};
}

/** Deep copy of a task with history trimmed to the last n messages (0 = no history). */
export function trimTask(task: pb.Task, historyLength?: number, includeArtifacts = true): pb.Task {
  const copy = create(pb.TaskSchema, structuredClone(task));
  if (historyLength !== undefined)
    copy.history = historyLength === 0 ? [] : copy.history.slice(-historyLength);
  if (!includeArtifacts) copy.artifacts = [];
  return copy;
}

export class TaskRecord {
  constructor(
    public task: pb.Task,
    public readonly owner: string,
    public updatedAt = Date.now(),
  ) {}

  static fromStored(stored: StoredTask): TaskRecord {
    return new TaskRecord(stored.task, stored.owner, stored.updatedAt);
  }

  get state(): pb.TaskState {
    return this.task.status?.state ?? pb.TaskState.UNSPECIFIED;
  }

  /** metadata.iac_code.input of the current status (a pending human-input envelope). */
  get pendingInput(): JsonObject | undefined {
    const input = iacCode(this.task.metadata).input;
    return input && typeof input === "object" && !Array.isArray(input) ? input : undefined;
  }

  /**
   * Folds one event into the task. keepMessage appends the status message to
   * history (final answers and failure texts; streamed text deltas are not
   * kept, so history does not repeat every chunk).
   */
  apply(event: pb.StreamResponse, keepMessage = false): void {
    const payload = event.payload;
    this.updatedAt = Date.now();
    if (payload.case === "task") {
      this.task = create(pb.TaskSchema, structuredClone(payload.value));
    } else if (payload.case === "statusUpdate") {
      const update = payload.value;
      this.task.status = create(pb.TaskStatusSchema, structuredClone(update.status));
      if (keepMessage && update.status?.message)
        this.task.history.push(structuredClone(update.status.message));
      const incoming = iacCode(update.metadata);
      const current = { ...iacCode(this.task.metadata) };
      if (typeof incoming.iacCodeSessionId === "string") current.iacCodeSessionId = incoming.iacCodeSessionId;
      // The pending-input envelope is part of the task only while it waits.
      if (update.status?.state === pb.TaskState.INPUT_REQUIRED && incoming.input)
        current.input = incoming.input;
      else if (update.status?.state !== pb.TaskState.INPUT_REQUIRED || !incoming.input) delete current.input;
      this.task.metadata = { ...(this.task.metadata ?? {}), iac_code: current };
    } else if (payload.case === "artifactUpdate") {
      const artifact = payload.value.artifact;
      if (artifact) {
        const index = this.task.artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
        const copy = create(pb.ArtifactSchema, structuredClone(artifact));
        if (index >= 0) this.task.artifacts[index] = copy;
        else this.task.artifacts.push(copy);
      }
    }
  }

  /** Starts a new turn on this task: the user's message joins the history. */
  beginTurn(message: pb.Message): void {
    this.task.history.push(create(pb.MessageSchema, structuredClone(message)));
    this.task.status = create(pb.TaskStatusSchema, {
      state: pb.TaskState.SUBMITTED,
      timestamp: timestampFromDate(new Date()),
    });
    const current = { ...iacCode(this.task.metadata) };
    delete current.input;
    this.task.metadata = { ...(this.task.metadata ?? {}), iac_code: current };
    this.updatedAt = Date.now();
  }

  save(store: TaskStore): Promise<void> {
    return store.put({ task: this.task, owner: this.owner, updatedAt: this.updatedAt });
  }
}
