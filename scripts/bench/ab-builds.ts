// A/B of two builds of the product path: two checkouts' `iac-code a2a`, each
// started by its CLI as cli-peer.ts starts it (scripted trivial script, full
// agent runtime, SQLite), both running at once and measured in alternating
// rounds after the same warm-up; the ratios B/A are taken within a round.
// Build each checkout first (npm run build). This is how a change's effect is
// measured before it is explained (README, Benchmarks).
//
//   npx tsx scripts/bench/ab-builds.ts <A: bin/iac-code.mjs> <B: bin/iac-code.mjs>
//     [--rounds 6] [--requests 2000] [--streams 100] [--warm 5000] [--trivial]
//     [--redis] (store: redis, a private redis-server for each build)
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startRedis, type TestRedis } from "../../test/fixtures/redis-server.js";
import { option } from "./bench-args.js";
import { jsonRpcDriver, median, pool } from "./bench-clients.js";
import { startCliPeer } from "./cli-peer.js";
import { writeTrivialScript } from "./trivial-script.js";

const ROUNDS = option("rounds", 6);
const REQUESTS = option("requests", 2000);
const STREAMS = option("streams", 100);
const WARM = option("warm", 5000);
const CHUNKS = 50;
const CONCURRENCY = 16;
const bins = process.argv
  .slice(2)
  .filter((a, i, all) => !a.startsWith("--") && !all[i - 1]?.startsWith("--"));
if (bins.length !== 2)
  throw new Error("usage: ab-builds.ts <A bin/iac-code.mjs> <B bin/iac-code.mjs> [options]");

interface Round {
  rps: number;
  cpuPerRequestUs: number;
  eventsPerSecond: number;
  cpuPerEventUs: number;
}

const dir = mkdtempSync(path.join(os.tmpdir(), "iac-ab-"));
const script = writeTrivialScript(path.join(dir, "trivial-script.json"), [1, CHUNKS]);
const runtime = process.argv.includes("--trivial") ? "trivial" : "agent";
const redis: TestRedis[] = process.argv.includes("--redis")
  ? await Promise.all(bins.map(() => startRedis({ appendOnly: true })))
  : [];
const peers = await Promise.all(
  bins.map((bin, i) =>
    startCliPeer({ dir: path.join(dir, "AB"[i]), script, bin, runtime, redisUrl: redis[i]?.url }),
  ),
);
const drivers = peers.map((p) => jsonRpcDriver(p.jsonRpc, CHUNKS));
try {
  for (const d of drivers) {
    await pool(WARM, CONCURRENCY, () => d.unary());
    await pool(Math.ceil(WARM / 25), CONCURRENCY, () => d.stream());
  }
  const rounds: Round[][] = [[], []];
  for (let r = 0; r < ROUNDS; r += 1) {
    for (let k = 0; k < 2; k += 1) {
      const i = (r + k) % 2;
      const cpu0 = peers[i].cpuMs();
      const t0 = performance.now();
      await pool(REQUESTS, CONCURRENCY, () => drivers[i].unary());
      const t1 = performance.now();
      const cpu1 = peers[i].cpuMs();
      await pool(STREAMS, CONCURRENCY, () => drivers[i].stream());
      const t2 = performance.now();
      const events = STREAMS * (CHUNKS + 5);
      rounds[i].push({
        rps: REQUESTS / ((t1 - t0) / 1000),
        cpuPerRequestUs: ((cpu1 - cpu0) * 1000) / REQUESTS,
        eventsPerSecond: events / ((t2 - t1) / 1000),
        cpuPerEventUs: ((peers[i].cpuMs() - cpu1) * 1000) / events,
      });
    }
  }
  const figure = (i: number, key: keyof Round) => median(rounds[i].map((x) => x[key])).toFixed(0);
  const ratio = (key: keyof Round) =>
    rounds[1].map((b, r) => (b[key] / rounds[0][r][key]).toFixed(2)).join(" ");
  console.log(
    `A/B of two builds (${runtime} runtime${redis.length > 0 ? ", store: redis" : ""}), ${ROUNDS} alternating rounds after ${WARM} warm-up requests each`,
  );
  for (let i = 0; i < 2; i += 1)
    console.log(
      `  ${"AB"[i]} ${bins[i]}: unary ${figure(i, "rps")} req/s, ${figure(i, "cpuPerRequestUs")} us CPU/request; ` +
        `${figure(i, "eventsPerSecond")} events/s, ${figure(i, "cpuPerEventUs")} us CPU/event`,
    );
  console.log(`  B/A per round: unary req/s ${ratio("rps")}; CPU/request ${ratio("cpuPerRequestUs")}`);
  console.log(`                 events/s ${ratio("eventsPerSecond")}; CPU/event ${ratio("cpuPerEventUs")}`);
} finally {
  for (const d of drivers) d.close();
  await Promise.all(peers.map((p) => p.stop()));
  await Promise.all(redis.map((r) => r.stop()));
  rmSync(dir, { recursive: true, force: true });
}
