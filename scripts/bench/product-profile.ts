// Where the product path's CPU goes: `iac-code a2a` started by its CLI as in
// a2a-vs-sdk.ts section 1 (scripted trivial script, full agent runtime), under
// the same load (node:http keep-alive, 16 connections), with
// NODE_OPTIONS=--cpu-prof. The profile is cut to the unary phase and to the
// streaming phase (the monotonic clock is shared by the processes) and each
// is reported by function, module, iac-code module and directory
// (cpu-profile.ts), per request / per event.
// With --compare-dir <dir> (e.g. /dev/shm, a tmpfs: fsync costs nothing
// there), it first runs an A/B without the profiler: the same server with its
// persistence dir, config dir and HOME under --state-dir and under <dir>,
// alternating rounds, CPU per request and req/s side by side.
//
//   npx tsx scripts/bench/product-profile.ts [--requests 3000] [--streams 200] [--chunks 50]
//     [--concurrency 16] [--state-dir <dir>] [--compare-dir /dev/shm] [--rounds 5] [--redis]
//     [--top 15] [--keep <file.cpuprofile>]
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startRedis, type TestRedis } from "../../test/fixtures/redis-server.js";
import { jsonRpcDriver, median, pool, type Driver } from "./bench-clients.js";
import { startCliPeer } from "./cli-peer.js";
import { analyseProfile, formatReport, type CpuProfile } from "./cpu-profile.js";
import type { Peer } from "./peer-process.js";
import { writeTrivialScript } from "./trivial-script.js";

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

const REQUESTS = option("requests", 3000);
const STREAMS = option("streams", 200);
const CHUNKS = option("chunks", 50);
const CONCURRENCY = option("concurrency", 16);
const ROUNDS = option("rounds", 5);
const TOP = option("top", 15);
const STATE_BASE = textOption("state-dir") ?? os.tmpdir();
const COMPARE_DIR = textOption("compare-dir");
const KEEP = textOption("keep");
const REDIS = process.argv.includes("--redis");
const EVENTS_PER_STREAM = CHUNKS + 5;
const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

/** The monotonic clock the profile's timestamps use, in µs. */
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

async function warm(driver: Driver): Promise<void> {
  await pool(200, CONCURRENCY, () => driver.unary());
  await pool(20, CONCURRENCY, () => driver.stream());
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

async function profile(dir: string, script: string, redisUrl?: string): Promise<void> {
  const profiles = path.join(dir, "profiles");
  mkdirSync(profiles);
  const peer = await startCliPeer({
    dir: path.join(dir, "server"),
    script,
    cpuProfileDir: profiles,
    redisUrl,
  });
  const driver = jsonRpcDriver(peer.jsonRpc, CHUNKS);
  await warm(driver);
  const t0 = nowUs();
  const cpu0 = peer.cpuMs();
  const unary = await pool(REQUESTS, CONCURRENCY, () => driver.unary());
  const cpu1 = peer.cpuMs();
  const t1 = nowUs();
  const streams = await pool(STREAMS, CONCURRENCY, () => driver.stream());
  const cpu2 = peer.cpuMs();
  const t2 = nowUs();
  driver.close();
  await peer.stop();
  const events = streams.results.reduce((sum, s) => sum + s.events, 0);
  const file = readdirSync(profiles).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no CPU profile written in ${profiles}`);
  if (KEEP) copyFileSync(path.join(profiles, file), KEEP);
  const data = JSON.parse(readFileSync(path.join(profiles, file), "utf8")) as CpuProfile;
  console.log(
    `\nCPU profile of the product path${redisUrl ? " (store: redis)" : ""} under load (--cpu-prof, sampling every 1 ms; the profiler's own cost is in the figures): ` +
      `${REQUESTS} unary at ${(REQUESTS / unary.seconds).toFixed(0)} req/s, ` +
      `server CPU ${(((cpu1 - cpu0) * 1000) / REQUESTS).toFixed(0)} us/request; ` +
      `${STREAMS} streams, ${events} events at ${(events / streams.seconds).toFixed(0)} events/s, ` +
      `${(((cpu2 - cpu1) * 1000) / events).toFixed(1)} us/event; load average ${loadAverage()}` +
      (KEEP ? `; profile kept in ${KEEP}` : ""),
  );
  console.log(`\nUnary phase (SendMessage, one new context each): `);
  console.log(
    formatReport(analyseProfile(data, { fromUs: t0, toUs: t1 }, TOP), {
      count: REQUESTS,
      unit: "us/request",
    }),
  );
  console.log(`\nStreaming phase ("stream ${CHUNKS}", ${EVENTS_PER_STREAM} events per stream):`);
  console.log(
    formatReport(analyseProfile(data, { fromUs: t1, toUs: t2 }, TOP), { count: events, unit: "us/event" }),
  );
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
  await profile(dir, script, redis?.url);
} finally {
  await redis?.close();
  rmSync(dir, { recursive: true, force: true });
}
