// Benchmark: AG-UI events/s through the adapter versus calling the A2A server
// directly, with the same scripted agent and the same runs, at 1 and at 16
// concurrent runs, on loopback. By default each server runs in its own process,
// as `iac-code serve` runs them (the adapter and its managed A2A child), and the
// client in this one; `--in-process` puts both servers in this process, so every
// microsecond the adapter spends is counted against the same core. Prints
// events/s, the time to the first event and to the first text, the CPU time per
// event of each server process, and the ratios AG-UI/A2A; bounded loops. The
// client reads on node:http (fetch would add the same large cost to both sides).
// The servers run from the built dist/ (IAC_CODE_FROM_SOURCE=1: src/ through tsx).
// Usage:
//   npx tsx scripts/bench/agui-vs-a2a.ts [--runs 96] [--deltas 200] [--concurrency 1,16] [--rounds 3]
//     [--only a2a|agui] [--in-process] [--profile-dir DIR]
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { SseParser } from "../../src/server/sse.js";
import type { AgentRuntime, AgentSession, RuntimeEvent, TurnInput } from "../../src/runtime/seam.js";
import { option, textOption } from "./bench-args.js";

const RUNS = option("runs", 96);
const DELTAS = option("deltas", 200);
const CONCURRENCY = (textOption("concurrency") ?? "1,16").split(",").map(Number);
const ONLY = textOption("only");
/** Alternating rounds: the ratios are taken within a round (the machine may be shared). */
const ROUNDS = option("rounds", 3);
const IN_PROCESS = process.argv.includes("--in-process");
/** Each server process writes a CPU profile there when it stops. */
const PROFILE_DIR = textOption("profile-dir");
/** The servers run from dist/ as users run them, or from src/ through tsx. */
const FROM_SOURCE = process.env.IAC_CODE_FROM_SOURCE === "1";

/** The servers' modules, from dist/ (built first, once) or src/. */
async function serverModules() {
  const root = FROM_SOURCE ? "../../src" : "../../dist/src";
  const [a2a, settings, logger, agui] = await Promise.all([
    import(`${root}/a2a/server.js`) as Promise<typeof import("../../src/a2a/server.js")>,
    import(`${root}/a2a/config/server-settings.js`) as Promise<
      typeof import("../../src/a2a/config/server-settings.js")
    >,
    import(`${root}/server/logger.js`) as Promise<typeof import("../../src/server/logger.js")>,
    import(`${root}/agui/server.js`) as Promise<typeof import("../../src/agui/server.js")>,
  ]);
  return { ...a2a, ...settings, ...logger, ...agui };
}

/** The scripted agent: DELTAS text chunks and a usage record per turn. */
class BenchRuntime implements AgentRuntime {
  openSession(o: { contextId: string; cwd: string }): Promise<AgentSession> {
    const session: AgentSession = {
      sessionId: `bench-${o.contextId}`,
      cwd: o.cwd,
      // eslint-disable-next-line @typescript-eslint/require-await -- a scripted turn has nothing to wait for
      async *runTurn(_input: TurnInput): AsyncIterable<RuntimeEvent> {
        yield { type: "message_start", messageId: "m" };
        for (let i = 0; i < DELTAS; i++) yield { type: "text_delta", messageId: "m", text: `chunk ${i} ` };
        yield {
          type: "message_end",
          messageId: "m",
          stopReason: "end_turn",
          text: "",
          usage: { inputTokens: 1, outputTokens: DELTAS, totalTokens: DELTAS + 1 },
        };
      },
      async *resumeTurn(): AsyncIterable<RuntimeEvent> {},
      pendingInputs: () => [],
      answerInput: () => false,
      close: () => Promise.resolve(),
    };
    return Promise.resolve(session);
  }
  info() {
    return { provider: "bench", model: "bench", demo: false };
  }
  close() {
    return Promise.resolve();
  }
}

