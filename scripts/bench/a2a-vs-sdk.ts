// Benchmark: iac-code's A2A server next to an @a2a-js/sdk 1.3 server (Express
// JSON-RPC + grpc-js, in-memory store) and a raw node:http server answering
// the same JSON-RPC shapes (the ceiling), all running the same trivial agent
// ("stream N": a task, WORKING, N text chunks, usage, the final text, end of
// turn). Each server runs in its own process, started here; this process is
// the load (node:http keep-alive connections). Every JSON-RPC target is
// measured in each round, rounds alternate, and every ratio is taken between
// figures of the same round (the machine may be shared: medians and the
// spread [min-max] over rounds are printed, with the load average).
//   1. Product path (the headline): `iac-code a2a` started by its CLI as a user
//      starts it (cli-peer.ts): IAC_CODE_PROVIDER=scripted with the trivial
//      script (trivial-script.ts), the full agent runtime, SQLite; vs the SDK and raw
//   2. Runtime CPU per trivial turn: the same CLI start with TrivialRuntime
//      preloaded in place of the agent runtime (cli-trivial-runtime.ts), A/B
//   3. The product path with store: redis (a private redis-server, AOF
//      everysec) vs SQLite
//   4. A2A layer: startA2aServer with TrivialRuntime (a2a-peers.ts; no CLI,
//      no agent runtime) vs the SDK and raw
//   5. gRPC (A2A layer), iac-code vs the SDK's gRPC server
//   6. with --tasks N (default 100000): RSS after creating N tasks, ListTasks
//      and GetTask latency, and start-up time with N stored tasks
//
// Our server runs the compiled dist/ (what `npm start` runs), rebuilt first;
// IAC_CODE_FROM_SOURCE=1 runs src/ through tsx instead.
//
//   npx tsx scripts/bench/a2a-vs-sdk.ts [--requests 2000] [--streams 200] [--chunks 50]
//     [--concurrency 16] [--rounds 5] [--warm 5000] [--tasks 100000] [--state-dir <dir>] [--sync-every-commit]
//     [--no-redis]
import { option, textOption } from "./bench-args.js";
import { execFileSync } from "node:child_process";
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Redis } from "ioredis";
import { startRedis, type TestRedis } from "../../test/fixtures/redis-server.js";
import {
  grpcDriver,
  jsonRpcCall,
  jsonRpcDriver,
  median,
  percentile,
  pool,
  type Driver,
} from "./bench-clients.js";
import { startCliPeer } from "./cli-peer.js";
import { startPeer, statCpuMs, type Peer } from "./peer-process.js";
import { writeTrivialScript } from "./trivial-script.js";

const REQUESTS = option("requests", 2000);
const STREAMS = option("streams", 200);
const CHUNKS = option("chunks", 50);
const CONCURRENCY = option("concurrency", 16);
const ROUNDS = option("rounds", 5);
const TASKS = option("tasks", 100_000);
/**
 * Unary requests per target before the rounds (and a 25th as many streams): the product path's CPU
 * per request falls from ~2,300 to ~900 us over its first ~5,000 requests while V8 compiles it
 * (the helper threads' share from ~860 to ~70 us), and the rounds measure a running server.
 */
const WARM = option("warm", 5000);
const SYNC = process.argv.includes("--sync-every-commit");
const STATE_BASE = textOption("state-dir") ?? os.tmpdir();
const EVENTS_PER_STREAM = CHUNKS + 5;

// ---- figures ------------------------------------------------------------------

interface Figures {
  /** Server CPU per unary request and per streamed event (µs): fair even when the machine is busy. */
  unaryCpuUs: number;
  eventCpuUs: number;
  /** The part of it on the main thread (the rest: libuv's pool doing file I/O and fsync, V8's helpers). */
  mainUnaryCpuUs: number;
  /** CPU of a helper process (the redis-server of store: redis), per request and per event (µs). */
  sideUnaryCpuUs: number;
  sideEventCpuUs: number;
  unaryRps: number;
  unaryP50: number;
  unaryP99: number;
  eventsPerSecond: number;
  firstEventP50: number;
}

