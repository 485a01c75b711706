// At start-up: tasks a previous process left SUBMITTED or WORKING had their
// turn die with it (one server owns the persistence dir, so nothing else
// runs them). They end FAILED with a localised reason, so that no task stays
// "working" forever and the context takes new turns. Tasks waiting for input
// are left as they are: the answer resumes them.
import type { Logger } from "pino";
import { pb } from "../../contract/index.js";
import { t } from "../../i18n/index.js";
import type { PushOutbox, StateStore } from "../stores/state.js";
import { serverStatusEvent, TaskRecord } from "./task-record.js";

/** Fails every task whose turn died with the previous process (pushed like any state change); returns how many. */
export async function settleInterruptedTasks(
  state: StateStore,
  logger: Logger,
  notify: PushOutbox["enqueue"],
): Promise<number> {
  const unfinished = await state.tasks.unfinished();
  for (const stored of unfinished) {
    const record = TaskRecord.fromStored(stored);
    const failed = serverStatusEvent(
      record.task,
      pb.TaskState.FAILED,
      t(record.language, "a2a.interruptedByRestart"),
      "interrupted",
      { iac_code: { error: { retryable: false, reason: "server_restart" } } },
    );
    record.apply(failed, true);
    state.tasks.save(record);
    notify(record.task.id, failed);
  }
  await state.commit();
  if (unfinished.length > 0) {
    logger.warn(
      { tasks: unfinished.map((s) => s.task.id) },
      "tasks interrupted by the previous process marked FAILED",
    );
  }
  return unfinished.length;
}
