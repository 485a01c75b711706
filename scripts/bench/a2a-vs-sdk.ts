// Benchmark: unary SendMessage requests/s and streamed events/s of our A2A
// server next to a minimal @a2a-js/sdk Express server, both running the same
// trivial agent (a task, WORKING, N text chunks, the final text, end of turn
// in INPUT_REQUIRED). Loopback only, bounded loops; prints figures and ratios.
//
//   npx tsx scripts/bench/a2a-vs-sdk.ts [--requests 1000] [--streams 100] [--chunks 50] [--concurrency 16] [--rounds 3]
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import express from "express";
import { AgentCard, Message, Task, TaskStatusUpdateEvent } from "@a2a-js/sdk";
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from "@a2a-js/sdk/server";
import { jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import { startA2aServer } from "../../src/a2a/server.js";
import type { AgentRuntime, AgentSession, RuntimeEvent, TurnInput } from "../../src/runtime/seam.js";
import { resolveSettings } from "../../src/server/config.js";
import { createLogger } from "../../src/server/logger.js";

function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
  return value;
}

const REQUESTS = arg("requests", 1000);
const STREAMS = arg("streams", 100);
const CHUNKS = arg("chunks", 50);
const CONCURRENCY = arg("concurrency", 16);
const UNARY_CHUNKS = 3;
/** The trivial agent's text chunk. */
const chunkText = (i: number) => `chunk ${i} `;

// ---- our server: the trivial agent behind the runtime seam -----------------

class TrivialSession implements AgentSession {
  constructor(
    readonly sessionId: string,
    readonly cwd: string,
  ) {}
  // eslint-disable-next-line @typescript-eslint/require-await -- an async generator without awaits is the simplest stream
  async *runTurn(input: TurnInput): AsyncIterable<RuntimeEvent> {
    const chunks = input.text.startsWith("stream") ? CHUNKS : UNARY_CHUNKS;
    let text = "";
    for (let i = 0; i < chunks; i += 1) {
      text += chunkText(i);
      yield { type: "text_delta", messageId: "m", text: chunkText(i) };
    }
    yield { type: "message_end", messageId: "m", stopReason: "end_turn", text };
  }

  async *resumeTurn(): AsyncIterable<RuntimeEvent> {}
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

const trivialRuntime: AgentRuntime = {
  openSession: ({ contextId, cwd }) => Promise.resolve(new TrivialSession(`s-${contextId}`, cwd)),
  info: () => ({ provider: "bench", model: "trivial", demo: false }),
  close: () => Promise.resolve(),
};

async function startOurs(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const settings = resolveSettings({ port: 0, "persistence-dir": path.join(dir, "persist") }, {}, {});
  const server = await startA2aServer(settings, {
    runtime: trivialRuntime,
    logger: createLogger({ silent: true }),
    cwd: dir,
    env: {},
  });
  return { url: server.url, close: () => server.close() };
}

// ---- the SDK server: the same agent as an AgentExecutor ----------------------

const sdkExecutor: AgentExecutor = {
  // eslint-disable-next-line @typescript-eslint/require-await -- the SDK's executor contract is async
  execute: async (ctx, bus) => {
    const { taskId, contextId } = ctx;
    const now = () => new Date().toISOString();
    const status = (state: string, text?: string) =>
      AgentEvent.statusUpdate(
        TaskStatusUpdateEvent.fromJSON({
          taskId,
          contextId,
          status: {
            state,
            timestamp: now(),
            ...(text === undefined
              ? {}
              : {
                  message: { messageId: `${taskId}-${Math.random()}`, role: "ROLE_AGENT", parts: [{ text }] },
                }),
          },
        }),
      );
    bus.publish(
      AgentEvent.task(
        Task.fromJSON({
          id: taskId,
          contextId,
          status: { state: "TASK_STATE_SUBMITTED", timestamp: now() },
          history: [Message.toJSON(ctx.userMessage)],
        }),
      ),
    );
    bus.publish(status("TASK_STATE_WORKING"));
    const first = ctx.userMessage.parts[0]?.content;
    const streaming = first?.$case === "text" && first.value.startsWith("stream");
    const chunks = streaming ? CHUNKS : UNARY_CHUNKS;
    let text = "";
    for (let i = 0; i < chunks; i += 1) {
      text += chunkText(i);
      bus.publish(status("TASK_STATE_WORKING", chunkText(i)));
    }
    bus.publish(status("TASK_STATE_WORKING", text));
    bus.publish(status("TASK_STATE_INPUT_REQUIRED"));
    bus.finished();
  },
  // The benchmark never cancels.
  cancelTask: () => Promise.resolve(),
};

async function startSdk(): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  let url = "";
  const card = () =>
    AgentCard.fromJSON({
      name: "sdk-bench",
      description: "trivial agent",
      version: "1.0.0",
      supportedInterfaces: [{ url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
      capabilities: { streaming: true },
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain"],
      skills: [{ id: "echo", name: "echo", description: "echo", tags: ["bench"] }],
    });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const handler = new DefaultRequestHandler(card(), new InMemoryTaskStore(), sdkExecutor);
  app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---- the load: one client for both -----------------------------------------

let nextId = 0;
function body(method: string, text: string): string {
  nextId += 1;
  return JSON.stringify({
    jsonrpc: "2.0",
    id: nextId,
    method,
    params: { message: { messageId: `bench-${nextId}`, role: "ROLE_USER", parts: [{ text }] } },
  });
}

const HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };

async function unaryOnce(url: string): Promise<void> {
  const res = await fetch(url, { method: "POST", headers: HEADERS, body: body("SendMessage", "hello") });
  const reply = (await res.json()) as { result?: { task?: { status?: { state?: string } } } };
  if (reply.result?.task?.status?.state !== "TASK_STATE_INPUT_REQUIRED") {
    throw new Error(`unexpected unary reply: ${JSON.stringify(reply).slice(0, 300)}`);
  }
}

async function streamOnce(url: string): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: { ...HEADERS, Accept: "text/event-stream" },
    body: body("SendStreamingMessage", "stream please"),
  });
  const text = await res.text();
  const events = text.split("\n\n").filter((frame) => frame.startsWith("data:")).length;
  if (events !== CHUNKS + 4)
    throw new Error(`expected ${CHUNKS + 4} events, got ${events}: ${text.slice(0, 300)}`);
  return events;
}

