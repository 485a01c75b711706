// One task as the server holds it while a turn runs: the aggregated pb.Task
// (folded from the events it emitted), its owner, and what the store keeps
// besides. Folding never changes an object in place that a published event
// or a snapshot may still hold: status, metadata and messages are replaced,
// history and artifacts only grow or swap entries, so a snapshot is a
// shallow copy.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { pb } from "../../contract/index.js";
import { DEFAULT_LANGUAGE, normalizeLanguage, type Language } from "../../i18n/index.js";
import type { StoredTask } from "../stores/state.js";

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

/** A snapshot of a task with history cut to the last n messages (0 = none). */
export function trimTask(task: pb.Task, historyLength?: number, includeArtifacts = true): pb.Task {
  const history =
    historyLength === undefined
      ? task.history.slice()
      : historyLength === 0
        ? []
        : task.history.slice(-historyLength);
  return { ...task, history, artifacts: includeArtifacts ? task.artifacts.slice() : [] };
}

/**
 * A status update the server writes itself (a failure before or after a turn,
 * a cancel without a live turn): the state with one agent text message.
 */
export function serverStatusEvent(
  task: pb.Task,
  state: pb.TaskState,
  text: string,
  messageSuffix: string,
  metadata?: JsonObject,
): pb.StreamResponse {
  const { id, contextId } = task;
  return create(pb.StreamResponseSchema, {
    payload: {
      case: "statusUpdate",
      value: {
        taskId: id,
        contextId,
        status: {
          state,
          timestamp: timestampFromDate(new Date()),
          message: {
            messageId: `${id}-status-${messageSuffix}`,
            role: pb.Role.AGENT,
            taskId: id,
            contextId,
            parts: [{ content: { case: "text", value: text } }],
          },
        },
        metadata,
      },
    },
  });
}

/** The stream event carrying a snapshot of the task (the first event of every stream). */
export function snapshotEvent(task: pb.Task): pb.StreamResponse {
  return create(pb.StreamResponseSchema, { payload: { case: "task", value: trimTask(task) } });
}

export class TaskRecord implements StoredTask {
  constructor(
    public task: pb.Task,
    public readonly owner: string,
    public language: Language,
    public updatedAt = Date.now(),
    /** Names of the per-request credentials of the last turn (values are never kept). */
    public credentialNames: readonly string[] = [],
  ) {}

  static fromStored(stored: StoredTask): TaskRecord {
    return new TaskRecord(
      stored.task,
      stored.owner,
      normalizeLanguage(stored.language) ?? DEFAULT_LANGUAGE,
      stored.updatedAt,
      stored.credentialNames,
    );
  }

  get state(): pb.TaskState {
    return this.task.status?.state ?? pb.TaskState.UNSPECIFIED;
  }

  /** metadata.iac_code.input of the current status (a pending human-input envelope). */
  get pendingInput(): JsonObject | undefined {
    const input = iacCode(this.task.metadata).input;
    return input && typeof input === "object" && !Array.isArray(input) ? input : undefined;
  }

  private setIacCode(iac: JsonObject): void {
    this.task.metadata = { ...(this.task.metadata ?? {}), iac_code: iac };
  }

  /**
   * Folds one event into the task. keepMessage appends the status message to
   * history (final answers and failure texts; streamed text deltas are not
   * kept, so history does not repeat every chunk).
   */
  apply(event: pb.StreamResponse, keepMessage = false): void {
    const payload = event.payload;
    this.updatedAt = Date.now();
    if (payload.case === "statusUpdate") {
      const update = payload.value;
      const state = update.status?.state;
      this.task.status = update.status;
      if (keepMessage && update.status?.message) this.task.history.push(update.status.message);
      const incoming = iacCode(update.metadata);
      const previous = iacCode(this.task.metadata);
      const session = typeof incoming.iacCodeSessionId === "string" ? incoming.iacCodeSessionId : undefined;
      // The pending-input envelope is part of the task only while it waits, the error (code, errorId) once failed.
      const input = state === pb.TaskState.INPUT_REQUIRED ? incoming.input : undefined;
      const error = state === pb.TaskState.FAILED ? incoming.error : undefined;
      // A turn end held back by a failed session backup, until the task's next turn.
      const blocked = state === pb.TaskState.INPUT_REQUIRED ? incoming.backupBlocked : undefined;
      // Most events (text chunks) change none of these: the metadata object stays as it is.
      if (
        (session === undefined || session === previous.iacCodeSessionId) &&
        !input &&
        !previous.input &&
        !error &&
        !previous.error &&
        !blocked &&
        !previous.backupBlocked
      )
        return;
      const current = { ...previous };
      if (session !== undefined) current.iacCodeSessionId = session;
      if (input) current.input = input;
      else delete current.input;
      if (error) current.error = error;
      else delete current.error;
      if (blocked) current.backupBlocked = blocked;
      else delete current.backupBlocked;
      this.setIacCode(current);
    } else if (payload.case === "artifactUpdate") {
      const artifact = payload.value.artifact;
      if (artifact) {
        const index = this.task.artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
        if (index >= 0) this.task.artifacts[index] = artifact;
        else this.task.artifacts.push(artifact);
      }
    }
  }

  /** Starts a new turn on this task: the user's message joins the history. */
  beginTurn(message: pb.Message, language: Language, credentialNames: readonly string[]): void {
    this.task.history.push(message);
    this.task.status = create(pb.TaskStatusSchema, {
      state: pb.TaskState.SUBMITTED,
      timestamp: timestampFromDate(new Date()),
    });
    const current = { ...iacCode(this.task.metadata) };
    delete current.input;
    this.setIacCode(current);
    this.language = language;
    this.credentialNames = credentialNames;
    this.updatedAt = Date.now();
  }
}
