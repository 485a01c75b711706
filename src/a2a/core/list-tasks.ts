// ListTasks: filters, the stable order (status timestamp desc, then id desc)
// and the opaque cursor (base64 of the first task id of the requested page).
import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { pb } from "../../contract/index.js";
import { invalidParams } from "./errors.js";
import { trimTask } from "./task-record.js";

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

function statusMs(task: pb.Task): number | undefined {
  return task.status?.timestamp ? timestampMs(task.status.timestamp) : undefined;
}

export function compareTasks(a: pb.Task, b: pb.Task): number {
  const ta = statusMs(a);
  const tb = statusMs(b);
  if (ta !== tb) {
    if (ta === undefined) return 1;
    if (tb === undefined) return -1;
    return tb - ta;
  }
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

export function encodePageToken(taskId: string): string {
  return Buffer.from(taskId, "utf8").toString("base64");
}

function decodePageToken(token: string): string {
  const padded = token + "=".repeat((4 - (token.length % 4)) % 4);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(padded))
    throw invalidParams("Token is not a valid base64-encoded cursor.");
  const id = Buffer.from(padded, "base64").toString("utf8");
  if (id === "") throw invalidParams("Token is not a valid base64-encoded cursor.");
  return id;
}

export function checkHistoryLength(historyLength: number | undefined): void {
  if (historyLength !== undefined && historyLength < 0)
    throw invalidParams("history length must be non-negative");
}

export function listTasks(all: pb.Task[], request: pb.ListTasksRequest): pb.ListTasksResponse {
  const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
  if (pageSize < 1) throw invalidParams("minimum page size is 1");
  if (pageSize > MAX_PAGE_SIZE) throw invalidParams("maximum page size is 100");
  checkHistoryLength(request.historyLength);
  const after = request.statusTimestampAfter ? timestampMs(request.statusTimestampAfter) : undefined;
  const filtered = all
    .filter((task) => !request.contextId || task.contextId === request.contextId)
    .filter((task) => request.status === pb.TaskState.UNSPECIFIED || task.status?.state === request.status)
    .filter((task) => {
      if (after === undefined) return true;
      const ms = statusMs(task);
      return ms !== undefined && ms >= after;
    })
    .sort(compareTasks);
  let start = 0;
  if (request.pageToken) {
    const id = decodePageToken(request.pageToken);
    start = filtered.findIndex((task) => task.id === id);
    if (start < 0) throw invalidParams(`Invalid page token: ${request.pageToken}`);
  }
  const page = filtered.slice(start, start + pageSize);
  const next = filtered[start + pageSize];
  return create(pb.ListTasksResponseSchema, {
    tasks: page.map((task) => trimTask(task, request.historyLength, request.includeArtifacts ?? false)),
    nextPageToken: next ? encodePageToken(next.id) : "",
    pageSize,
    totalSize: filtered.length,
  });
}
