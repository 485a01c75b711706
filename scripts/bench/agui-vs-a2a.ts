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
// `--floors` also measures two stand-ins for any adapter, each in a process of its
// own in front of the same A2A server: a byte pipe (the cost of the extra hop
// alone) and a minimal relay (parse each A2A event, write one small AG-UI-like
// event): what no adapter process can go below on this machine.
// Usage:
//   npx tsx scripts/bench/agui-vs-a2a.ts [--runs 96] [--deltas 200] [--concurrency 1,16] [--rounds 3]
//     [--only a2a|agui] [--in-process] [--profile-dir DIR] [--floors]
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { SseParser } from "../../src/server/sse.js";
import type { AgentRuntime, AgentSession, RuntimeEvent, TurnInput } from "../../src/runtime/seam.js";
import { option, textOption } from "./bench-args.js";
import { median } from "./bench-clients.js";
import { statCpuMs } from "./peer-process.js";

const RUNS = option("runs", 96);
const DELTAS = option("deltas", 200);
const CONCURRENCY = (textOption("concurrency") ?? "1,16").split(",").map(Number);
const ONLY = textOption("only");
/** Alternating rounds: the ratios are taken within a round (the machine may be shared). */
const ROUNDS = option("rounds", 3);
const IN_PROCESS = process.argv.includes("--in-process");
const FLOORS = process.argv.includes("--floors");
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
const processCpuUs = (pid: number): number => statCpuMs(`/proc/${pid}/stat`) * 1000;

/** The process in front of the A2A server in a measurement. */
type Front = "agui" | "pipe" | "relay";

interface Servers {
  a2aUrl: string;
  aguiUrl: string;
  /** With --floors: the byte pipe's and the minimal relay's URLs (each in front of the A2A server). */
  pipeUrl?: string;
  relayUrl?: string;
  /** CPU µs used so far by each server process (in-process: all are this process). */
  cpu(): Record<Front | "a2a", number>;
  close(): Promise<void>;
}

/** A byte pipe to the A2A server: every connection relayed as is. */
function servePipe(target: URL): Promise<string> {
  const server = net.createServer((socket) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    // As node:http does: without it, Nagle's algorithm holds each small event back.
    socket.setNoDelay(true);
    upstream.setNoDelay(true);
    socket.pipe(upstream).pipe(socket);
    for (const s of [socket, upstream]) s.on("error", () => (socket.destroy(), upstream.destroy()));
  });
  return listenUrl(server);
}

/**
 * The least an adapter does: POSTs the run to the A2A server, parses each SSE
 * event and writes one small event of its own per event it read.
 */
function serveRelay(target: URL): Promise<string> {
  const upstreamAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const server = http.createServer((req, res) => {
    const body: Buffer[] = [];
    req.on("data", (chunk: Buffer) => body.push(chunk));
    req.on("end", () => {
      const up = http.request(
        target,
        { method: "POST", agent: upstreamAgent, headers: req.headers },
        (upRes) => {
          res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
          const parser = new SseParser();
          upRes.on("data", (chunk: Buffer) => {
            let out = "";
            for (const { data } of parser.push(chunk)) {
              const event = JSON.parse(data) as { result?: { statusUpdate?: unknown } };
              out += `data: ${JSON.stringify({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: event.result?.statusUpdate ? "status" : "text" })}\n\n`;
            }
            if (out) res.write(out);
          });
          upRes.on("end", () => res.end());
        },
      );
      up.on("error", () => res.destroy());
      up.end(Buffer.concat(body));
    });
  });
  return listenUrl(server);
}

async function listenUrl(server: net.Server): Promise<string> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
}

/** `--serve a2a|agui|pipe|relay`: one server in this process, for the parent to measure; prints its URL. */
async function serveChild(kind: string): Promise<void> {
  if (kind === "pipe" || kind === "relay") {
    const target = new URL(textOption("a2a-url")!);
    process.stdout.write(`${kind === "pipe" ? await servePipe(target) : await serveRelay(target)}\n`);
    process.on("SIGTERM", () => process.exit(0));
    return;
  }
  const dir = textOption("dir")!;
  const server =
    kind === "a2a" ? await startA2a(dir, path.join(dir, "ws")) : await startAgui(dir, textOption("a2a-url")!);
  process.stdout.write(`${server.url}\n`);
  process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
}