interface Target {
  name: string;
  driver: Driver;
  peer: Peer;
  /** CPU (ms) of a process the server relies on, counted apart. */
  sideCpuMs?: () => number;
}

async function measure(t: Target): Promise<Figures> {
  const cpu = () => [t.peer.cpuMs(), t.sideCpuMs?.() ?? 0, t.peer.mainThreadCpuMs()];
  const [cpu0, side0, main0] = cpu();
  const unary = await pool(REQUESTS, CONCURRENCY, () => t.driver.unary());
  const [cpu1, side1, main1] = cpu();
  const streams = await pool(STREAMS, CONCURRENCY, () => t.driver.stream());
  const [cpu2, side2] = cpu();
  const events = streams.results.reduce((sum, s) => sum + s.events, 0);
  if (events !== STREAMS * EVENTS_PER_STREAM)
    throw new Error(`${t.name}: expected ${STREAMS * EVENTS_PER_STREAM} events, got ${events}`);
  return {
    unaryCpuUs: ((cpu1 - cpu0) * 1000) / REQUESTS,
    eventCpuUs: ((cpu2 - cpu1) * 1000) / events,
    mainUnaryCpuUs: ((main1 - main0) * 1000) / REQUESTS,
    sideUnaryCpuUs: ((side1 - side0) * 1000) / REQUESTS,
    sideEventCpuUs: ((side2 - side1) * 1000) / events,
    unaryRps: REQUESTS / unary.seconds,
    unaryP50: median(unary.results),
    unaryP99: percentile(unary.results, 99),
    eventsPerSecond: events / streams.seconds,
    firstEventP50: median(streams.results.map((s) => s.firstMs)),
  };
}

type Key = keyof Figures;
const pick = (runs: Figures[], key: Key) => runs.map((r) => r[key]);

/** "median [min-max]" of per-round values. */
function spread(values: number[], digits: number, unit = ""): string {
  const f = (n: number) => n.toFixed(digits);
  return `${f(median(values))}${unit} [${f(Math.min(...values))}-${f(Math.max(...values))}]`;
}

const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

function row(label: string, runs: Figures[]): void {
  const m = (key: Key) => median(pick(runs, key));
  const side =
    m("sideUnaryCpuUs") > 0 ? ` (+ redis-server ${m("sideUnaryCpuUs").toFixed(0)} us/request)` : "";
  console.log(
    `  ${label}\n` +
      `      unary ${spread(pick(runs, "unaryRps"), 0)} req/s, p50 ${m("unaryP50").toFixed(1)} ms, p99 ${m("unaryP99").toFixed(1)} ms; ` +
      `stream ${spread(pick(runs, "eventsPerSecond"), 0)} events/s, first event p50 ${spread(pick(runs, "firstEventP50"), 1, " ms")}; ` +
      `server CPU ${m("unaryCpuUs").toFixed(0)} us/request (main thread ${m("mainUnaryCpuUs").toFixed(0)})${side}, ` +
      `${m("eventCpuUs").toFixed(1)} us/event`,
  );
}

/** Per-round ratios a/b of one figure. */
const ratios = (a: Figures[], b: Figures[], key: Key) => a.map((f, i) => f[key] / b[i][key]);

/** One ratio line: median [min-max] over rounds, and, with a goal, PASS/MISS on the median (rounds that met it). */
function ratioLine(label: string, values: number[], goal?: { atLeast?: number; atMost?: number }): string {
  let verdict = "";
  if (goal) {
    const meets = (v: number) =>
      (goal.atLeast === undefined || v >= goal.atLeast) && (goal.atMost === undefined || v <= goal.atMost);
    const bound = goal.atLeast !== undefined ? `>= ${goal.atLeast}x` : `<= ${String(goal.atMost)}x`;
    verdict = ` (goal ${bound}) ${meets(median(values)) ? "PASS" : "MISS"}, ${values.filter(meets).length}/${values.length} rounds`;
  }
  return `    ${label.padEnd(44)} ${spread(values, 2, "x")}${verdict}`;
}

