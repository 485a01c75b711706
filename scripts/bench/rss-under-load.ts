// RSS over time of both servers under mixed load: the shipped CLI (dist/) runs
// `iac-code a2a` (scripted model streaming text) and `iac-code agui` in front of
// it; loops of AG-UI runs, A2A JSON-RPC SendMessage / SendStreamingMessage /
// GetTask / ListTasks and REST ListTasks hit them for a bounded time. Every
// second the RSS of each process is sampled from /proc; the table, the
// first/peak/last figures and the growth over the second half are printed.
// Loopback only, bounded in time.
//
// The verdict (flat: within 5 %) compares levels, not two samples. The RSS of
// a server is a sawtooth (the collector lets V8's heap grow, then gives pages
// back: 90 MiB apart within a minute at 8 connections on 2 cores), so the last
// sample minus the first of the second half said where each stood in its
// tooth, not where the trend went. The level is the floor: the lowest RSS over
// 150 s at the start and over 150 s at the end of the second half (at most a
// half of it each). A tooth took 60-120 s in our runs; over any 150 s of a
// steady server the floor moved by 3-4 MiB (2 %), over 30 s by 37-55 MiB.
// Memory a server keeps (a leak, a cache growing with the runs) raises the
// floor; the peaks only say when the collector ran.
//
// --heap also runs each server with scripts/bench/heap-sampler.mjs preloaded
// (NODE_OPTIONS=--import, outside the product): V8's heap total (what it keeps
// reserved) and the live heap (used after the last mark-compact) per second,
// and the same verdict on the live heap: it tells memory the program keeps
// from memory the collector keeps in reserve.
//
//   npm run build && npx tsx scripts/bench/rss-under-load.ts [--seconds 30] [--concurrency 8] [--heap] [--node-options "--max-old-space-size=96"]
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "bin", "iac-code.mjs");
const argValue = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const SECONDS = Number(argValue("seconds") ?? 30);
const CONCURRENCY = Number(argValue("concurrency") ?? 8);
const NODE_OPTIONS = argValue("node-options");
const HEAP = process.argv.includes("--heap");
const HEAP_SAMPLER = pathToFileURL(path.join(import.meta.dirname, "heap-sampler.mjs")).href;
/** The verdict's bound on the growth over the second half. */
const FLAT_PERCENT = 5;
const TOKEN = "rss-bench-token";

const dir = mkdtempSync(path.join(os.tmpdir(), "rss-bench-"));
const workspace = path.join(dir, "workspace");
const script = path.join(dir, "script.yaml");
writeFileSync(
  script,
  [
    "version: 1",
    "model: rss-bench",
    "defaults: { chunkSize: 16 }",
    "rules:",
    "  - when: {}",
    `    reply: [{ text: ${JSON.stringify("a streamed answer of some length, split in chunks. ".repeat(8))} }]`,
    "",
  ].join("\n"),
);

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** A server process, its URL once its banner is out; with --heap its heap samples go to `heapFile`. */
function start(
  args: string[],
  env: NodeJS.ProcessEnv,
  heapFile: string,
): Promise<{ proc: ChildProcess; url: string }> {
  const nodeOptions = [NODE_OPTIONS, HEAP ? `--import ${HEAP_SAMPLER}` : undefined].filter(Boolean).join(" ");
  const proc = spawn(process.execPath, [BIN, ...args], {
    env: {
      ...process.env,
      ...env,
      ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
      ...(HEAP ? { RSS_BENCH_HEAP_FILE: heapFile } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // The output up to the banner (and for the error when the server exits before it); after
  // it, a line a turn is read and dropped. (Keeping it all and searching it on each chunk
  // cost this process ~65 ms a chunk once it held 80 MB, on the cores the servers share.)
  let out: string | undefined = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      if (out === undefined) return;
      out += chunk.toString("utf8");
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (match) {
        out = undefined;
        resolve({ proc, url: match[1] });
      }
    };
    proc.stdout.on("data", onData);
    proc.stderr.on("data", onData);
    proc.once("exit", (code) => reject(new Error(`${args[0]} exited ${code}: ${out ?? ""}`)));
  });
}

/** A server's heap samples (heap-sampler.mjs), MiB: at or before each time, the last one. */
function heapSamples(file: string): (atMs: number) => { total: number; live: number } | undefined {
  const rows = existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(" ").map(Number))
    : [];
  return (atMs) => {
    let last: number[] | undefined;
    for (const row of rows) if (row[0] <= atMs) last = row;
    return last && { total: last[1] / 2 ** 20, live: last[3] / 2 ** 20 };
  };
}

