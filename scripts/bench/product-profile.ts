// Where the product path's CPU goes: `iac-code a2a` started by its CLI as in
// a2a-vs-sdk.ts section 1 (scripted trivial script, full agent runtime), under
// the same load (node:http keep-alive, 16 connections), with
// node --cpu-prof. The profile is cut to the unary phase and to the
// streaming phase (the monotonic clock is shared by the processes) and each
// is reported by function, module, iac-code module and directory
// (cpu-profile.ts), scaled to the main thread's measured CPU per request / per
// event. The same CLI start on TrivialRuntime (cli-trivial-runtime.ts) is
// profiled next under the same load, and the two are subtracted row by row:
// what the agent runtime adds per turn, and where.
// With --compare-dir <dir> (e.g. /dev/shm, a tmpfs: fsync costs nothing
// there), it first runs an A/B without the profiler: the same server with its
// persistence dir, config dir and HOME under --state-dir and under <dir>,
// alternating rounds, CPU per request and req/s side by side. With
// --syscalls <n> it counts the syscalls of n unary requests on each runtime
// (strace -f -c attached to the running server, every thread).
//
//   npx tsx scripts/bench/product-profile.ts [--requests 3000] [--streams 200] [--chunks 50]
//     [--concurrency 16] [--warm 5000] [--state-dir <dir>] [--compare-dir /dev/shm] [--rounds 5] [--redis] [--syscalls 500] [--no-profile]
//     [--top 15] [--keep <prefix>] (keeps <prefix>-agent.cpuprofile and <prefix>-trivial.cpuprofile)
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startRedis, type TestRedis } from "../../test/fixtures/redis-server.js";
import { jsonRpcDriver, median, pool, type Driver } from "./bench-clients.js";
import { startCliPeer } from "./cli-peer.js";
import { analyseProfile, formatReport, TABLES, type CpuProfile, type ProfileReport } from "./cpu-profile.js";
import type { Peer } from "./peer-process.js";
import { writeTrivialScript } from "./trivial-script.js";
import { option, textOption } from "./bench-args.js";

const REQUESTS = option("requests", 3000);
const STREAMS = option("streams", 200);
const CHUNKS = option("chunks", 50);
const CONCURRENCY = option("concurrency", 16);
const ROUNDS = option("rounds", 5);
const TOP = option("top", 15);
/** Unary requests before measuring (and a 25th as many streams): V8 has compiled the path by then (a2a-vs-sdk.ts). */
const WARM = option("warm", 5000);
const STATE_BASE = textOption("state-dir") ?? os.tmpdir();
const COMPARE_DIR = textOption("compare-dir");
const KEEP = textOption("keep");
const REDIS = process.argv.includes("--redis");
/** With --syscalls: strace the unary phase of both runtimes (no profiler) over this many requests. */
const SYSCALL_REQUESTS = option("syscalls", 0);
const EVENTS_PER_STREAM = CHUNKS + 5;
const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

/** The monotonic clock the profile's timestamps use, in µs. */
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

async function warm(driver: Driver): Promise<void> {
  await pool(WARM, CONCURRENCY, () => driver.unary());
  await pool(Math.ceil(WARM / 25), CONCURRENCY, () => driver.stream());
}

