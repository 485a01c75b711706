// The same trivial agent twice, for the gRPC benchmark: once as an iac-code
// AgentRuntime (behind our A2A core) and once as an @a2a-js/sdk AgentExecutor.
// A turn on either side produces the same events: the task, a WORKING status,
// one WORKING status per text chunk, a WORKING status with usage, a WORKING
// status with the whole answer, and INPUT_REQUIRED (iac-code's end of turn).
import { Message, Task, TaskState, TaskStatusUpdateEvent } from "@a2a-js/sdk";
import type { AgentExecutor, ExecutionEventBus, RequestContext } from "@a2a-js/sdk/server";
import type { AgentRuntime, AgentSession, RuntimeEvent, TurnInput } from "../../src/runtime/seam.js";

/** "chunks N" streams N chunks; anything else answers in one. */
export function chunksOf(prompt: string): string[] {
  const count = Number(/^chunks\s+(\d+)/.exec(prompt.trim())?.[1] ?? "1");
  return Array.from({ length: count }, (_, i) => `chunk-${i} `);
}

class TrivialSession implements AgentSession {
  private turn = 0;
  constructor(
    readonly sessionId: string,
    readonly cwd: string,
  ) {}

  async *runTurn(input: TurnInput): AsyncIterable<RuntimeEvent> {
    await Promise.resolve();
    this.turn += 1;
    const messageId = `${this.sessionId}-${this.turn}`;
    const chunks = chunksOf(input.text);
    yield { type: "message_start", messageId };
    for (const text of chunks) yield { type: "text_delta", messageId, text };
    const text = chunks.join("");
    yield {
      type: "message_end",
      messageId,
      stopReason: "end_turn",
      text,
      usage: { inputTokens: 1, outputTokens: chunks.length, totalTokens: 1 + chunks.length },
    };
  }

  resumeTurn(): AsyncIterable<RuntimeEvent> {
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.resolve({ done: true as const, value: undefined }),
      }),
    };
  }
  pendingInputs() {
    return [];
  }
  answerInput() {
    return false;
  }
  close() {
    return Promise.resolve();
  }
}

export class TrivialRuntime implements AgentRuntime {
  private sessions = 0;
  openSession(options: { contextId: string; cwd: string }): Promise<AgentSession> {
    this.sessions += 1;
    return Promise.resolve(new TrivialSession(`bench-${this.sessions}`, options.cwd));
  }
  info() {
    return { provider: "trivial", model: "trivial", demo: false };
  }
  close() {
    return Promise.resolve();
  }
}

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
