// The product path of the A2A benchmark: `iac-code a2a` started the way a user
// starts it, `node bin/iac-code.mjs a2a --port 0 --persistence-dir <dir>` with
// IAC_CODE_PROVIDER=scripted and IAC_CODE_SCRIPT=<the trivial script>, in a
// clean environment of its own (HOME, IAC_CODE_CONFIG_DIR, the persistence dir
// and the workspace, its cwd, under one temp dir; no credentials, no
// IAC_CODE_* of the caller's shell). Logs go where a user would redirect them:
// a file (<dir>/server.log), at the default level.
//   runtime "trivial": the same start with the TrivialRuntime preloaded in place
//                      of the agent runtime (cli-trivial-runtime.ts): the A/B.
//   redisUrl:          --store redis --redis-url <url> (sessions shared through Redis too).
//   bin:               another checkout's bin/iac-code.mjs (an A/B of two builds).
//   BENCH_NODE_FLAGS:  extra node flags for the server (e.g. --log-deopt --logfile=<file>).
//   cpuProfileDir:     node --cpu-prof: a V8 CPU profile written there when it stops
//                      (Node 20 refuses --cpu-prof in NODE_OPTIONS: it goes on node's command line).
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";
import { PEERS_OUT, processPeer, transpilePeers, type Peer } from "./peer-process.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "bin", "iac-code.mjs");

export interface CliPeerOptions {
  /** This server's own directory (created): a2a/ persistence, config/, home/, workspace/, server.log. */
  dir: string;
  /** The scripted provider's script (trivial-script.ts). */
  script: string;
  runtime?: "agent" | "trivial";
  redisUrl?: string;
  cpuProfileDir?: string;
  /** Another checkout's bin/iac-code.mjs (an A/B of two builds); this one's by default. */
  bin?: string;
}

/** The environment of a user's shell that configured only the scripted model. */
function userEnv(options: CliPeerOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: path.join(options.dir, "home"),
    IAC_CODE_CONFIG_DIR: path.join(options.dir, "config"),
    IAC_CODE_PROVIDER: "scripted",
    IAC_CODE_SCRIPT: options.script,
  };
  if (process.env.IAC_CODE_FROM_SOURCE === "1") env.IAC_CODE_FROM_SOURCE = "1";
  return env;
}

export async function startCliPeer(options: CliPeerOptions): Promise<Peer> {
  const trivial = options.runtime === "trivial";
  for (const sub of ["home", "config", "workspace"])
    mkdirSync(path.join(options.dir, sub), { recursive: true });
  if (trivial) transpilePeers();
  const preload = trivial
    ? ["--import", pathToFileURL(path.join(PEERS_OUT, "cli-trivial-runtime.js")).href]
    : [];
  const profiler = options.cpuProfileDir ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const args = [
    ...profiler,
    ...(process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(" ") : []),
    ...preload,
    options.bin ?? BIN,
    "a2a",
    "--port",
    "0",
    "--persistence-dir",
    path.join(options.dir, "a2a"),
    ...(options.redisUrl ? ["--store", "redis", "--redis-url", options.redisUrl] : []),
  ];
  const logFile = path.join(options.dir, "server.log");
  const log = openSync(logFile, "a");
  const spawned = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: path.join(options.dir, "workspace"),
    env: userEnv(options),
    stdio: ["ignore", "pipe", log],
  });
  closeSync(log);
  const banner = await new Promise<string>((resolve, reject) => {
    let out = "";
    const onData = (chunk: Buffer) => {
      out += chunk.toString("utf8");
      // The banner line (V8 flags such as --trace-deopt may print lines of their own first).
      const line = /^iac-code A2A server .*$/m.exec(out);
      if (!line) return;
      child.stdout!.off("data", onData);
      child.stdout!.resume();
      resolve(line[0]);
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) =>
      reject(
        new Error(
          `iac-code a2a exited (${String(code)}): ${out}${readFileSync(logFile, "utf8").slice(-2000)}`,
        ),
      ),
    );
  });
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(banner)?.[1];
  const model = /model ([^;),]+)/.exec(banner)?.[1];
  // A hook that matched nothing would leave the agent runtime in place and measure it twice.
  const expected = trivial ? "trivial/trivial" : "scripted/";
  if (!url || !model?.startsWith(expected)) {
    child.kill("SIGTERM");
    throw new Error(`unexpected banner (expected model ${expected}…): ${banner}`);
  }
  const spawnToReadyMs = performance.now() - spawned;
  return processPeer(child, { jsonRpc: url, startMs: spawnToReadyMs, spawnToReadyMs });
}
