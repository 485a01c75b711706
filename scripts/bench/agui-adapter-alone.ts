// The AG-UI adapter's own cost, without the A2A server's: `iac-code agui` (the
// CLI of one or more builds) in front of a constant upstream that answers every
// SendStreamingMessage at once (a Task snapshot, the session, N text updates
// written one by one, the end of the turn). The adapter's CPU is read from
// /proc, so the client and the upstream do not count. With two chunk counts it
// splits the cost into a part per run (admission, thread writes, the upstream
// request) and a part per event; it also prints the median time to the first
// chunk of the answer (RUN_STARTED). Builds alternate within each round, so
// two checkouts compare on the same load: `--build A --build B`, each a
// directory holding bin/iac-code.mjs and its dist/.
//   npx tsx scripts/bench/agui-adapter-alone.ts [--build DIR]... [--runs 400] [--deltas 1,400]
//     [--concurrency 1,16] [--rounds 3] [--profile-dir DIR]
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { option, textOption } from "./bench-args.js";
import { median } from "./bench-clients.js";
import { statCpuMs } from "./peer-process.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const RUNS = option("runs", 400);
const DELTAS = (textOption("deltas") ?? "1,400").split(",").map(Number);
const CONCURRENCY = (textOption("concurrency") ?? "1,16").split(",").map(Number);
const ROUNDS = option("rounds", 3);
/** Each adapter writes a CPU profile there when it stops (sampled every 100 µs). */
const PROFILE_DIR = textOption("profile-dir");
const BUILDS = process.argv.flatMap((arg, i) =>
  arg === "--build" ? [path.resolve(process.argv[i + 1])] : [],
);

/** The constant upstream: `--serve-upstream`, in a process of its own. */
function serveUpstream(): void {
  let seq = 0;
  const server = http.createServer((req, res) => {
    const body: Buffer[] = [];
    req.on("data", (c: Buffer) => body.push(c));
    req.on("end", () => {
      // The CLI probes the upstream's /health at start-up: only runs are answered.
      if (req.method !== "POST") return void res.writeHead(404).end();
      const rpc = JSON.parse(Buffer.concat(body).toString()) as {
        id: number;
        params: { message: { contextId: string; parts: Array<{ text?: string }> } };
      };
      const contextId = rpc.params.message.contextId;
      // The run's message says how many chunks to send: "chunks <n>".
      const deltas = Number(/chunks (\d+)/.exec(rpc.params.message.parts[0]?.text ?? "")?.[1] ?? 1);
      const taskId = `task-${++seq}`;
      const session = { iac_code: { iacCodeSessionId: `session-${taskId}` } };
      const status = (state: string, text?: string) => ({
        state,
        timestamp: new Date().toISOString(),
        ...(text === undefined
          ? {}
          : {
              message: { messageId: `${taskId}-m`, contextId, taskId, role: "ROLE_AGENT", parts: [{ text }] },
            }),
      });
      const send = (result: unknown) =>
        res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id: rpc.id, result })}\n\n`);
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      send({
        task: { id: taskId, contextId, status: status("TASK_STATE_SUBMITTED"), metadata: { iac_code: {} } },
      });
      send({ statusUpdate: { taskId, contextId, status: status("TASK_STATE_WORKING"), metadata: session } });
      let sent = 0;
      // One event per write, a turn of the event loop between writes: as a streaming model's chunks come.
      const next = () => {
        if (sent++ < deltas) {
          send({ statusUpdate: { taskId, contextId, status: status("TASK_STATE_WORKING", `chunk ${sent} `), metadata: session } });
          setImmediate(next);
          return;
        }
        send({ statusUpdate: { taskId, contextId, status: status("TASK_STATE_INPUT_REQUIRED"), metadata: session } });
        res.end();
      }; // prettier-ignore
      next();
    });
  });
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`http://127.0.0.1:${(server.address() as { port: number }).port}/\n`);
  });
}

async function firstLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  for await (const line of createInterface({ input: child.stdout! })) {
    const match = pattern.exec(line);
    if (match) return match[1];
  }
  throw new Error("the process ended before it said where it listens");
}

