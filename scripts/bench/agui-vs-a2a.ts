// Benchmark: AG-UI events/s through the adapter versus calling the A2A server
// directly, with the same scripted agent and the same runs, in one process on
// loopback. Prints figures and ratios; bounded loops. Usage:
//   npx tsx scripts/bench/agui-vs-a2a.ts [runs=30] [deltas=200]
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startA2aServer } from "../../src/a2a/server.js";
import { resolveSettings } from "../../src/server/config.js";
import { createLogger } from "../../src/server/logger.js";
import { startAguiServer } from "../../src/agui/server.js";
import type { AgentRuntime, AgentSession, RuntimeEvent, TurnInput } from "../../src/runtime/seam.js";

const RUNS = Number(process.argv[2] ?? 30);
const DELTAS = Number(process.argv[3] ?? 200);

/** The scripted agent: DELTAS text chunks and a usage record per turn. */
class BenchRuntime implements AgentRuntime {
  openSession(o: { contextId: string; cwd: string }): Promise<AgentSession> {
    const session: AgentSession = {
      sessionId: `bench-${o.contextId}`,
      cwd: o.cwd,
      // eslint-disable-next-line @typescript-eslint/require-await -- a scripted turn has nothing to wait for
      async *runTurn(_input: TurnInput): AsyncIterable<RuntimeEvent> {
        yield { type: "message_start", messageId: "m" };
        for (let i = 0; i < DELTAS; i++) yield { type: "text_delta", messageId: "m", text: `chunk ${i} ` };
        yield {
          type: "message_end",
          messageId: "m",
          stopReason: "end_turn",
          text: "",
          usage: { inputTokens: 1, outputTokens: DELTAS, totalTokens: DELTAS + 1 },
        };
      },
      async *resumeTurn(): AsyncIterable<RuntimeEvent> {},
      pendingInputs: () => [],
      answerInput: () => false,
      close: () => Promise.resolve(),
    };
    return Promise.resolve(session);
  }
  info() {
    return { provider: "bench", model: "bench", demo: false };
  }
  close() {
    return Promise.resolve();
  }
}

async function countSse(res: Response): Promise<number> {
  const text = await res.text();
  return text.split("\n\n").filter((r) => r.startsWith("data:")).length;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "agui-bench-"));
  const workspace = path.join(dir, "ws");
  mkdirSync(workspace);
  const token = "bench-token";
  const a2a = await startA2aServer(
    resolveSettings({ port: 0, "persistence-dir": path.join(dir, "a2a"), token }, {}, {}),
    {
      runtime: new BenchRuntime(),
      logger: createLogger({ silent: true }),
      cwd: workspace,
      env: { IACCODE_A2A_ALLOWED_CWDS: dir },
    },
  );
  const agui = await startAguiServer({
    host: "127.0.0.1", port: 0, a2aUrl: a2a.url, a2aToken: token, stateDir: path.join(dir, "state"),
    idleShutdown: 0, interruptTtl: 540, allowedCwds: [dir], debug: false, logStdout: false,
  }); // prettier-ignore

  const direct = async (i: number) =>
    countSse(
      await fetch(a2a.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "A2A-Version": "1.0",
          Authorization: `Bearer ${token}`,
          Accept: "text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0", id: i, method: "SendStreamingMessage",
          params: { message: { messageId: `m-${i}`, role: "ROLE_USER", parts: [{ text: "go" }], contextId: `bench-direct-${i}`, metadata: { iac_code: { cwd: workspace } } } },
        }), // prettier-ignore
      }),
    );
  const viaAgui = async (i: number) =>
    countSse(
      await fetch(agui.url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify({
          threadId: `bench-thread-${i}`, runId: `run-${i}`, state: {}, tools: [], context: [],
          messages: [{ id: `u-${i}`, role: "user", content: "go" }],
          forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "bench", cwd: workspace } },
        }), // prettier-ignore
      }),
    );

  const measure = async (name: string, fn: (i: number) => Promise<number>) => {
    await fn(-1); // warm-up
    let events = 0;
    const t0 = performance.now();
    for (let i = 0; i < RUNS; i++) events += await fn(i);
    const ms = performance.now() - t0;
    return { name, events, ms, eventsPerSec: (events / ms) * 1000, msPerRun: ms / RUNS };
  };
  try {
    const a = await measure("A2A direct (SendStreamingMessage)", direct);
    const g = await measure("AG-UI via adapter (POST /)", viaAgui);
    const addedPerRunMs = g.msPerRun - a.msPerRun;
    const aguiPerRun = g.events / RUNS;
    console.log(`runs=${RUNS} text deltas per run=${DELTAS} (loopback, one process, sequential runs)`);
    for (const r of [a, g]) {
      console.log(
        `${r.name.padEnd(36)} events=${r.events} time=${r.ms.toFixed(0)} ms  ${r.eventsPerSec.toFixed(0)} events/s  ${r.msPerRun.toFixed(2)} ms/run`,
      );
    }
    console.log(`AG-UI events per run: ${aguiPerRun.toFixed(0)} (A2A: ${(a.events / RUNS).toFixed(0)})`);
    console.log(`ratio AG-UI/A2A events/s: ${(g.eventsPerSec / a.eventsPerSec).toFixed(2)}`);
    console.log(`ratio AG-UI/A2A time per run: ${(g.msPerRun / a.msPerRun).toFixed(2)}`);
    console.log(
      `added latency per AG-UI event: ${((addedPerRunMs / aguiPerRun) * 1000).toFixed(1)} µs (added ${addedPerRunMs.toFixed(2)} ms per run)`,
    );
  } finally {
    await agui.close();
    await a2a.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