/** Seconds over which a floor is taken (see the header). */
const FLOOR_WINDOW_S = 150;

/** The floors at the start and at the end of the second half (see the header). */
function secondHalfLevels(times: number[], values: number[]): { from: number; to: number } {
  const end = times.at(-1)!;
  const half = end / 2;
  const window = Math.min(FLOOR_WINDOW_S, half / 2);
  const floor = (lo: number, hi: number) =>
    Math.min(...values.filter((_, i) => times[i] >= lo && times[i] <= hi));
  return { from: floor(half, half + window), to: floor(end - window, end) };
}

function verdict(name: string, times: number[], values: number[]): string {
  const { from, to } = secondHalfLevels(times, values);
  const growth = to - from;
  const percent = (growth / from) * 100;
  const sign = growth >= 0 ? "+" : "";
  const flat = Math.abs(percent) <= FLAT_PERCENT;
  return `${name}: second half, floor at start ${from.toFixed(0)}, at end ${to.toFixed(0)} MiB, ${sign}${growth.toFixed(1)} MiB (${sign}${percent.toFixed(1)} %): ${flat ? "flat" : "NOT flat"} (bound ${FLAT_PERCENT} %)`;
}

const counts: Record<string, number> = {};
const failures: Record<string, number> = {};
async function loop(name: string, until: number, call: (i: number) => Promise<Response>): Promise<void> {
  for (let i = 0; Date.now() < until; i++) {
    try {
      const res = await call(i);
      await res.text();
      if (res.ok) counts[name] = (counts[name] ?? 0) + 1;
      else failures[name] = (failures[name] ?? 0) + 1;
    } catch {
      failures[name] = (failures[name] ?? 0) + 1;
    }
  }
}