/** Warms every target, then ROUNDS rounds of every target (the order rotates each round). */
async function measureAll(targets: Target[]): Promise<Figures[][]> {
  for (const t of targets) {
    await t.driver.unary();
    await pool(WARM, CONCURRENCY, () => t.driver.unary());
    await pool(Math.ceil(WARM / 25), CONCURRENCY, () => t.driver.stream());
  }
  const runs = targets.map(() => [] as Figures[]);
  for (let round = 0; round < ROUNDS; round += 1) {
    const started = performance.now();
    for (let k = 0; k < targets.length; k += 1) {
      const i = (round + k) % targets.length;
      runs[i].push(await measure(targets[i]));
    }
    console.log(
      `  round ${round + 1}/${ROUNDS}: ${((performance.now() - started) / 1000).toFixed(0)} s, load average ${loadAverage()}`,
    );
  }
  return runs;
}

// ---- 1-4: JSON-RPC, product path and A2A layer ------------------------------------

async function jsonRpcSections(dir: string, layer: Peer, sdk: Peer, raw: Peer): Promise<void> {
  const script = writeTrivialScript(path.join(dir, "trivial-script.json"), [1, CHUNKS]);
  let redisServer: TestRedis | undefined;
  let redisPid: number | undefined;
  if (!process.argv.includes("--no-redis")) {
    redisServer = await startRedis({ appendOnly: true });
    const admin = new Redis(redisServer.url);
    redisPid = Number(/process_id:(\d+)/.exec(await admin.info("server"))?.[1]);
    admin.disconnect();
  }
  const [product, trivialCli, productRedis] = await Promise.all([
    startCliPeer({ dir: path.join(dir, "product"), script }),
    startCliPeer({ dir: path.join(dir, "product-trivial"), script, runtime: "trivial" }),
    redisServer
      ? startCliPeer({ dir: path.join(dir, "product-redis"), script, redisUrl: redisServer.url })
      : undefined,
  ]);
  const target = (name: string, peer: Peer, sideCpuMs?: () => number): Target => ({
    name,
    peer,
    driver: jsonRpcDriver(peer.jsonRpc, CHUNKS),
    sideCpuMs,
  });
  const targets = [
    target("iac-code product path (CLI, scripted, agent runtime, SQLite)", product),
    target("@a2a-js/sdk (in memory)", sdk),
    target("raw node:http (no store)", raw),
    target("iac-code CLI with TrivialRuntime (A/B)", trivialCli),
    target("iac-code A2A layer (startA2aServer + TrivialRuntime)", layer),
    ...(productRedis
      ? [target("iac-code product path, store: redis", productRedis, () => processCpuMs(redisPid!))]
      : []),
  ];
  try {
    console.log(
      `\nJSON-RPC over HTTP/1.1: ${targets.length} servers measured in each of ${ROUNDS} rounds (order rotating); ` +
        `figures: median [min-max] over rounds`,
    );
    const runs = await measureAll(targets);
    const [p, s, r, t, l, pr] = runs;

    console.log(
      "\n1. Product path: `node bin/iac-code.mjs a2a --port 0 --persistence-dir <tmp>` with IAC_CODE_PROVIDER=scripted, " +
        "IAC_CODE_SCRIPT=<trivial script>, IAC_CODE_CONFIG_DIR and HOME in a temp dir, logs to a file",
    );
    for (const i of [0, 1, 2]) row(targets[i].name, runs[i]);
    console.log("  ratios, same round (product/peer):");
    console.log(ratioLine("unary req/s, product/SDK", ratios(p, s, "unaryRps"), { atLeast: 1.2 }));
    console.log(ratioLine("unary req/s, product/raw", ratios(p, r, "unaryRps")));
    console.log(ratioLine("events/s, product/SDK", ratios(p, s, "eventsPerSecond"), { atLeast: 5 }));
    console.log(ratioLine("events/s, product/raw", ratios(p, r, "eventsPerSecond"), { atLeast: 0.3 }));
    console.log(ratioLine("first event p50, product/raw", ratios(p, r, "firstEventP50"), { atMost: 2 }));
    console.log(ratioLine("first event p50, product/SDK", ratios(p, s, "firstEventP50")));
    console.log(ratioLine("server CPU per request, product/SDK", ratios(p, s, "unaryCpuUs")));
    console.log(ratioLine("server CPU per request, product/raw", ratios(p, r, "unaryCpuUs")));
    console.log(ratioLine("server CPU per event, product/SDK", ratios(p, s, "eventCpuUs")));
    console.log(ratioLine("server CPU per event, product/raw", ratios(p, r, "eventCpuUs")));

    console.log("\n2. Runtime CPU per trivial turn: the same CLI start, agent runtime vs TrivialRuntime");
    row(targets[3].name, t);
    const perTurn = p.map((f, i) => f.unaryCpuUs - t[i].unaryCpuUs);
    const perTurnMain = p.map((f, i) => f.mainUnaryCpuUs - t[i].mainUnaryCpuUs);
    const perStreamTurn = p.map((f, i) => (f.eventCpuUs - t[i].eventCpuUs) * EVENTS_PER_STREAM);
    const meets = perTurn.filter((v) => v <= 300).length;
    console.log(
      `    unary turn: ${median(pick(p, "unaryCpuUs")).toFixed(0)} - ${median(pick(t, "unaryCpuUs")).toFixed(0)} us; ` +
        `runtime cost ${spread(perTurn, 0, " us")} per turn (goal <= 300 us) ${median(perTurn) <= 300 ? "PASS" : "MISS"}, ${meets}/${perTurn.length} rounds`,
    );
    console.log(
      `    of which on the main thread ${spread(perTurnMain, 0, " us")}, on the other threads (libuv's pool: file writes, fsync) ` +
        `${spread(
          perTurn.map((v, i) => v - perTurnMain[i]),
          0,
          " us",
        )}`,
    );
    console.log(
      `    streamed turn of ${CHUNKS} chunks: runtime cost ${spread(perStreamTurn, 0, " us")} per turn ` +
        `(${spread(ratios(p, t, "eventCpuUs"), 2, "x")} the CPU per event)`,
    );
    console.log(ratioLine("unary req/s, agent runtime/TrivialRuntime", ratios(p, t, "unaryRps")));
    console.log(ratioLine("events/s, agent runtime/TrivialRuntime", ratios(p, t, "eventsPerSecond")));
    const cliCost = t.map((f, i) => f.unaryCpuUs - l[i].unaryCpuUs);
    console.log(
      `    the CLI start itself (logger at info, process metrics) vs the A2A layer peer: ${spread(cliCost, 0, " us")} per request`,
    );

    if (pr) {
      console.log(
        "\n3. Product path with store: redis (private redis-server, AOF everysec) vs SQLite (section 1's server)",
      );
      row(targets[5].name, pr);
      console.log(ratioLine("unary req/s, redis/SQLite", ratios(pr, p, "unaryRps"), { atLeast: 0.8 }));
      console.log(ratioLine("events/s, redis/SQLite", ratios(pr, p, "eventsPerSecond"), { atLeast: 0.8 }));
      console.log(ratioLine("server CPU per request, redis/SQLite", ratios(pr, p, "unaryCpuUs")));
    } else console.log("\n3. store: redis skipped (--no-redis)");

    console.log(
      "\n4. A2A layer: startA2aServer with TrivialRuntime (no CLI, no agent runtime, logger silent)",
    );
    row(targets[4].name, l);
    console.log(ratioLine("unary req/s, layer/SDK", ratios(l, s, "unaryRps"), { atLeast: 1.5 }));
    console.log(ratioLine("unary req/s, layer/raw", ratios(l, r, "unaryRps")));
    console.log(ratioLine("events/s, layer/SDK", ratios(l, s, "eventsPerSecond"), { atLeast: 5 }));
    console.log(ratioLine("events/s, layer/raw", ratios(l, r, "eventsPerSecond"), { atLeast: 0.4 }));
    console.log(ratioLine("first event p50, layer/raw", ratios(l, r, "firstEventP50"), { atMost: 2 }));
    console.log(ratioLine("server CPU per request, layer/SDK", ratios(l, s, "unaryCpuUs")));
    console.log(ratioLine("server CPU per event, layer/SDK", ratios(l, s, "eventCpuUs")));
  } finally {
    for (const t of targets) t.driver.close();
    await Promise.all([product.stop(), trivialCli.stop(), productRedis?.stop()]);
    await redisServer?.close();
  }
}

