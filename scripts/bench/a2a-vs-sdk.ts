// Benchmark: iac-code's A2A server (durable state on) next to an @a2a-js/sdk
// 1.3 server (Express JSON-RPC + grpc-js, in-memory store) and a raw node:http
// server answering the same JSON-RPC shapes (the ceiling), all running the
// same trivial agent ("chunks N": a task, WORKING, N text chunks, usage, the
// final text, end of turn). Each server runs in its own process, started
// here; this process is the load. Prints every figure and its ratio:
//   1. JSON-RPC unary SendMessage/s (p50/p99), streamed events/s, first-event latency
//   2. gRPC unary and streaming, iac-code vs the SDK's gRPC server
//   3. with --tasks N (default 100000): RSS after creating N tasks, ListTasks
//      and GetTask latency, and start-up time with N stored tasks
//
// Our server runs the compiled dist/ (what `npm start` runs), rebuilt first;
// IAC_CODE_FROM_SOURCE=1 runs src/ through tsx instead.
//
//   npx tsx scripts/bench/a2a-vs-sdk.ts [--requests 2000] [--streams 200] [--chunks 50]
//     [--concurrency 16] [--rounds 3] [--tasks 100000] [--state-dir <dir>] [--sync-every-commit]
import { execFileSync } from "node:child_process";
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import {
  grpcDriver,
  jsonRpcCall,
  jsonRpcDriver,
  median,
  percentile,
  pool,
  type Driver,
} from "./bench-clients.js";
import { startPeer, type Peer } from "./peer-process.js";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be a non-negative integer`);
  return value;
}
const textOption = (name: string): string | undefined => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
};

const REQUESTS = option("requests", 2000);
const STREAMS = option("streams", 200);
const CHUNKS = option("chunks", 50);
const CONCURRENCY = option("concurrency", 16);
const ROUNDS = option("rounds", 3);
const TASKS = option("tasks", 100_000);
const SYNC = process.argv.includes("--sync-every-commit");
const STATE_BASE = textOption("state-dir") ?? os.tmpdir();
const EVENTS_PER_STREAM = CHUNKS + 5;

// ---- figures ------------------------------------------------------------------

interface Figures {
  /** Server CPU per unary request and per streamed event (µs): fair even when the machine is busy. */
  unaryCpuUs: number;
  eventCpuUs: number;
  unaryRps: number;
  unaryP50: number;
  unaryP99: number;
  eventsPerSecond: number;
  firstEventP50: number;
}

async function measure(driver: Driver, cpuMs: () => number): Promise<Figures> {
  const cpu0 = cpuMs();
  const unary = await pool(REQUESTS, CONCURRENCY, () => driver.unary());
  const cpu1 = cpuMs();
  const streams = await pool(STREAMS, CONCURRENCY, () => driver.stream());
  const cpu2 = cpuMs();
  const events = streams.results.reduce((sum, s) => sum + s.events, 0);
  if (events !== STREAMS * EVENTS_PER_STREAM)
    throw new Error(`expected ${STREAMS * EVENTS_PER_STREAM} events, got ${events}`);
  return {
    unaryCpuUs: ((cpu1 - cpu0) * 1000) / REQUESTS,
    eventCpuUs: ((cpu2 - cpu1) * 1000) / events,
    unaryRps: REQUESTS / unary.seconds,
    unaryP50: median(unary.results),
    unaryP99: percentile(unary.results, 99),
    eventsPerSecond: events / streams.seconds,
    firstEventP50: median(streams.results.map((s) => s.firstMs)),
  };
}

function medianFigures(runs: Figures[]): Figures {
  const pick = (key: keyof Figures) => median(runs.map((r) => r[key]));
  return {
    unaryCpuUs: pick("unaryCpuUs"),
    eventCpuUs: pick("eventCpuUs"),
    unaryRps: pick("unaryRps"),
    unaryP50: pick("unaryP50"),
    unaryP99: pick("unaryP99"),
    eventsPerSecond: pick("eventsPerSecond"),
    firstEventP50: pick("firstEventP50"),
  };
}

const f0 = (n: number) => n.toFixed(0).padStart(7);
const f1 = (n: number) => n.toFixed(1).padStart(6);
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

function row(label: string, f: Figures): void {
  console.log(
    `${label.padEnd(26)} unary ${f0(f.unaryRps)} req/s (p50 ${f1(f.unaryP50)} ms, p99 ${f1(f.unaryP99)} ms)   ` +
      `stream ${f0(f.eventsPerSecond)} events/s (first event p50 ${f1(f.firstEventP50)} ms)   ` +
      `server CPU ${f0(f.unaryCpuUs)} us/request, ${f1(f.eventCpuUs)} us/event`,
  );
}

async function compare(
  title: string,
  targets: Array<{ name: string; driver: Driver; peer: Peer }>,
): Promise<Figures[]> {
  console.log(`\n${title}`);
  for (const t of targets) {
    await t.driver.unary();
    await pool(Math.min(200, REQUESTS), CONCURRENCY, () => t.driver.unary());
    await pool(Math.min(20, STREAMS), CONCURRENCY, () => t.driver.stream());
  }
  const runs = targets.map(() => [] as Figures[]);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [i, t] of targets.entries()) runs[i].push(await measure(t.driver, () => t.peer.cpuMs()));
  }
  const figures = runs.map(medianFigures);
  targets.forEach((t, i) => row(t.name, figures[i]));
  return figures;
}

// ---- scale: N stored tasks ------------------------------------------------------

async function scale(dir: string): Promise<void> {
  const empty = await startPeer(["iac-code", dir, ...(SYNC ? ["--sync-every-commit"] : [])]);
  const emptyRss = empty.rssMb();
  const driver = jsonRpcDriver(empty.jsonRpc, 1);
  console.log(`\n3. ${TASKS} tasks in one persistence dir (iac-code, JSON-RPC, concurrency 32)`);
  const fill = await pool(TASKS, 32, () => driver.unary());
  console.log(
    `created ${TASKS} tasks in ${fill.seconds.toFixed(1)} s (${(TASKS / fill.seconds).toFixed(0)} SendMessage/s sustained)`,
  );
  const rss = empty.rssMb();
  console.log(
    `RSS after creating them: ${rss.toFixed(0)} MB (empty server: ${emptyRss.toFixed(0)} MB; goal <= 200 MB)`,
  );

  const agent = new http.Agent({ keepAlive: true });
  const post = async (method: string, params: object) => {
    const started = performance.now();
    const result = await jsonRpcCall(agent, empty.jsonRpc, method, params);
    return { ms: performance.now() - started, result };
  };
  const first = await post("ListTasks", {});
  const tasks = first.result.tasks as Array<{ id: string; contextId: string }>;
  const latencies = async (method: string, params: () => object, n = 300) => {
    const runs: number[] = [];
    for (let i = 0; i < n; i += 1) runs.push((await post(method, params())).ms);
    return `p50 ${median(runs).toFixed(2)} ms, p99 ${percentile(runs, 99).toFixed(2)} ms`;
  };
  const token = first.result.nextPageToken as string;
  console.log(
    `ListTasks, first page of 50 (totalSize ${String(first.result.totalSize)}): ${await latencies("ListTasks", () => ({}))} (goal p50 <= 5 ms)`,
  );
  console.log(
    `ListTasks, second page (keyset cursor):  ${await latencies("ListTasks", () => ({ pageToken: token }))}`,
  );
  console.log(
    `ListTasks, status filter:                ${await latencies("ListTasks", () => ({ status: "TASK_STATE_INPUT_REQUIRED" }))}`,
  );
  console.log(
    `ListTasks, contextId filter:             ${await latencies("ListTasks", () => ({ contextId: tasks[7].contextId }))}`,
  );
  console.log(
    `GetTask:                                 ${await latencies("GetTask", () => ({ id: tasks[3].id }))}`,
  );
  agent.destroy();
  await empty.stop();

  const restarted = await startPeer(["iac-code", dir]);
  console.log(
    `start-up with ${TASKS} stored tasks: ${restarted.startMs.toFixed(0)} ms in startA2aServer ` +
      `(empty dir: ${empty.startMs.toFixed(0)} ms, ${ratio(restarted.startMs, empty.startMs)}; goal <= 1000 ms); ` +
      `spawn to ready ${restarted.spawnToReadyMs.toFixed(0)} ms (empty: ${empty.spawnToReadyMs.toFixed(0)} ms)`,
  );
  console.log(`RSS after the restart: ${restarted.rssMb().toFixed(0)} MB`);
  await restarted.stop();
}

// ---- main -----------------------------------------------------------------------

if (process.env.IAC_CODE_FROM_SOURCE !== "1") {
  execFileSync(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "..", "build.ts")], {
    stdio: "inherit",
  });
}
const dir = mkdtempSync(path.join(STATE_BASE, "iac-a2a-bench-"));
try {
  console.log(
    `A2A benchmark, ${os.cpus().length} CPUs, Node ${process.version}; each server in its own process; ` +
      `${REQUESTS} unary and ${STREAMS} streams of ${EVENTS_PER_STREAM} events per round, concurrency ${CONCURRENCY}, ` +
      `${ROUNDS} alternating rounds (medians); state in ${STATE_BASE}${SYNC ? ", sync-every-commit" : ""}; ` +
      `iac-code from ${process.env.IAC_CODE_FROM_SOURCE === "1" ? "src/ (tsx)" : "dist/"}`,
  );
  const [ours, sdk, raw] = await Promise.all([
    startPeer(["iac-code", path.join(dir, "throughput"), ...(SYNC ? ["--sync-every-commit"] : [])]),
    startPeer(["sdk"]),
    startPeer(["raw"]),
  ]);
  try {
    const drivers = [ours, sdk, raw].map((peer) => jsonRpcDriver(peer.jsonRpc, CHUNKS));
    const [o, s, r] = await compare("1. JSON-RPC over HTTP/1.1", [
      { name: "iac-code (durable state)", driver: drivers[0], peer: ours },
      { name: "@a2a-js/sdk (in memory)", driver: drivers[1], peer: sdk },
      { name: "raw node:http (no store)", driver: drivers[2], peer: raw },
    ]);
    console.log(
      `ratios: unary iac-code/sdk ${ratio(o.unaryRps, s.unaryRps)} (goal >= 1.5x), iac-code/raw ${ratio(o.unaryRps, r.unaryRps)}; ` +
        `stream iac-code/sdk ${ratio(o.eventsPerSecond, s.eventsPerSecond)} (goal >= 5x), ` +
        `iac-code/raw ${ratio(o.eventsPerSecond, r.eventsPerSecond)} (goal >= 0.40x); ` +
        `first event iac-code/raw ${ratio(o.firstEventP50, r.firstEventP50)} (goal <= 2x), iac-code/sdk ${ratio(o.firstEventP50, s.firstEventP50)}`,
    );
    console.log(
      `server CPU ratios (lower is cheaper): per request iac-code/sdk ${ratio(o.unaryCpuUs, s.unaryCpuUs)}, ` +
        `iac-code/raw ${ratio(o.unaryCpuUs, r.unaryCpuUs)}; per event iac-code/sdk ${ratio(o.eventCpuUs, s.eventCpuUs)}, ` +
        `iac-code/raw ${ratio(o.eventCpuUs, r.eventCpuUs)}`,
    );
    const grpcDrivers = [grpcDriver(ours.grpc!, CHUNKS), grpcDriver(sdk.grpc!, CHUNKS)];
    try {
      const [og, sg] = await compare("2. gRPC (iac-code on its one port, the SDK on grpc-js)", [
        { name: "iac-code gRPC", driver: grpcDrivers[0], peer: ours },
        { name: "@a2a-js/sdk gRPC", driver: grpcDrivers[1], peer: sdk },
      ]);
      console.log(
        `ratios: unary iac-code/sdk ${ratio(og.unaryRps, sg.unaryRps)} (goal >= 1x); ` +
          `stream ${ratio(og.eventsPerSecond, sg.eventsPerSecond)}; first event ${ratio(og.firstEventP50, sg.firstEventP50)}; ` +
          `iac-code gRPC/JSON-RPC unary ${ratio(og.unaryRps, o.unaryRps)}; ` +
          `server CPU per request iac-code/sdk ${ratio(og.unaryCpuUs, sg.unaryCpuUs)}, per event ${ratio(og.eventCpuUs, sg.eventCpuUs)}`,
      );
    } finally {
      for (const d of grpcDrivers) d.close();
    }
  } finally {
    await Promise.all([ours.stop(), sdk.stop(), raw.stop()]);
  }
  if (TASKS > 0) await scale(path.join(dir, "scale"));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