/** A/B of where the server's files live (fsync and file system costs), no profiler. */
async function compareDirs(script: string, redisUrl?: string): Promise<void> {
  const bases = [STATE_BASE, COMPARE_DIR!];
  const dirs = bases.map((base) => mkdtempSync(path.join(base, "iac-product-ab-")));
  const peers: Peer[] = [];
  try {
    for (const dir of dirs) peers.push(await startCliPeer({ dir, script, redisUrl }));
    const drivers = peers.map((p) => jsonRpcDriver(p.jsonRpc, CHUNKS));
    for (const d of drivers) await warm(d);
    const runs = bases.map(
      () => [] as Array<{ cpuUs: number; rps: number; p50: number; eventCpuUs: number }>,
    );
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let k = 0; k < bases.length; k += 1) {
        const i = (round + k) % bases.length;
        const cpu0 = peers[i].cpuMs();
        const unary = await pool(REQUESTS, CONCURRENCY, () => drivers[i].unary());
        const cpu1 = peers[i].cpuMs();
        await pool(STREAMS, CONCURRENCY, () => drivers[i].stream());
        const cpu2 = peers[i].cpuMs();
        runs[i].push({
          cpuUs: ((cpu1 - cpu0) * 1000) / REQUESTS,
          rps: REQUESTS / unary.seconds,
          p50: median(unary.results),
          eventCpuUs: ((cpu2 - cpu1) * 1000) / (STREAMS * EVENTS_PER_STREAM),
        });
      }
    }
    console.log(
      `\nA/B: state, config dir and HOME under ${bases.join(" vs ")} (${ROUNDS} alternating rounds; median [min-max]; load average ${loadAverage()})`,
    );
    const spread = (values: number[], digits: number) =>
      `${median(values).toFixed(digits)} [${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)}]`;
    for (const [i, base] of bases.entries()) {
      const r = runs[i];
      console.log(
        `  ${base.padEnd(12)} unary ${spread(
          r.map((x) => x.rps),
          0,
        )} req/s, p50 ${spread(
          r.map((x) => x.p50),
          1,
        )} ms, server CPU ${spread(
          r.map((x) => x.cpuUs),
          0,
        )} us/request, ${spread(
          r.map((x) => x.eventCpuUs),
          1,
        )} us/event`,
      );
    }
    const cpuRatio = runs[1].map((x, i) => x.cpuUs / runs[0][i].cpuUs);
    const rpsRatio = runs[1].map((x, i) => x.rps / runs[0][i].rps);
    console.log(
      `  ${bases[1]}/${bases[0]}: CPU per request ${spread(cpuRatio, 2)}x, unary req/s ${spread(rpsRatio, 2)}x`,
    );
    for (const d of drivers) d.close();
  } finally {
    await Promise.all(peers.map((p) => p.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

interface Profiled {
  unary: ProfileReport;
  stream: ProfileReport;
  /** Main-thread CPU over each phase (µs), the profiles' scale. */
  unaryMainUs: number;
  streamMainUs: number;
  events: number;
}

/** Runs the load on a CLI-started server under --cpu-prof; the profile cut into its unary and streaming phases. */
async function profiled(
  dir: string,
  script: string,
  runtime: "agent" | "trivial",
  redisUrl?: string,
): Promise<Profiled> {
  const profiles = path.join(dir, `profiles-${runtime}`);
  mkdirSync(profiles);
  const peer = await startCliPeer({
    dir: path.join(dir, `server-${runtime}`),
    script,
    runtime,
    cpuProfileDir: profiles,
    redisUrl,
  });
  const driver = jsonRpcDriver(peer.jsonRpc, CHUNKS);
  await warm(driver);
  const cpu = () => [peer.cpuMs(), peer.mainThreadCpuMs()];
  const t0 = nowUs();
  const [cpu0, main0] = cpu();
  const unary = await pool(REQUESTS, CONCURRENCY, () => driver.unary());
  const [cpu1, main1] = cpu();
  const t1 = nowUs();
  const streams = await pool(STREAMS, CONCURRENCY, () => driver.stream());
  const [cpu2, main2] = cpu();
  const t2 = nowUs();
  driver.close();
  await peer.stop();
  const events = streams.results.reduce((sum, s) => sum + s.events, 0);
  const file = readdirSync(profiles).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no CPU profile written in ${profiles}`);
  if (KEEP)
    copyFileSync(path.join(profiles, file), KEEP.replace(/(\.cpuprofile)?$/, `-${runtime}.cpuprofile`));
  const data = JSON.parse(readFileSync(path.join(profiles, file), "utf8")) as CpuProfile;
  console.log(
    `  ${runtime === "agent" ? "agent runtime " : "TrivialRuntime"}: ${REQUESTS} unary at ${(REQUESTS / unary.seconds).toFixed(0)} req/s, ` +
      `server CPU ${(((cpu1 - cpu0) * 1000) / REQUESTS).toFixed(0)} us/request (main thread ${(((main1 - main0) * 1000) / REQUESTS).toFixed(0)}); ` +
      `${events} events at ${(events / streams.seconds).toFixed(0)} events/s, ${(((cpu2 - cpu1) * 1000) / events).toFixed(1)} us/event ` +
      `(main thread ${(((main2 - main1) * 1000) / events).toFixed(1)}); load average ${loadAverage()}`,
  );
  return {
    unary: analyseProfile(data, { fromUs: t0, toUs: t1 }, Infinity),
    stream: analyseProfile(data, { fromUs: t1, toUs: t2 }, Infinity),
    unaryMainUs: (main1 - main0) * 1000,
    streamMainUs: (main2 - main1) * 1000,
    events,
  };
}

/** The first `TOP` rows of every table. */
function shortened(report: ProfileReport): ProfileReport {
  const copy = { ...report };
  for (const [table] of TABLES) copy[table] = report[table].slice(0, TOP);
  return copy;
}

/** Per unit (µs) of each row of a table, on the main thread's measured CPU. */
function perUnit(report: ProfileReport, table: (typeof TABLES)[number][0], mainUs: number, count: number) {
  const scale = mainUs / Math.max(1, report.busySamples) / count;
  return new Map(report[table].map((s) => [s.name, s.samples * scale]));
}

/** Agent runtime minus TrivialRuntime, per request, by row: what the runtime adds (and where the two differ). */
function difference(a: Profiled, b: Profiled, table: (typeof TABLES)[number][0], title: string): string {
  const x = perUnit(a.unary, table, a.unaryMainUs, REQUESTS);
  const y = perUnit(b.unary, table, b.unaryMainUs, REQUESTS);
  const rows = [...new Set([...x.keys(), ...y.keys()])]
    .map((name) => ({ name, a: x.get(name) ?? 0, b: y.get(name) ?? 0 }))
    .sort((p, q) => Math.abs(q.a - q.b) - Math.abs(p.a - p.b))
    .slice(0, TOP);
  return [
    `  ${title} (us/request: agent runtime, TrivialRuntime, difference):`,
    ...rows.map(
      (r) =>
        `    ${r.a.toFixed(0).padStart(6)} ${r.b.toFixed(0).padStart(6)} ${(r.a - r.b >= 0 ? "+" : "") + (r.a - r.b).toFixed(0).padStart(5)}  ${r.name}`,
    ),
  ].join("\n");
}

/** Syscalls per unary request of a CLI-started server (strace -f -c attached for the unary phase only). */
async function syscallsPerRequest(
  dir: string,
  script: string,
  runtime: "agent" | "trivial",
  redisUrl?: string,
): Promise<Map<string, number>> {
  const peer = await startCliPeer({ dir: path.join(dir, `strace-${runtime}`), script, runtime, redisUrl });
  const driver = jsonRpcDriver(peer.jsonRpc, CHUNKS);
  try {
    await warm(driver);
    const out = path.join(dir, `strace-${runtime}.txt`);
    const tracer = spawn("strace", ["-f", "-c", "-o", out, "-p", String(peer.pid)], { stdio: "ignore" });
    await new Promise((resolve) => setTimeout(resolve, 1000)); // attached to every thread
    await pool(SYSCALL_REQUESTS, CONCURRENCY, () => driver.unary());
    await new Promise<void>((resolve) => {
      tracer.once("exit", () => resolve());
      tracer.kill("SIGINT");
    });
    // "% time  seconds  usecs/call  calls  [errors]  syscall" rows.
    const counts = new Map<string, number>();
    for (const line of readFileSync(out, "utf8").split("\n")) {
      const cells = line.trim().split(/\s+/);
      if (cells.length < 5 || !/^\d/.test(cells[0]) || cells.at(-1) === "total") continue;
      counts.set(cells.at(-1)!, Number(cells[3]) / SYSCALL_REQUESTS);
      // The failed ones (ENOENT of a file that is not there, mostly) apart.
      if (cells.length === 6) counts.set(`${cells[5]} failed`, Number(cells[4]) / SYSCALL_REQUESTS);
    }
    return counts;
  } finally {
    driver.close();
    await peer.stop();
  }
}

async function syscalls(dir: string, script: string, redisUrl?: string): Promise<void> {
  const agent = await syscallsPerRequest(dir, script, "agent", redisUrl);
  const trivial = await syscallsPerRequest(dir, script, "trivial", redisUrl);
  const rows = [...new Set([...agent.keys(), ...trivial.keys()])]
    .map((name) => ({ name, a: agent.get(name) ?? 0, b: trivial.get(name) ?? 0 }))
    .filter((r) => r.a >= 0.05 || r.b >= 0.05)
    .sort((p, q) => q.a - q.b - (p.a - p.b));
  const total = (m: Map<string, number>) => [...m.values()].reduce((x, y) => x + y, 0);
  console.log(
    `\nSyscalls per unary request, every thread (strace -f -c over ${SYSCALL_REQUESTS} requests; agent runtime, TrivialRuntime, difference): ` +
      `${total(agent).toFixed(1)}, ${total(trivial).toFixed(1)}`,
  );
  for (const r of rows)
    console.log(
      `    ${r.a.toFixed(2).padStart(7)} ${r.b.toFixed(2).padStart(7)} ${(r.a - r.b >= 0 ? "+" : "") + (r.a - r.b).toFixed(2).padStart(6)}  ${r.name}`,
    );
}

async function profile(dir: string, script: string, redisUrl?: string): Promise<void> {
  console.log(
    `\nCPU profiles (node --cpu-prof, a sample about every 1 ms of the main thread; the profiler's own cost is in the figures)` +
      ` of the product path${redisUrl ? " (store: redis)" : ""} and of the same CLI start on TrivialRuntime, same load:`,
  );
  const agent = await profiled(dir, script, "agent", redisUrl);
  const trivial = await profiled(dir, script, "trivial", redisUrl);
  console.log(`\nProduct path, unary phase (SendMessage, a new context each):`);
  console.log(
    formatReport(shortened(agent.unary), {
      count: REQUESTS,
      unit: "us/request",
      mainThreadUs: agent.unaryMainUs,
    }),
  );
  console.log(
    `\nProduct path, streaming phase ("stream ${CHUNKS}", ${EVENTS_PER_STREAM} events per stream):`,
  );
  console.log(
    formatReport(shortened(agent.stream), {
      count: agent.events,
      unit: "us/event",
      mainThreadUs: agent.streamMainUs,
    }),
  );
  console.log(`\nWhat the agent runtime adds per unary turn (main thread; the largest differences first):`);
  console.log(difference(agent, trivial, "byOwnModule", "by iac-code module, own"));
  console.log(difference(agent, trivial, "byFunction", "by function, self time"));
}

if (process.env.IAC_CODE_FROM_SOURCE !== "1") {
  execFileSync(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "..", "build.ts")], {
    stdio: "inherit",
  });
}
const dir = mkdtempSync(path.join(STATE_BASE, "iac-product-profile-"));
let redis: TestRedis | undefined;
try {
  console.log(
    `Product path profile, ${os.cpus().length} CPUs, Node ${process.version}, load average ${loadAverage()}; ` +
      `state in ${STATE_BASE}; iac-code from ${process.env.IAC_CODE_FROM_SOURCE === "1" ? "src/ (tsx)" : "dist/"}`,
  );
  const script = writeTrivialScript(path.join(dir, "trivial-script.json"), [1, CHUNKS]);
  if (REDIS) redis = await startRedis({ appendOnly: true });
  if (COMPARE_DIR) await compareDirs(script, redis?.url);
  if (SYSCALL_REQUESTS > 0) await syscalls(dir, script, redis?.url);
  if (!process.argv.includes("--no-profile")) await profile(dir, script, redis?.url);
} finally {
  await redis?.close();
  rmSync(dir, { recursive: true, force: true });
}
