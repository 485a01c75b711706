// The trivial agent of the A2A benchmarks, as an iac-code AgentRuntime: a turn
// yields a message start, one text chunk per "chunk" ("stream N" or "chunks N"
// in the prompt: N chunks, else one), usage, and ends (INPUT_REQUIRED on our
// side). trivial-script.ts writes the same agent as a scripted-provider script.
// Kept apart from the SDK's executor so that our server's process loads no SDK.
import type { AgentRuntime, AgentSession, RuntimeEvent, TurnInput } from "../../src/runtime/seam.js";

/** "stream N" (or "chunks N") streams N chunks; anything else answers in one. */
export function chunksOf(prompt: string): string[] {
  const count = Number(/^(?:stream|chunks)\s+(\d+)/.exec(prompt.trim())?.[1] ?? "1");
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
