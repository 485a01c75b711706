// How tasks and artifacts are written to the store (protobuf binary: compact,
// and encoded by the generated schema; a task as iac_code.a2a.state.v1.StoredTask,
// its metadata as JSON text) and read back. What is read back is
// checked before anyone sees it: a record that does not decode, names
// another task or holds a number ProtoJSON cannot write is refused
// (the store quarantines it).
import { create, fromBinary, type JsonObject } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { pb } from "../../contract/index.js";
import { encodeBinary } from "../../contract/fast-binary.js";
import { StoredTaskSchema } from "../../../generated/proto/iac_code/a2a/state/v1/stored_task_pb.js";
import { nonFinitePath } from "../core/request/finite.js";

/** Sort key of a task without a status timestamp: after every task that has one. */
export const NO_TIMESTAMP_MS = Number.MIN_SAFE_INTEGER;

export class UnreadableRecordError extends Error {
  override readonly name = "UnreadableRecordError";
}

export function statusMs(task: pb.Task): number {
  return task.status?.timestamp ? timestampMs(task.status.timestamp) : NO_TIMESTAMP_MS;
}

/** The task without its artifacts (they live in the artifact index). */
export function encodeTask(task: pb.Task): Uint8Array {
  // Non-finite numbers never reach a task (refused at the request, finite.ts), so JSON text holds the metadata exactly.
  return encodeBinary(StoredTaskSchema, {
    $typeName: "iac_code.a2a.state.v1.StoredTask",
    task: { ...task, artifacts: [], metadata: undefined },
    metadataJson: task.metadata ? JSON.stringify(task.metadata) : "",
  });
}

export function encodeArtifact(artifact: pb.Artifact): Uint8Array {
  return encodeBinary(pb.ArtifactSchema, artifact);
}

function checked<T>(what: string, decode: () => T): T {
  let value: T;
  try {
    value = decode();
  } catch (error) {
    throw new UnreadableRecordError(`${what} does not decode: ${(error as Error).message}`);
  }
  const bad = nonFinitePath(value);
  if (bad) throw new UnreadableRecordError(`${what} holds a non-finite number at ${bad}`);
  return value;
}

export function decodeTask(id: string, body: Uint8Array): pb.Task {
  const task = checked(`task ${id}`, () => {
    const stored = fromBinary(StoredTaskSchema, body);
    const decoded = stored.task ?? create(pb.TaskSchema);
    if (stored.metadataJson !== "") decoded.metadata = metadataOf(stored.metadataJson);
    return decoded;
  });
  if (task.id !== id) throw new UnreadableRecordError(`task ${id} holds task ${task.id || "(no id)"}`);
  return task;
}

function metadataOf(json: string): JsonObject {
  const value: unknown = JSON.parse(json);
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new Error("metadata is not an object");
  return value as JsonObject;
}

export function decodeArtifact(taskId: string, body: Uint8Array): pb.Artifact {
  return checked(`an artifact of task ${taskId}`, () => fromBinary(pb.ArtifactSchema, body));
}