async function main(): Promise<void> {
  const { mkdirSync } = await import("node:fs");
  mkdirSync(workspace, { recursive: true });
  const env = {
    IAC_CODE_CONFIG_DIR: path.join(dir, "cfg"),
    IACCODE_A2A_HTTP_TOKEN: TOKEN,
    IACCODE_A2A_ALLOWED_CWDS: dir,
    IAC_CODE_AGUI_ALLOWED_CWDS: dir,
  };
  delete process.env.IAC_CODE_FROM_SOURCE;
  const config = path.join(dir, "a2a-server.yml");
  writeFileSync(
    config,
    `port: 0\nprovider: scripted\nscript: ${script}\npersistence-dir: ${path.join(dir, "a2a")}\n`,
  );
  const heapFiles = { a2a: path.join(dir, "heap-a2a.txt"), agui: path.join(dir, "heap-agui.txt") };
  const a2a = await start(["a2a", "--config", config], env, heapFiles.a2a);
  const agui = await start(
    ["agui", "--port", "0", "--a2a-url", a2a.url],
    { ...env, IAC_CODE_AGUI_A2A_TOKEN: TOKEN },
    heapFiles.agui,
  );
  const rpcHeaders = {
    "Content-Type": "application/json",
    "A2A-Version": "1.0",
    Authorization: `Bearer ${TOKEN}`,
  };
  const message = (i: number) => ({
    messageId: `m-${i}-${Math.random()}`,
    role: "ROLE_USER",
    parts: [{ text: `hello ${i}` }],
    metadata: { iac_code: { cwd: workspace } },
  });
  const rpc = (method: string, params: unknown) =>
    fetch(a2a.url, {
      method: "POST",
      headers: rpcHeaders,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
  let lastTask = "";
  const until = Date.now() + SECONDS * 1000;
  const samples: Array<{ t: number; at: number; a2a: number; agui: number }> = [];
  const t0 = Date.now();
  const sample = () => {
    const at = Date.now();
    samples.push({ t: (at - t0) / 1000, at, a2a: rssMiB(a2a.proc.pid!), agui: rssMiB(agui.proc.pid!) });
  };
  sample();
  const sampler = setInterval(sample, 1000);
  const loops: Array<Promise<void>> = [];
  for (let c = 0; c < CONCURRENCY; c++) {
    loops.push(
      loop("agui run", until, (i) =>
        fetch(agui.url, {
          method: "POST",
          headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
          body: JSON.stringify({
            threadId: `thread-${c}-${i}`,
            runId: "run-1",
            state: {},
            tools: [],
            context: [],
            messages: [{ id: "u1", role: "user", content: "hello" }],
            forwardedProps: {
              iacCode: { schemaVersion: 1, rosInvocationId: `inv-${c}-${i}`, cwd: workspace },
            },
          }),
        }),
      ),
      loop("a2a SendMessage", until, async (i) => {
        const res = await rpc("SendMessage", { message: message(i) });
        const body = (await res.clone().json()) as { result?: { task?: { id: string } } };
        if (body.result?.task?.id) lastTask = body.result.task.id;
        return res;
      }),
      loop("a2a SendStreamingMessage", until, (i) => rpc("SendStreamingMessage", { message: message(i) })),
    );
  }
  // Reads on one connection each. (A page of ListTasks is read through an index and its total
  // from a kept count: its cost does not grow with the store, 0.5 ms a page at 120,000 tasks.)
  loops.push(
    loop("a2a GetTask + ListTasks", until, (i) =>
      i % 2 === 0 && lastTask ? rpc("GetTask", { id: lastTask }) : rpc("ListTasks", { pageSize: 50 }),
    ),
    loop("rest ListTasks", until, () => fetch(`${a2a.url}tasks?pageSize=20`, { headers: rpcHeaders })),
  );
  await Promise.all(loops);
  clearInterval(sampler);
  sample();
  for (const p of [agui.proc, a2a.proc]) p.kill("SIGTERM");
  await Promise.all([agui.proc, a2a.proc].map((p) => new Promise((r) => p.once("exit", r))));
  const heaps = { a2a: heapSamples(heapFiles.a2a), agui: heapSamples(heapFiles.agui) };
  rmSync(dir, { recursive: true, force: true });

  console.log(
    `RSS (MiB) under ${SECONDS} s of mixed load, ${CONCURRENCY} connections per write loop${NODE_OPTIONS ? `, NODE_OPTIONS=${NODE_OPTIONS}` : ""}`,
  );
  console.log(HEAP ? "  t(s)   a2a (heap live)   agui (heap live)" : "  t(s)   a2a    agui");
  const cell = (rss: number, heap: { total: number; live: number } | undefined) =>
    HEAP
      ? `${rss.toFixed(0).padStart(6)} (${heap ? `${heap.total.toFixed(0).padStart(4)} ${heap.live.toFixed(0).padStart(4)}` : "   -    -"})`
      : rss.toFixed(0).padStart(6);
  for (const s of samples)
    console.log(
      `  ${s.t.toFixed(0).padStart(4)} ${cell(s.a2a, heaps.a2a(s.at))}  ${cell(s.agui, heaps.agui(s.at))}`,
    );
  const times = samples.map((s) => s.t);
  for (const which of ["a2a", "agui"] as const) {
    const values = samples.map((s) => s[which]);
    console.log(
      `${which}: start ${values[0].toFixed(0)}, peak ${Math.max(...values).toFixed(0)}, end ${values.at(-1)!.toFixed(0)} MiB`,
    );
    console.log(`  ${verdict("RSS", times, values)}`);
    if (HEAP) {
      const live = samples.map((s) => heaps[which](s.at)?.live ?? NaN);
      const known = live.map((v, i) => [times[i], v]).filter(([, v]) => v > 0);
      if (known.length > 0)
        console.log(
          `  ${verdict(
            "live heap",
            known.map(([t]) => t),
            known.map(([, v]) => v),
          )}`,
        );
    }
  }
  console.log("requests:", JSON.stringify(counts), "failed:", JSON.stringify(failures));
}

await main();
