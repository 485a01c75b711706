// The trivial agent of the A2A benchmarks as an @a2a-js/sdk AgentExecutor (the
// iac-code AgentRuntime twin is in trivial-runtime.ts).
// A turn on either side produces the same events: the task, a WORKING status,
// one WORKING status per text chunk, a WORKING status with usage, a WORKING
// status with the whole answer, and INPUT_REQUIRED (iac-code's end of turn).
import { Message, Task, TaskState, TaskStatusUpdateEvent } from "@a2a-js/sdk";
import type { AgentExecutor, ExecutionEventBus, RequestContext } from "@a2a-js/sdk/server";
import { chunksOf } from "./trivial-runtime.js";

function status(
  ctx: RequestContext,
  state: TaskState,
  text?: string,
  metadata?: Record<string, unknown>,
): TaskStatusUpdateEvent {
  return TaskStatusUpdateEvent.fromJSON({
    taskId: ctx.taskId,
    contextId: ctx.contextId,
    status: {
      state: TaskState[state],
      timestamp: new Date().toISOString(),
      ...(text === undefined
        ? {}
        : {
            message: {
              messageId: `${ctx.taskId}-${Math.random().toString(16).slice(2)}`,
              role: "ROLE_AGENT",
              taskId: ctx.taskId,
              contextId: ctx.contextId,
              parts: [{ text }],
            },
          }),
    },
    metadata,
  });
}

export class TrivialSdkExecutor implements AgentExecutor {
  execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const prompt = ctx.userMessage.parts
      .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
      .join("");
    const chunks = chunksOf(prompt);
    bus.publish({
      kind: "task",
      data: Task.fromJSON({
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: "TASK_STATE_SUBMITTED", timestamp: new Date().toISOString() },
        history: [Message.toJSON(ctx.userMessage)],
      }),
    });
    bus.publish({ kind: "statusUpdate", data: status(ctx, TaskState.TASK_STATE_WORKING) });
    for (const text of chunks)
      bus.publish({ kind: "statusUpdate", data: status(ctx, TaskState.TASK_STATE_WORKING, text) });
    bus.publish({
      kind: "statusUpdate",
      data: status(ctx, TaskState.TASK_STATE_WORKING, undefined, { iac_code: { usage: { totalTokens: 1 } } }),
    });
    bus.publish({ kind: "statusUpdate", data: status(ctx, TaskState.TASK_STATE_WORKING, chunks.join("")) });
    bus.publish({ kind: "statusUpdate", data: status(ctx, TaskState.TASK_STATE_INPUT_REQUIRED) });
    bus.finished();
    return Promise.resolve();
  }

  cancelTask(): Promise<void> {
    return Promise.resolve();
  }
}
