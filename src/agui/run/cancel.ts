// The cancel extension, POST /extensions/iac-code/v1/executions/{executionId}/cancel
// (agui-iaccode.md §6): finds the execution through the thread's durable state,
// cancels its A2A task, clears its interrupts and marks it terminal. A run in
// progress learns it was cancelled here and ends with RUN_ERROR CANCELLED.
import type { AdapterCore } from "../adapter-core.js";
import { AguiError, MSG } from "../errors.js";
import { isTerminal, markTerminal } from "../threads/execution.js";

export type CancelStatus = "cancelled" | "already_terminal";

export async function cancelExecution(
  core: AdapterCore,
  executionId: string,
  threadId: string,
  rosInvocationId: string,
  /** A JWT caller's identity: another user's thread is not found. */
  user?: string,
): Promise<CancelStatus> {
  core.lastActivity = core.now();
  return core.lock.run(threadId, async () => {
    const doc = await core.loadThread(threadId);
    if (!doc || (user !== undefined && doc.userId !== user))
      throw new AguiError("EXECUTION_NOT_FOUND", MSG.executionNotFound);
    const ex = doc.execution;
    if (ex.executionId !== executionId || isTerminal(doc)) {
      if (doc.terminalExecutionIds.includes(executionId)) return "already_terminal";
      throw new AguiError("EXECUTION_NOT_FOUND", MSG.executionNotFound);
    }
    if (ex.rosInvocationId !== rosInvocationId)
      throw new AguiError("EXECUTION_NOT_FOUND", MSG.executionNotFound);
    const run = core.active.get(threadId);
    if (!ex.taskId && !run) throw new AguiError("EXECUTION_NOT_FOUND", MSG.executionNotFound);
    const taskId = ex.taskId;
    if (run && run.executionId === executionId) {
      run.cancelledByExtension = true;
      run.waitStop.abort();
      // Without a task there is nothing to cancel upstream: end the stream here.
      if (!taskId) run.upstream.abort();
    }
    markTerminal(doc);
    await core.cancelUpstream(taskId);
    await core.saveBestEffort(doc);
    core.clearExpiry(threadId);
    return "cancelled";
  });
}
