// At start-up: tasks a previous process left SUBMITTED or WORKING had their
// turn die with it (one server owns the persistence dir, so nothing else
// runs them). They end FAILED with a localised reason, so that no task stays
// "working" forever and the context takes new turns. Tasks waiting for input
// are left as they are: the answer resumes them.
import type { Logger } from "pino";
import { pb } from "../../contract/index.js";
import { t } from "../../i18n/index.js";
import type { PushOutbox, StateStore } from "../stores/state.js";
import type { Cluster } from "./cluster.js";
import { serverStatusEvent, TaskRecord } from "./task-record.js";

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

/** Fails every task whose turn died with the previous process (pushed like any state change); returns how many. */
export async function settleInterruptedTasks(
  state: StateStore,
  logger: Logger,
  notify: PushOutbox["enqueue"],
): Promise<number> {
  const unfinished = await state.tasks.unfinished();
  for (const stored of unfinished)
    failInterrupted(state, TaskRecord.fromStored(stored), "server_restart", notify);
  await state.commit();
  if (unfinished.length > 0) {
    logger.warn(
      { tasks: unfinished.map((s) => s.task.id) },
      "tasks interrupted by the previous process marked FAILED",
    );
  }
  return unfinished.length;
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
 * With several replicas: fails the unfinished tasks whose replica is gone
 * (no replica holds their context's lease any more). The lease is taken
 * first, so a replica that only lost touch cannot write over the failure;
 * the followers of the task see the failure and the end of its stream.
 */
export async function settleOrphanedTasks(
  state: StateStore,
  contexts: OrphanLeases,
  logger: Logger,
  notify: PushOutbox["enqueue"],
): Promise<number> {
  const settled: string[] = [];
  for (const stored of await state.tasks.unfinished()) {
    const { id, contextId } = stored.task;
    if (!(await contexts.takeIdle(contextId))) continue;
    try {
      const fresh = await state.tasks.get(id);
      if (!fresh || !UNFINISHED.has(fresh.task.status?.state ?? 0)) continue;
      const failed = failInterrupted(state, TaskRecord.fromStored(fresh), "replica_lost", notify);
      await state.commit();
      await contexts.publishEnd(id, [failed]);
      settled.push(id);
    } finally {
      contexts.give(contextId);
    }
  }
  if (settled.length > 0) logger.warn({ tasks: settled }, "tasks of a replica that is gone marked FAILED");
  return settled.length;
}