/** CPU time (user + system, ms) of any process, from /proc. */
const processCpuMs = (pid: number) => statCpuMs(`/proc/${pid}/stat`);

// ---- 5: gRPC ----------------------------------------------------------------------

async function grpcSection(layer: Peer, sdk: Peer): Promise<void> {
  const targets: Target[] = [
    { name: "iac-code gRPC (A2A layer)", driver: grpcDriver(layer.grpc!, CHUNKS), peer: layer },
    { name: "@a2a-js/sdk gRPC", driver: grpcDriver(sdk.grpc!, CHUNKS), peer: sdk },
  ];
  try {
    console.log("\n5. gRPC (A2A layer: iac-code on its one port, the SDK on grpc-js)");
    const [og, sg] = await measureAll(targets);
    row(targets[0].name, og);
    row(targets[1].name, sg);
    console.log(ratioLine("unary req/s, iac-code/SDK", ratios(og, sg, "unaryRps"), { atLeast: 1 }));
    console.log(ratioLine("events/s, iac-code/SDK", ratios(og, sg, "eventsPerSecond")));
    console.log(ratioLine("first event p50, iac-code/SDK", ratios(og, sg, "firstEventP50")));
    console.log(ratioLine("server CPU per request, iac-code/SDK", ratios(og, sg, "unaryCpuUs")));
    console.log(ratioLine("server CPU per event, iac-code/SDK", ratios(og, sg, "eventCpuUs")));
  } finally {
    for (const t of targets) t.driver.close();
  }
}

