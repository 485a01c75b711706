// At start-up: tasks a previous process left SUBMITTED or WORKING had their
// turn die with it (one server owns the persistence dir, so nothing else
// runs them). A pipeline run continues from the store (revived: its running
// steps go on, its waits are published again); any other such task ends
// FAILED with a localised reason, so that no task stays "working" forever and
// the context takes new turns. Tasks waiting for input are left as they are:
// the answer resumes them.
import type { Logger } from "pino";
import { pb } from "../../../contract/index.js";
import { t } from "../../../i18n/index.js";
import type { PushOutbox, StateStore } from "../../stores/state.js";
import type { Cluster } from "./cluster.js";
import { serverStatusEvent, TaskRecord } from "../task-record.js";

/** Ends a task whose turn died with its process: FAILED with the localised reason (staged). */
function failInterrupted(
  state: StateStore,
  record: TaskRecord,
  reason: string,
  notify: PushOutbox["enqueue"],
): pb.StreamResponse {
  const failed = serverStatusEvent(
    record.task,
    pb.TaskState.FAILED,
    t(record.language, "a2a.interruptedByRestart"),
    "interrupted",
    { iac_code: { error: { retryable: false, reason } } },
  );
  record.apply(failed, true);
  state.tasks.save(record);
  notify(record.task.id, failed);
  return failed;
}

/** Continues a task's pipeline run from the store; false when the task has none to continue. */
export type Revive = (record: TaskRecord) => Promise<boolean>;

/**
 * Revives or fails every task whose turn died with the previous process
 * (failures pushed like any state change); returns how many were failed.
 */
export async function settleInterruptedTasks(
  state: StateStore,
  logger: Logger,
  notify: PushOutbox["enqueue"],
  revive: Revive,
): Promise<number> {
  const failed: string[] = [];
  const revived: string[] = [];
  for (const stored of await state.tasks.unfinished()) {
    const record = TaskRecord.fromStored(stored);
    if (await revive(record)) revived.push(record.task.id);
    else {
      failInterrupted(state, record, "server_restart", notify);
      failed.push(record.task.id);
    }
  }
  await state.commit();
  if (revived.length > 0) logger.info({ tasks: revived }, "pipeline runs of the previous process continued");
  if (failed.length > 0)
    logger.warn({ tasks: failed }, "tasks interrupted by the previous process marked FAILED");
  return failed.length;
}

const UNFINISHED = new Set([pb.TaskState.SUBMITTED, pb.TaskState.WORKING]);

/** How the sweep holds a context (Turns, over the Cluster). */
export interface OrphanLeases {
  /** Takes the context's lease when no replica (this one included) is at the context; else false. */
  takeIdle(contextId: string): Promise<boolean>;
  /** Gives back a context taken by takeIdle. */
  give(contextId: string): void;
  publishEnd: Cluster["publishEnd"];
}

/**
 * With several replicas: revives here, or fails, the unfinished tasks whose
 * replica is gone (it holds their context's lease no more, or it is no
 * longer connected). The lease is taken first, so a replica that only lost
 * touch cannot write over what this one does; the followers of a failed task
 * see the failure and the end of its stream.
 */
export async function settleOrphanedTasks(
  state: StateStore,
  contexts: OrphanLeases,
  logger: Logger,
  notify: PushOutbox["enqueue"],
  revive: Revive,
): Promise<number> {
  const settled: string[] = [];
  const revived: string[] = [];
  for (const stored of await state.tasks.unfinished()) {
    const { id, contextId } = stored.task;
    if (!(await contexts.takeIdle(contextId))) continue;
    try {
      const fresh = await state.tasks.get(id);
      if (!fresh || !UNFINISHED.has(fresh.task.status?.state ?? 0)) continue;
      const record = TaskRecord.fromStored(fresh);
      if (await revive(record)) {
        revived.push(id);
        continue;
      }
      const failed = failInterrupted(state, record, "replica_lost", notify);
      await state.commit();
      await contexts.publishEnd(id, [failed]);
      settled.push(id);
    } finally {
      contexts.give(contextId);
    }
  }
  if (revived.length > 0)
    logger.info({ tasks: revived }, "pipeline runs of a replica that is gone continued here");
  if (settled.length > 0) logger.warn({ tasks: settled }, "tasks of a replica that is gone marked FAILED");
  return settled.length;
}
