// Unary SendMessage/s and p50 latency over each custom JSON-RPC transport,
// against HTTP JSON-RPC on the same server code in the same run (the ratio is
// the figure). One server per transport in this process with the trivial
// runtime, driven by a2a-client's own channels at a fixed concurrency; stdio
// needs a child process and is left out. A private redis-server serves the
// redis-streams run.
//   npx tsx scripts/bench/transports.ts [--requests 2000] [--concurrency 16]
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startA2aServer } from "../../src/a2a/server.js";
import { GrpcJsonRpcChannel } from "../../src/a2a/client/bindings/grpc-jsonrpc.js";
import { HttpJsonRpcChannel } from "../../src/a2a/client/bindings/http-jsonrpc.js";
import type { JsonRpcChannel } from "../../src/a2a/client/bindings/jsonrpc.js";
import { RedisStreamsChannel } from "../../src/a2a/client/bindings/redis-streams.js";
import { UnixChannel } from "../../src/a2a/client/bindings/unix.js";
import { WebSocketChannel } from "../../src/a2a/client/bindings/websocket.js";
import { resolveSettings } from "../../src/a2a/config/server-settings.js";
import { createLogger } from "../../src/server/logger.js";
import { startRedis } from "../../test/fixtures/redis-server.js";
import { median, pool } from "./bench-clients.js";
import { TrivialRuntime } from "./trivial-runtime.js";

const arg = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const REQUESTS = arg("requests", 2000);
const CONCURRENCY = arg("concurrency", 16);

async function measure(
  name: string,
  file: Record<string, unknown>,
  channelFor: (url: string) => JsonRpcChannel,
): Promise<{ name: string; perSecond: number; p50: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-transports-"));
  const settings = resolveSettings(
    { port: 0, "persistence-dir": path.join(dir, "persist"), ...file },
    {},
    {},
  );
  const server = await startA2aServer(settings, {
    runtime: new TrivialRuntime(),
    logger: createLogger({ silent: true }),
    cwd: dir,
    env: {},
  });
  const channel = channelFor(server.url);
  const call = async (): Promise<number> => {
    const started = performance.now();
    const params = { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "hello" }] } };
    const reply = (await channel.request(
      { jsonrpc: "2.0", id: randomUUID(), method: "SendMessage", params },
      { timeoutMs: 30_000 },
    )) as { result?: unknown };
    if (!reply.result) throw new Error(`${name}: ${JSON.stringify(reply)}`);
    return performance.now() - started;
  };
  try {
    await pool(200, CONCURRENCY, call); // warm-up
    const { results, seconds } = await pool(REQUESTS, CONCURRENCY, call);
    return { name, perSecond: REQUESTS / seconds, p50: median(results) };
  } finally {
    await channel.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const redis = await startRedis();
try {
  const socketDir = mkdtempSync(path.join(os.tmpdir(), "bench-sock-"));
  const runs = [
    await measure("http jsonrpc", {}, (url) => new HttpJsonRpcChannel(url, { "A2A-Version": "1.0" })),
    await measure(
      "unix",
      { transport: "unix", "socket-path": path.join(socketDir, "a.sock") },
      (url) => new UnixChannel(url),
    ),
    await measure("websocket", { transport: "websocket" }, (url) => new WebSocketChannel(url, {})),
    await measure("grpc-jsonrpc", { transport: "grpc-jsonrpc" }, (url) => new GrpcJsonRpcChannel(url, {})),
    await measure(
      "redis-streams",
      { transport: "redis-streams", "redis-url": redis.url, "request-stream": "bench:req" },
      () => new RedisStreamsChannel(`${redis.url}?request-stream=bench:req&response-stream=bench:replies`),
    ),
  ];
  rmSync(socketDir, { recursive: true, force: true });
  const base = runs[0].perSecond;
  console.log(`unary SendMessage, ${REQUESTS} requests, concurrency ${CONCURRENCY}, one process`);
  for (const run of runs) {
    console.log(
      `${run.name.padEnd(14)} ${run.perSecond.toFixed(0).padStart(6)} req/s  p50 ${run.p50.toFixed(1).padStart(6)} ms  x${(run.perSecond / base).toFixed(2)} vs http jsonrpc`,
    );
  }
} finally {
  await redis.close();
}