// ---- 6: scale: N stored tasks ------------------------------------------------------

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

async function scale(dir: string): Promise<void> {
  const empty = await startPeer(["iac-code", dir, ...(SYNC ? ["--sync-every-commit"] : [])]);
  const emptyRss = empty.rssMb();
  const driver = jsonRpcDriver(empty.jsonRpc, 1);
  console.log(`\n6. ${TASKS} tasks in one persistence dir (A2A layer, JSON-RPC, concurrency 32)`);
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
    `A2A benchmark, ${os.cpus().length} CPUs, Node ${process.version}, load average ${loadAverage()}; ` +
      `each server in its own process; ${REQUESTS} unary and ${STREAMS} streams of ${EVENTS_PER_STREAM} events ` +
      `(${CHUNKS} chunks) per round, concurrency ${CONCURRENCY}, ${ROUNDS} alternating rounds; ` +
      `state in ${STATE_BASE}${SYNC ? ", sync-every-commit (A2A layer)" : ""}; ` +
      `iac-code from ${process.env.IAC_CODE_FROM_SOURCE === "1" ? "src/ (tsx)" : "dist/"}`,
  );
  const [layer, sdk, raw] = await Promise.all([
    startPeer(["iac-code", path.join(dir, "throughput"), ...(SYNC ? ["--sync-every-commit"] : [])]),
    startPeer(["sdk"]),
    startPeer(["raw"]),
  ]);
  try {
    await jsonRpcSections(dir, layer, sdk, raw);
    await grpcSection(layer, sdk);
  } finally {
    await Promise.all([layer.stop(), sdk.stop(), raw.stop()]);
  }
  if (TASKS > 0) await scale(path.join(dir, "scale"));
  console.log(`\nload average at the end: ${loadAverage()}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