async function pool<T>(total: number, concurrency: number, job: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let started = 0;
  const worker = async () => {
    while (started < total) {
      started += 1;
      results.push(await job());
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  return results;
}

const ROUNDS = arg("rounds", 3);

async function timed(total: number, job: () => Promise<number>): Promise<number> {
  const start = process.hrtime.bigint();
  const counts = await pool(total, CONCURRENCY, job);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return counts.reduce((a, b) => a + b, 0) / seconds;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const dir = mkdtempSync(path.join(os.tmpdir(), "iac-a2a-bench-"));
try {
  console.log(
    `A2A JSON-RPC benchmark on ${os.cpus().length} CPU(s), Node ${process.version}: ${REQUESTS} SendMessage and ` +
      `${STREAMS} SendStreamingMessage x ${CHUNKS + 4} events per round, concurrency ${CONCURRENCY}, ` +
      `${ROUNDS} alternating rounds (medians)`,
  );
  const servers = { ours: await startOurs(dir), sdk: await startSdk() };
  const unary: Record<keyof typeof servers, number[]> = { ours: [], sdk: [] };
  const stream: Record<keyof typeof servers, number[]> = { ours: [], sdk: [] };
  try {
    for (const name of ["ours", "sdk"] as const) {
      // Warm-up: JIT and connection pool.
      await pool(Math.min(100, REQUESTS), CONCURRENCY, () => unaryOnce(servers[name].url));
      await pool(Math.min(10, STREAMS), CONCURRENCY, () => streamOnce(servers[name].url));
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const name of ["ours", "sdk"] as const) {
        const url = servers[name].url;
        unary[name].push(await timed(REQUESTS, () => unaryOnce(url).then(() => 1)));
        stream[name].push(await timed(STREAMS, () => streamOnce(url)));
      }
    }
  } finally {
    await servers.ours.close();
    await servers.sdk.close();
  }
  const line = (label: string, name: "ours" | "sdk") =>
    console.log(
      `${label.padEnd(22)} unary ${median(unary[name]).toFixed(0).padStart(7)} req/s   stream ${median(
        stream[name],
      )
        .toFixed(0)
        .padStart(8)} events/s   (rounds: ${unary[name].map((v) => v.toFixed(0)).join("/")} req/s, ${stream[
        name
      ]
        .map((v) => v.toFixed(0))
        .join("/")} events/s)`,
    );
  line("iac-code (file store)", "ours");
  line("@a2a-js/sdk express", "sdk");
  console.log(
    `ratio iac-code / sdk: unary ${(median(unary.ours) / median(unary.sdk)).toFixed(2)}x, ` +
      `stream ${(median(stream.ours) / median(stream.sdk)).toFixed(2)}x`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
