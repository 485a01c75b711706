// What a running turn tells the world, as A2A events (the role of a2a-js's
// ExecutionEventBus): status updates (text, metadata.iac_code, the session
// id) and artifact updates, each folded into the task, staged in the store
// when it changes the task's state or history, pushed when it changes the
// state, and fanned out to every stream watching the task.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { pb } from "../../../contract/index.js";
import type { StoredArtifact } from "../../stores/artifact-store.js";
import type { PushOutbox, StateStore } from "../../stores/state.js";
import { TaskRecord } from "../task-record.js";
import { EventHub } from "./event-hub.js";
import { now, TextChunks } from "./text-chunks.js";

export interface PublisherDeps {
  /** Task snapshots and the artifact index are staged here; the core commits before clients hear. */
  state: Pick<StateStore, "tasks" | "artifacts">;
  /** Stages a push delivery of a state change or an artifact update (a no-op without push). */
  notify: PushOutbox["enqueue"];
}

export interface StatusOptions {
  /** Agent text of the update. */
  text?: string;
  /** The message joins the task's history (final answers, failure texts). */
  keep?: boolean;
  /** A streamed text chunk (not kept, not staged). */
  delta?: boolean;
  /** metadata.iac_code of the update. */
  metadata?: JsonObject;
  /** Staged and pushed even when the state stays (each new input request). */
  persist?: boolean;
}

/** metadata.iac_code.artifact (and a tool result's artifact) of a stored artifact. */
export function artifactMetadata(artifact: StoredArtifact): JsonObject {
  return {
    artifactId: artifact.artifactId,
    filename: artifact.filename,
    mediaType: artifact.mediaType,
    byteSize: artifact.byteSize,
    sha256: artifact.sha256,
    uri: artifact.url,
  };
}

export class TurnPublisher {
  readonly hub = new EventHub<pb.StreamResponse>();
  /** The runtime session's id, in every status update's metadata once the session is open. */
  sessionId = "";
  private seq = 0;
  /** While preview() runs: the copy its publications fold into. */
  private dry?: TaskRecord;
  /** Text chunks (status updates with a delta) share all but their text, id and time. */
  private readonly chunks = new TextChunks((text, messageId) =>
    this.makeStatusEvent(pb.TaskState.WORKING, { text }, messageId),
  );

  constructor(
    private readonly deps: PublisherDeps,
    readonly record: TaskRecord,
  ) {}

  private get taskId(): string {
    return this.record.task.id;
  }
  private get contextId(): string {
    return this.record.task.contextId;
  }

  /**
   * Emits a status update carrying metadata.iac_code (+ the session id) and
   * optional agent text. State changes and kept messages are staged for the
   * store (streamed text chunks are not); state changes (and each new input
   * request) are pushed to the task's push configs.
   */
  status(state: pb.TaskState, options: StatusOptions): void {
    const event = this.statusEvent(state, options);
    const changed = this.record.state !== state || options.persist === true;
    this.publish(event, options.keep ?? false, changed || options.keep === true, changed);
  }

  /** Announces a stored artifact: a file:// URL part with its media type, size and digest. */
  artifact(stored: StoredArtifact): void {
    const metadata = { mediaType: stored.mediaType, byteSize: stored.byteSize, sha256: stored.sha256 };
    const artifact = create(pb.ArtifactSchema, {
      artifactId: stored.artifactId,
      name: stored.filename,
      parts: [
        {
          content: { case: "url", value: stored.url },
          filename: stored.filename,
          mediaType: stored.mediaType,
          metadata,
        },
      ],
      metadata: { ...metadata, iac_code: { artifact: artifactMetadata(stored) } },
    });
    const event = create(pb.StreamResponseSchema, {
      payload: {
        case: "artifactUpdate",
        value: { taskId: this.taskId, contextId: this.contextId, artifact, lastChunk: true },
      },
    });
    this.publish(event, false, true, true);
  }

  /**
   * The task as what `publish` publishes would leave it: folded into a copy,
   * nothing staged, pushed or sent (the backup of a turn's end is taken from it
   * before the end is published).
   */
  preview(publish: () => void): TaskRecord {
    const { task, owner, language, updatedAt, credentialNames } = this.record;
    const copy = new TaskRecord(
      { ...task, history: task.history.slice(), artifacts: task.artifacts.slice() },
      owner,
      language,
      updatedAt,
      credentialNames,
    );
    const seq = this.seq;
    this.dry = copy;
    try {
      publish();
    } finally {
      this.dry = undefined;
      this.seq = seq;
    }
    return copy;
  }

  private statusEvent(state: pb.TaskState, options: StatusOptions): pb.StreamResponse {
    this.seq += 1;
    if (state === pb.TaskState.WORKING && options.delta && options.text !== undefined && !options.metadata)
      return this.chunks.next(options.text, `${this.taskId}-delta-${this.seq}`, this.sessionId);
    return this.makeStatusEvent(state, options, `${this.taskId}-status-${this.seq}`);
  }

  private makeStatusEvent(
    state: pb.TaskState,
    options: { text?: string; metadata?: JsonObject },
    messageId: string,
  ): pb.StreamResponse {
    const iac: JsonObject = { ...(options.metadata ?? {}) };
    if (this.sessionId) iac.iacCodeSessionId = this.sessionId;
    // Literals, not create(): the generated types name every field, and create's walk of the
    // initialiser was the largest cost of a status event.
    const message: pb.Message | undefined =
      options.text === undefined
        ? undefined
        : {
            $typeName: "lf.a2a.v1.Message",
            messageId,
            contextId: this.contextId,
            taskId: this.taskId,
            role: pb.Role.AGENT,
            parts: [
              {
                $typeName: "lf.a2a.v1.Part",
                content: { case: "text", value: options.text },
                filename: "",
                mediaType: "",
              },
            ],
            extensions: [],
            referenceTaskIds: [],
          };
    return {
      $typeName: "lf.a2a.v1.StreamResponse",
      payload: {
        case: "statusUpdate",
        value: {
          $typeName: "lf.a2a.v1.TaskStatusUpdateEvent",
          taskId: this.taskId,
          contextId: this.contextId,
          status: message
            ? { $typeName: "lf.a2a.v1.TaskStatus", state, message, timestamp: now() }
            : { $typeName: "lf.a2a.v1.TaskStatus", state, timestamp: now() },
          metadata: { iac_code: iac },
        },
      },
    };
  }

  private publish(event: pb.StreamResponse, keep: boolean, persist: boolean, push: boolean): void {
    if (this.dry) {
      this.dry.apply(event, keep);
      return;
    }
    this.record.apply(event, keep);
    if (persist) this.deps.state.tasks.save(this.record);
    if (push) this.deps.notify(this.taskId, event);
    if (event.payload.case === "artifactUpdate" && event.payload.value.artifact)
      this.deps.state.artifacts.save(this.taskId, event.payload.value.artifact);
    this.hub.publish(event);
  }
}
