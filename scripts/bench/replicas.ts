// Benchmark: iac-code's A2A server with store: redis, as 1 and as 2 replicas
// on one private redis-server (AOF on, appendfsync everysec, as docs/deploy.md
// asks), next to the embedded SQLite store; the trivial agent of
// a2a-vs-sdk.ts, each server in its own process, this process the load (with
// 2 replicas the requests alternate between them, as a round-robin balancer
// would send them). Prints JSON-RPC unary SendMessage/s, streamed events/s
// (streams of --chunks text chunks), and the Redis commands per SendMessage
// (MONITOR; ioredis auto-pipelining sends the commands of one event-loop
// turn in one write, so round trips are at most that many).
// On a 2-core machine the replicas, Redis and the load share the same cores:
// 2 replicas cannot show a scale-out gain there, only the cost of sharing.
//
//   npx tsx scripts/bench/replicas.ts [--requests 2000] [--streams 200] [--chunks 50]
//     [--concurrency 16] [--rounds 3]
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { startRedis } from "../../test/fixtures/redis-server.js";
import { jsonRpcDriver, median, pool, type Driver } from "./bench-clients.js";
import { startPeer, type Peer } from "./peer-process.js";
import { option } from "./bench-args.js";

const REQUESTS = option("requests", 2000);
const STREAMS = option("streams", 200);
const CHUNKS = option("chunks", 50);
const CONCURRENCY = option("concurrency", 16);
const ROUNDS = option("rounds", 3);
const EVENTS_PER_STREAM = CHUNKS + 5;

/** One driver over several replicas: each call goes to the next one. */
function roundRobin(drivers: Driver[]): Driver {
  let next = 0;
  const pick = () => drivers[next++ % drivers.length];
  return {
    unary: () => pick().unary(),
    stream: () => pick().stream(),
    close: () => drivers.forEach((d) => d.close()),
  };
}

interface Figures {
  unaryRps: number;
  unaryP50: number;
  eventsPerSecond: number;
  firstEventP50: number;
}

async function measure(driver: Driver): Promise<Figures> {
  const unary = await pool(REQUESTS, CONCURRENCY, () => driver.unary());
  const streams = await pool(STREAMS, CONCURRENCY, () => driver.stream());
  const events = streams.results.reduce((sum, s) => sum + s.events, 0);
  if (events !== STREAMS * EVENTS_PER_STREAM)
    throw new Error(`expected ${STREAMS * EVENTS_PER_STREAM} events, got ${events}`);
  return {
    unaryRps: REQUESTS / unary.seconds,
    unaryP50: median(unary.results),
    eventsPerSecond: events / streams.seconds,
    firstEventP50: median(streams.results.map((s) => s.firstMs)),
  };
}

async function main(): Promise<void> {
  const redisServer = await startRedis({ appendOnly: true });
  const admin = new Redis(redisServer.url);
  const dir = mkdtempSync(path.join(os.tmpdir(), "iac-bench-replicas-"));
  const peers: Peer[] = [];
  try {
    const sqlite = await startPeer(["iac-code", path.join(dir, "sqlite")]);
    const r1 = await startPeer(["iac-code-redis", path.join(dir, "r1"), redisServer.url]);
    const r2 = await startPeer(["iac-code-redis", path.join(dir, "r2"), redisServer.url]);
    peers.push(sqlite, r1, r2);
    const targets = [
      { name: "embedded SQLite, 1 process", driver: jsonRpcDriver(sqlite.jsonRpc, CHUNKS) },
      { name: "store: redis, 1 replica", driver: jsonRpcDriver(r1.jsonRpc, CHUNKS) },
      {
        name: "store: redis, 2 replicas",
        driver: roundRobin([jsonRpcDriver(r1.jsonRpc, CHUNKS), jsonRpcDriver(r2.jsonRpc, CHUNKS)]),
      },
    ];
    for (const t of targets) {
      await pool(Math.min(200, REQUESTS), CONCURRENCY, () => t.driver.unary());
      await pool(Math.min(20, STREAMS), CONCURRENCY, () => t.driver.stream());
    }

    // Redis work per SendMessage, on one replica, with nothing else running: commands sent by
    // the server (MONITOR; those a Lua script runs are counted apart).
    const monitor = await admin.monitor();
    const sent = new Map<string, number>();
    let inScripts = 0;
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (source === "lua") inScripts += 1;
      else sent.set(args[0].toLowerCase(), (sent.get(args[0].toLowerCase()) ?? 0) + 1);
    });
    const sample = 500;
    await pool(sample, CONCURRENCY, () => targets[1].driver.unary());
    await new Promise((resolve) => setTimeout(resolve, 500));
    monitor.disconnect();
    const perRequest = [...sent]
      .map(([name, calls]) => [name, calls / sample] as const)
      .filter(([, n]) => n > 0.01)
      .sort((a, b) => b[1] - a[1]);
    const total = perRequest.reduce((sum, [, n]) => sum + n, 0);

    const runs = targets.map(() => [] as Figures[]);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [i, t] of targets.entries()) runs[i].push(await measure(t.driver));
    }
    const figures = runs.map((r) => ({
      unaryRps: median(r.map((f) => f.unaryRps)),
      unaryP50: median(r.map((f) => f.unaryP50)),
      eventsPerSecond: median(r.map((f) => f.eventsPerSecond)),
      firstEventP50: median(r.map((f) => f.firstEventP50)),
    }));
    console.log(
      `\nA2A JSON-RPC, trivial agent, ${REQUESTS} unary requests and ${STREAMS} streams of ${EVENTS_PER_STREAM} events per round, ` +
        `concurrency ${CONCURRENCY}, median of ${ROUNDS} alternating rounds, ${os.cpus().length} CPUs shared by servers, Redis and load`,
    );
    const base = figures[0];
    for (const [i, t] of targets.entries()) {
      const f = figures[i];
      console.log(
        `${t.name.padEnd(28)} unary ${f.unaryRps.toFixed(0).padStart(6)} req/s (p50 ${f.unaryP50.toFixed(1)} ms, ` +
          `${(f.unaryRps / base.unaryRps).toFixed(2)}x SQLite)   stream ${f.eventsPerSecond.toFixed(0).padStart(6)} events/s ` +
          `(${(f.eventsPerSecond / base.eventsPerSecond).toFixed(2)}x SQLite, first event p50 ${f.firstEventP50.toFixed(1)} ms)`,
      );
    }
    console.log(
      `Redis commands sent per unary SendMessage (1 replica): ${total.toFixed(1)} = ` +
        perRequest.map(([name, n]) => `${name} ${n.toFixed(2)}`).join(", ") +
        `; plus ${(inScripts / sample).toFixed(1)} run inside the Lua scripts`,
    );
    for (const t of targets) t.driver.close();
  } finally {
    await Promise.all(peers.map((p) => p.stop()));
    admin.disconnect();
    await redisServer.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