interface RunResult {
  events: number;
  firstEventMs: number;
  firstTextMs: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** POSTs one run and reads its SSE stream: the events, and when the first one and the first text arrived. */
function post(url: string, headers: Record<string, string>, body: string, isText: (data: string) => boolean) {
  return new Promise<RunResult>((resolve, reject) => {
    const t0 = performance.now();
    const result: RunResult = { events: 0, firstEventMs: NaN, firstTextMs: NaN };
    const req = http.request(url, { method: "POST", agent, headers }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`));
      const parser = new SseParser();
      res.on("data", (chunk: Buffer) => {
        for (const { data } of parser.push(chunk)) {
          result.events++;
          const now = performance.now() - t0;
          if (result.events === 1) result.firstEventMs = now;
          if (Number.isNaN(result.firstTextMs) && isText(data)) result.firstTextMs = now;
        }
      });
      res.on("end", () => resolve(result));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const TOKEN = "bench-token";

/** Starts the A2A server with the scripted agent; its URL. */
async function startA2a(dir: string, workspace: string) {
  const { startA2aServer, resolveSettings, createLogger } = await serverModules();
  return startA2aServer(
    resolveSettings({ port: 0, "persistence-dir": path.join(dir, "a2a"), token: TOKEN }, {}, {}),
    {
      runtime: new BenchRuntime(),
      logger: createLogger({ silent: true }),
      cwd: workspace,
      env: { IACCODE_A2A_ALLOWED_CWDS: dir },
    },
  );
}

async function startAgui(dir: string, a2aUrl: string) {
  const { startAguiServer } = await serverModules();
  return startAguiServer({
    host: "127.0.0.1", port: 0, a2aUrl, a2aToken: TOKEN, stateDir: path.join(dir, "state"),
    idleShutdown: 0, interruptTtl: 540, allowedCwds: [dir], debug: false, logStdout: false,
  }); // prettier-ignore
}

/** CPU microseconds a process has used so far (Linux /proc; clock ticks of 10 ms). */
function processCpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

interface Servers {
  a2aUrl: string;
  aguiUrl: string;
  /** CPU µs used so far by the A2A server and by the adapter (in-process: both are this process). */
  cpu(): { a2a: number; agui: number };
  close(): Promise<void>;
}

/** `--serve a2a|agui`: one server in this process, for the parent to measure; prints its URL. */
async function serveChild(kind: string): Promise<void> {
  const dir = textOption("dir")!;
  const server =
    kind === "a2a" ? await startA2a(dir, path.join(dir, "ws")) : await startAgui(dir, textOption("a2a-url")!);
  process.stdout.write(`${server.url}\n`);
  process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
}

async function spawnServer(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const profile = PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  const child = spawn(
    process.execPath,
    [...profile, "--import", "tsx", fileURLToPath(import.meta.url), ...args],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const [line] = (await once(createInterface({ input: child.stdout }), "line")) as [string];
  return { url: line.trim(), child };
}

async function startServers(dir: string, workspace: string): Promise<Servers> {
  if (IN_PROCESS) {
    const a2a = await startA2a(dir, workspace);
    const agui = await startAgui(dir, a2a.url);
    const cpu = () => {
      const u = process.cpuUsage();
      return { a2a: u.user + u.system, agui: u.user + u.system };
    };
    return {
      a2aUrl: a2a.url,
      aguiUrl: agui.url,
      cpu,
      close: async () => (await agui.close(), await a2a.close()),
    };
  }
  const a2a = await spawnServer(["--serve", "a2a", "--dir", dir]);
  const agui = await spawnServer(["--serve", "agui", "--dir", dir, "--a2a-url", a2a.url]);
  return {
    a2aUrl: a2a.url,
    aguiUrl: agui.url,
    cpu: () => ({ a2a: processCpuUs(a2a.child.pid!), agui: processCpuUs(agui.child.pid!) }),
    close: async () => {
      for (const { child } of [agui, a2a]) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    },
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "agui-bench-"));
  const workspace = path.join(dir, "ws");
  mkdirSync(workspace);
  const servers = await startServers(dir, workspace);

  let seq = 0;
  const direct = () => {
    const i = seq++;
    return post(
      servers.a2aUrl,
      { "Content-Type": "application/json", "A2A-Version": "1.0", Authorization: `Bearer ${TOKEN}`, Accept: "text/event-stream" },
      JSON.stringify({
        jsonrpc: "2.0", id: i, method: "SendStreamingMessage",
        params: { message: { messageId: `m-${i}`, role: "ROLE_USER", parts: [{ text: "go" }], contextId: `bench-direct-${i}`, metadata: { iac_code: { cwd: workspace } } } },
      }),
      (data) => data.includes('"text":"chunk'),
    ); // prettier-ignore
  };
  const viaAgui = () => {
    const i = seq++;
    return post(
      servers.aguiUrl,
      { "Content-Type": "application/json", Accept: "text/event-stream" },
      JSON.stringify({
        threadId: `bench-thread-${i}`, runId: `run-${i}`, state: {}, tools: [], context: [],
        messages: [{ id: `u-${i}`, role: "user", content: "go" }],
        forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "bench", cwd: workspace } },
      }),
      (data) => data.includes('"TEXT_MESSAGE_CONTENT"'),
    ); // prettier-ignore
  };

  /** RUNS runs, `concurrency` at a time. */
  const measure = async (fn: () => Promise<RunResult>, concurrency: number) => {
    await Promise.all(Array.from({ length: concurrency }, fn)); // warm-up
    const results: RunResult[] = [];
    const cpu0 = servers.cpu();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async (_, w) => {
        for (let i = w; i < RUNS; i += concurrency) results.push(await fn());
      }),
    );
    const ms = performance.now() - t0;
    const cpu1 = servers.cpu();
    const events = results.reduce((n, r) => n + r.events, 0);
    return {
      events,
      ms,
      eventsPerSec: (events / ms) * 1000,
      a2aCpuUsPerEvent: (cpu1.a2a - cpu0.a2a) / events,
      aguiCpuUsPerEvent: (cpu1.agui - cpu0.agui) / events,
      firstEventMs: median(results.map((r) => r.firstEventMs)),
      firstTextMs: median(results.map((r) => r.firstTextMs)),
    };
  };
  const where = `${IN_PROCESS ? "both servers and the client in one process" : "one process per server"}, from ${FROM_SOURCE ? "src/ (tsx)" : "dist/"}`;
  try {
    console.log(`runs=${RUNS} text deltas per run=${DELTAS} rounds=${ROUNDS} (loopback, ${where})`);
    for (const c of CONCURRENCY) {
      const ratios: Record<"eventsPerSec" | "firstEvent" | "firstText" | "addedUs", number[]> = {
        eventsPerSec: [],
        firstEvent: [],
        firstText: [],
        addedUs: [],
      };
      for (let round = 1; round <= ROUNDS; round++) {
        const a = ONLY === "agui" ? undefined : await measure(direct, c);
        const g = ONLY === "a2a" ? undefined : await measure(viaAgui, c);
        for (const [name, r] of [
          ["A2A direct (SendStreamingMessage)", a],
          ["AG-UI via adapter (POST /)", g],
        ] as const) {
          if (!r) continue;
          const cpu = IN_PROCESS
            ? `process CPU ${r.a2aCpuUsPerEvent.toFixed(1)} µs/event`
            : `CPU µs/event: A2A ${r.a2aCpuUsPerEvent.toFixed(1)}, adapter ${r.aguiCpuUsPerEvent.toFixed(1)}`;
          console.log(
            `c=${String(c).padEnd(3)} round ${round} ${name.padEnd(34)} events=${r.events} ${r.eventsPerSec.toFixed(0).padStart(6)} events/s  first event ${r.firstEventMs.toFixed(2)} ms  first text ${r.firstTextMs.toFixed(2)} ms  ${cpu}`,
          );
        }
        if (!a || !g) continue;
        ratios.eventsPerSec.push(g.eventsPerSec / a.eventsPerSec);
        ratios.firstEvent.push(g.firstEventMs / a.firstEventMs);
        ratios.firstText.push(g.firstTextMs / a.firstTextMs);
        ratios.addedUs.push(((g.ms - a.ms) / g.events) * 1000);
      }
      if (!ratios.eventsPerSec.length) continue;
      const spread = (v: number[], digits = 2) =>
        `${median(v).toFixed(digits)} [${Math.min(...v).toFixed(digits)}-${Math.max(...v).toFixed(digits)}]`;
      console.log(
        `c=${String(c).padEnd(3)} ratio AG-UI/A2A, median [min-max] of ${ROUNDS} rounds: events/s ${spread(ratios.eventsPerSec)} (goal >= 0.8)  first event ${spread(ratios.firstEvent)} (goal <= 1.2)  first text ${spread(ratios.firstText)}  added per AG-UI event ${spread(ratios.addedUs, 1)} µs  load ${os.loadavg()[0].toFixed(1)}`,
      );
    }
  } finally {
    agent.destroy();
    await servers.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const serve = textOption("serve");
if (serve) await serveChild(serve);
else {
  if (!FROM_SOURCE) {
    execFileSync(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "..", "build.ts")], {
      stdio: "inherit",
    });
  }
  await main();
}
