// Starting the benchmark's server peers (scripts/bench/a2a-peers.ts), each in a
// process of its own. The peers run as plain JavaScript, as `npm start` runs
// our server: with tsx loaded, every peer's process would also hold tsx's
// loader (about 34 MB of RSS). The peer files are transpiled into .tmp/bench/,
// two levels under the root like scripts/bench/, so their relative paths to
// dist/ and node_modules hold. IAC_CODE_FROM_SOURCE=1 runs src/ through tsx.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import ts from "typescript";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PEER_FILES = [
  "a2a-peers.ts",
  "trivial-runtime.ts",
  "trivial-sdk-executor.ts",
  "cli-trivial-runtime.ts",
  "cli-trivial-runtime-hooks.ts",
];
/** Where the peer files run from, transpiled (also the CLI peers' TrivialRuntime hook: cli-peer.ts). */
export const PEERS_OUT = path.join(ROOT, ".tmp", "bench");

export interface Peer {
  pid: number;
  jsonRpc: string;
  grpc?: string;
  /** The server's own start-up time (ms) and the time from spawn to ready. */
  startMs: number;
  spawnToReadyMs: number;
  rssMb(): number;
  /** CPU time the server process used so far (user + system, every thread), in ms. */
  cpuMs(): number;
  /** The same for its main thread alone (the JavaScript; the libuv pool's fs work and V8's helpers are apart). */
  mainThreadCpuMs(): number;
  stop(): Promise<void>;
}

let entry: string[] | undefined;

let transpiled = false;

/** Transpiles the peer files into PEERS_OUT (once per benchmark run). */
export function transpilePeers(): void {
  if (transpiled) return;
  mkdirSync(PEERS_OUT, { recursive: true });
  for (const file of PEER_FILES) {
    const { outputText } = ts.transpileModule(readFileSync(path.join(import.meta.dirname, file), "utf8"), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      fileName: file,
    });
    writeFileSync(path.join(PEERS_OUT, file.replace(/\.ts$/, ".js")), outputText);
  }
  transpiled = true;
}

/** The node arguments that run a2a-peers. */
function peersEntry(): string[] {
  if (entry) return entry;
  if (process.env.IAC_CODE_FROM_SOURCE === "1") {
    entry = ["--import", "tsx", path.join(import.meta.dirname, "a2a-peers.ts")];
    return entry;
  }
  transpilePeers();
  entry = [path.join(PEERS_OUT, "a2a-peers.js")];
  return entry;
}

/** Starts one peer (`args` as a2a-peers.ts takes them) and waits for its READY line. */
export async function startPeer(args: string[]): Promise<Peer> {
  const spawned = performance.now();
  const child: ChildProcess = spawn(process.execPath, [...peersEntry(), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const ready = /^READY (.+)$/m.exec(out);
      if (ready) resolve(ready[1]);
    });
    child.once("exit", (code) => reject(new Error(`peer ${args[0]} exited (${String(code)})`)));
  });
  const info = JSON.parse(line) as { jsonRpc: string; grpc?: string; startMs: number };
  return processPeer(child, { ...info, spawnToReadyMs: performance.now() - spawned });
}

/** A Peer over a started server process: its CPU and RSS from /proc, stop() by SIGTERM. */
export function processPeer(
  child: ChildProcess,
  info: Pick<Peer, "jsonRpc" | "grpc" | "startMs" | "spawnToReadyMs">,
): Peer {
  return {
    ...info,
    pid: child.pid!,
    cpuMs: () => statCpuMs(`/proc/${child.pid}/stat`),
    mainThreadCpuMs: () => statCpuMs(`/proc/${child.pid}/task/${child.pid}/stat`),
    rssMb: () => {
      const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1];
      return Number(kb) / 1024;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** CPU time (user + system, ms) of a /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat file. */
export function statCpuMs(file: string): number {
  // Fields 14 and 15: utime and stime in clock ticks (100 per second on Linux).
  const fields = readFileSync(file, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
