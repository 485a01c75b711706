// ListTasks: the validated query, the stable order (status timestamp desc,
// then id desc; the store pages in that order) and the opaque cursor (base64
// of the first task id of the requested page).
import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { pb } from "../../../contract/index.js";
import type { TaskPage, TaskQuery } from "../../stores/state.js";
import { invalidParams } from "./errors.js";
import { trimTask } from "../task-record.js";

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

export function encodePageToken(taskId: string): string {
  return Buffer.from(taskId, "utf8").toString("base64");
}

export function decodePageToken(token: string): string {
  const padded = token + "=".repeat((4 - (token.length % 4)) % 4);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(padded))
    throw invalidParams("Token is not a valid base64-encoded cursor.");
  const id = Buffer.from(padded, "base64").toString("utf8");
  if (id === "") throw invalidParams("Token is not a valid base64-encoded cursor.");
  return id;
}

export function checkHistoryLength(historyLength: number | undefined, field = "historyLength"): void {
  if (historyLength !== undefined && historyLength < 0)
    throw invalidParams("history length must be non-negative", { field });
}

/** The store query of a request; throws InvalidParams for bad sizes, lengths or tokens. */
export function listTasksQuery(request: pb.ListTasksRequest, owner: string): TaskQuery {
  const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
  if (pageSize < 1) throw invalidParams("minimum page size is 1");
  if (pageSize > MAX_PAGE_SIZE) throw invalidParams("maximum page size is 100");
  checkHistoryLength(request.historyLength);
  return {
    owner,
    contextId: request.contextId || undefined,
    state: request.status === pb.TaskState.UNSPECIFIED ? undefined : request.status,
    statusAfterMs: request.statusTimestampAfter ? timestampMs(request.statusTimestampAfter) : undefined,
    pageSize,
    startId: request.pageToken ? decodePageToken(request.pageToken) : undefined,
    includeArtifacts: request.includeArtifacts ?? false,
  };
}

export function listTasksResponse(
  tasks: pb.Task[],
  page: TaskPage,
  request: pb.ListTasksRequest,
): pb.ListTasksResponse {
  return create(pb.ListTasksResponseSchema, {
    tasks: tasks.map((task) => trimTask(task, request.historyLength, request.includeArtifacts ?? false)),
    nextPageToken: page.nextId === undefined ? "" : encodePageToken(page.nextId),
    pageSize: request.pageSize ?? DEFAULT_PAGE_SIZE,
    totalSize: page.totalSize,
  });
}