async function spawnServer(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const profile = PROFILE_DIR
    ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`, "--cpu-prof-interval=100"]
    : [];
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
      const u = process.cpuUsage().user + process.cpuUsage().system;
      return { a2a: u, agui: u, pipe: u, relay: u };
    };
    return {
      a2aUrl: a2a.url,
      aguiUrl: agui.url,
      cpu,
      close: async () => (await agui.close(), await a2a.close()),
    };
  }
  const a2a = await spawnServer(["--serve", "a2a", "--dir", dir, "--deltas", String(DELTAS)]);
  const agui = await spawnServer(["--serve", "agui", "--dir", dir, "--a2a-url", a2a.url]);
  const floors = FLOORS
    ? await Promise.all(["pipe", "relay"].map((k) => spawnServer(["--serve", k, "--a2a-url", a2a.url])))
    : [];
  const cpuOf = (s?: { child: ChildProcess }) => (s ? processCpuUs(s.child.pid!) : 0);
  return {
    a2aUrl: a2a.url,
    aguiUrl: agui.url,
    pipeUrl: floors[0]?.url,
    relayUrl: floors[1]?.url,
    cpu: () => ({ a2a: cpuOf(a2a), agui: cpuOf(agui), pipe: cpuOf(floors[0]), relay: cpuOf(floors[1]) }),
    close: async () => {
      for (const { child } of [agui, ...floors, a2a]) {
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
  /** A2A SendStreamingMessage runs, sent to `url` (the server, or a floor in front of it). */
  const a2aRuns = (url: string, isText: (data: string) => boolean) => () => {
    const i = seq++;
    return post(
      url,
      { "Content-Type": "application/json", "A2A-Version": "1.0", Authorization: `Bearer ${TOKEN}`, Accept: "text/event-stream" },
      JSON.stringify({
        jsonrpc: "2.0", id: i, method: "SendStreamingMessage",
        params: { message: { messageId: `m-${i}`, role: "ROLE_USER", parts: [{ text: "go" }], contextId: `bench-direct-${i}`, metadata: { iac_code: { cwd: workspace } } } },
      }),
      isText,
    ); // prettier-ignore
  };
  const direct = a2aRuns(servers.a2aUrl, (data) => data.includes('"text":"chunk'));
  const floors = servers.pipeUrl && servers.relayUrl
    ? [
        ["A2A via a byte pipe (floor)", "pipe", a2aRuns(servers.pipeUrl, (data) => data.includes('"text":"chunk'))],
        ["A2A via a minimal relay (floor)", "relay", a2aRuns(servers.relayUrl, (data) => data.includes('"delta":"text"'))],
      ] as const
    : []; // prettier-ignore
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
  const measure = async (fn: () => Promise<RunResult>, concurrency: number, front: Front = "agui") => {
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
      frontCpuUsPerEvent: (cpu1[front] - cpu0[front]) / events,
      firstEventMs: median(results.map((r) => r.firstEventMs)),
      firstTextMs: median(results.map((r) => r.firstTextMs)),
    };
  };
  const where = `${IN_PROCESS ? "both servers and the client in one process" : "one process per server"}, from ${FROM_SOURCE ? "src/ (tsx)" : "dist/"}`;
  try {
    console.log(`runs=${RUNS} text deltas per run=${DELTAS} rounds=${ROUNDS} (loopback, ${where})`);
    for (const c of CONCURRENCY) {
      /** Per front (agui and each floor): its ratios to direct A2A, one per round. */
      const ratios = new Map<
        string,
        Record<"eventsPerSec" | "firstEvent" | "firstText" | "addedUs", number[]>
      >();
      const line = (name: string, r: Awaited<ReturnType<typeof measure>>, round: number) => {
        const cpu = IN_PROCESS
          ? `process CPU ${r.a2aCpuUsPerEvent.toFixed(1)} µs/event`
          : `CPU µs/event: A2A ${r.a2aCpuUsPerEvent.toFixed(1)}, front ${r.frontCpuUsPerEvent.toFixed(1)}`;
        console.log(
          `c=${String(c).padEnd(3)} round ${round} ${name.padEnd(34)} events=${r.events} ${r.eventsPerSec.toFixed(0).padStart(6)} events/s  first event ${r.firstEventMs.toFixed(2)} ms  first text ${r.firstTextMs.toFixed(2)} ms  ${cpu}`,
        );
      };
      for (let round = 1; round <= ROUNDS; round++) {
        const a = ONLY === "agui" ? undefined : await measure(direct, c);
        if (a) line("A2A direct (SendStreamingMessage)", a, round);
        const fronts = [
          ...(ONLY === "a2a" ? [] : [["AG-UI via adapter (POST /)", "agui", viaAgui] as const]),
          ...floors,
        ];
        for (const [name, front, fn] of fronts) {
          const g = await measure(fn, c, front);
          line(name, g, round);
          if (!a) continue;
          const r = ratios.get(name) ?? { eventsPerSec: [], firstEvent: [], firstText: [], addedUs: [] };
          ratios.set(name, r);
          r.eventsPerSec.push(g.eventsPerSec / a.eventsPerSec);
          r.firstEvent.push(g.firstEventMs / a.firstEventMs);
          r.firstText.push(g.firstTextMs / a.firstTextMs);
          r.addedUs.push(((g.ms - a.ms) / g.events) * 1000);
        }
      }
      const spread = (v: number[], digits = 2) =>
        `${median(v).toFixed(digits)} [${Math.min(...v).toFixed(digits)}-${Math.max(...v).toFixed(digits)}]`;
      for (const [name, r] of ratios) {
        console.log(
          `c=${String(c).padEnd(3)} ratio ${name} / A2A direct, median [min-max] of ${ROUNDS} rounds: events/s ${spread(r.eventsPerSec)} (goal >= 0.8)  first event ${spread(r.firstEvent)} (goal <= 1.2)  first text ${spread(r.firstText)}  added per event ${spread(r.addedUs, 1)} µs  load ${os.loadavg()[0].toFixed(1)}`,
        );
      }
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