/** CPU microseconds a process has used so far (Linux /proc; clock ticks of 10 ms). */
const cpuUs = (pid: number): number => statCpuMs(`/proc/${pid}/stat`) * 1000;

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One AG-UI run: the number of events, and when the first chunk of the answer came. */
function run(url: string, body: string): Promise<{ events: number; firstMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let firstMs = NaN;
    let events = 0;
    const headers = { "Content-Type": "application/json", Accept: "text/event-stream" };
    const req = http.request(url, { method: "POST", agent, headers }, (res) => {
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        if (Number.isNaN(firstMs)) firstMs = performance.now() - t0;
        for (let at = chunk.indexOf("data: "); at >= 0; at = chunk.indexOf("data: ", at + 6)) events++;
      });
      res.on("end", () => resolve({ events, firstMs }));
    }); // prettier-ignore
    req.on("error", reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const builds = BUILDS.length > 0 ? BUILDS : [ROOT];
  const dir = mkdtempSync(path.join(os.tmpdir(), "agui-alone-"));
  const workspace = path.join(dir, "ws");
  mkdirSync(workspace);
  const upstream = spawn(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url), "--serve-upstream"],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const upstreamUrl = await firstLine(upstream, /^(http:\S+)$/);
  const adapters = await Promise.all(
    builds.map(async (build, b) => {
      const child = spawn(
        process.execPath,
        [...(PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`, "--cpu-prof-interval=100"] : []),
          path.join(build, "bin", "iac-code.mjs"), "agui", "--port", "0", "--a2a-url", upstreamUrl,
          "--state-dir", path.join(dir, `state-${b}`), "--allowed-cwds", dir, "--log-format", "json"],
        { stdio: ["ignore", "pipe", "ignore"], env: { ...process.env, IAC_CODE_CONFIG_DIR: path.join(dir, `config-${b}`) } },
      ); // prettier-ignore
      const url = await firstLine(child, /listening on (http:\/\/\S+?)\/?\s*$/);
      return { build, child, url: url.endsWith("/") ? url : `${url}/` };
    }),
  );
  console.log(
    `runs=${RUNS} chunks per run=${DELTAS.join(",")} rounds=${ROUNDS} builds: ${builds.join(", ")}`,
  );
  let seq = 0;
  const body = (deltas: number) =>
    JSON.stringify({
      threadId: `alone-${seq++}`, runId: "run-1", state: {}, tools: [], context: [],
      messages: [{ id: "u-1", role: "user", content: `chunks ${deltas}` }],
      forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "bench", cwd: workspace } },
    }); // prettier-ignore
  const table = new Map<string, { cpuPerRun: number[]; firstMs: number[] }>();
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const c of CONCURRENCY) {
        for (const deltas of DELTAS) {
          for (const a of adapters) {
            const pid = a.child.pid!;
            await Promise.all(Array.from({ length: c }, () => run(a.url, body(deltas)))); // warm-up
            const firsts: number[] = [];
            let events = 0;
            const cpu0 = cpuUs(pid);
            await Promise.all(
              Array.from({ length: c }, async (_, w) => {
                for (let i = w; i < RUNS; i += c) {
                  const r = await run(a.url, body(deltas));
                  events += r.events;
                  firsts.push(r.firstMs);
                }
              }),
            );
            const cpuPerRun = (cpuUs(pid) - cpu0) / RUNS;
            const key = `${a.build}|${c}|${deltas}`;
            const entry = table.get(key) ?? { cpuPerRun: [], firstMs: [] };
            entry.cpuPerRun.push(cpuPerRun);
            entry.firstMs.push(median(firsts));
            table.set(key, entry);
            console.log(
              `round ${round} c=${String(c).padEnd(3)} chunks=${String(deltas).padEnd(5)} ${path.basename(a.build).padEnd(12)} events/run ${(events / RUNS).toFixed(0).padStart(5)}  adapter CPU ${cpuPerRun.toFixed(0).padStart(6)} µs/run  first chunk ${median(firsts).toFixed(2)} ms`,
            );
          }
        }
      }
    }
  } finally {
    for (const { child } of adapters) child.kill("SIGTERM");
    upstream.kill("SIGTERM");
    await Promise.all([...adapters.map((a) => once(a.child, "exit")), once(upstream, "exit")]);
    rmSync(dir, { recursive: true, force: true });
  }
  // Per run and per event, from the smallest and the largest chunk count (medians over rounds).
  const [few, many] = [Math.min(...DELTAS), Math.max(...DELTAS)];
  for (const c of CONCURRENCY)
    for (const { build } of adapters) {
      const at = (d: number) => median(table.get(`${build}|${c}|${d}`)!.cpuPerRun);
      const perEvent = many > few ? (at(many) - at(few)) / (many - few) : NaN;
      const perRun = at(few) - perEvent * few;
      const first = median(table.get(`${build}|${c}|${few}`)!.firstMs);
      console.log(
        `c=${String(c).padEnd(3)} ${build}: adapter CPU ${perRun.toFixed(0)} µs per run + ${perEvent.toFixed(1)} µs per chunk; first chunk ${first.toFixed(2)} ms (medians of ${ROUNDS} rounds)`,
      );
    }
}

if (process.argv.includes("--serve-upstream")) serveUpstream();
else await main();
