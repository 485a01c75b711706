// A managed A2A server for the adapter: `iac-code a2a` as a child process on a
// free loopback port with a random bearer token, probed for readiness, and
// stopped with the adapter (SIGTERM, then SIGKILL after a grace period). The
// child holds an IPC channel to the adapter and stops when it closes, so it
// never outlives a killed adapter; its PID is kept in a file so that a
// restarted adapter first waits for (or ends) a previous child still stopping.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { PACKAGE_ROOT } from "../package-root.js";

const BIN = path.join(PACKAGE_ROOT, "bin", "iac-code.mjs");

export interface ManagedA2a {
  url: string;
  token: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export interface ManagedA2aOptions {
  env?: NodeJS.ProcessEnv;
  /** The adapter's workspace roots, given to the child too. */
  allowedCwds?: readonly string[];
  /** Extra arguments for `iac-code a2a` (e.g. --config). */
  extraArgs?: string[];
  readyTimeoutMs?: number;
  /** Where the child's stdout/stderr go; inherited by default. */
  stdio?: "inherit" | "ignore" | "pipe";
  /** Where the child's PID is kept while it runs (a restarted adapter reads it). */
  pidFile?: string;
  /** How long a previous child may take to stop on its own before it is killed (default 15 s). */
  staleWaitMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether `pid` runs this CLI's `a2a` command (PIDs get reused: nothing else is
 * waited for or killed). Reads /proc; elsewhere, or for a zombie, false.
 */
function isManagedChild(pid: number): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return argv.includes(BIN) && argv.includes("a2a");
  } catch {
    return false;
  }
}

/** Waits for the child a previous adapter left (it stops by itself once its parent is gone), else kills it. */
export async function reapStaleChild(pidFile: string, waitMs: number): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, "utf8").trim());
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) return;
  const deadline = Date.now() + waitMs;
  while (isManagedChild(pid) && Date.now() < deadline) await sleep(100);
  if (isManagedChild(pid)) {
    process.kill(pid, "SIGKILL");
    for (let i = 0; i < 50 && isManagedChild(pid); i++) await sleep(100);
  }
  rmSync(pidFile, { force: true });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The child's environment: the parent's, plus the token and the allowed
 * workspace roots (an explicit IACCODE_A2A_ALLOWED_CWDS wins, else the
 * adapter's configured roots, else IAC_CODE_AGUI_ALLOWED_CWDS).
 */
export function managedEnv(
  parent: NodeJS.ProcessEnv,
  token: string,
  allowedCwds?: readonly string[],
): NodeJS.ProcessEnv {
  // IAC_CODE_MANAGED_A2A: the child prints no banner of its own (the adapter's names it as internal).
  const env: NodeJS.ProcessEnv = { ...parent, IACCODE_A2A_HTTP_TOKEN: token, IAC_CODE_MANAGED_A2A: "1" };
  const roots = allowedCwds?.length ? allowedCwds.join(path.delimiter) : parent.IAC_CODE_AGUI_ALLOWED_CWDS;
  if (roots && !parent.IACCODE_A2A_ALLOWED_CWDS) env.IACCODE_A2A_ALLOWED_CWDS = roots;
  return env;
}

export function managedArgs(port: number, extra: string[] = []): string[] {
  return [
    BIN,
    "a2a",
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--thinking-exposure",
    "tool-trace",
    "--thinking-exposure",
    "raw-thinking",
    ...extra,
  ];
}

async function probe(url: string, token: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}health`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(500),
    });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

export async function startManagedA2a(options: ManagedA2aOptions = {}): Promise<ManagedA2a> {
  const port = await freePort();
  const token = randomBytes(32).toString("base64url");
  const url = `http://127.0.0.1:${port}/`;
  if (options.pidFile) await reapStaleChild(options.pidFile, options.staleWaitMs ?? 15_000);
  const child = spawn(process.execPath, managedArgs(port, options.extraArgs), {
    env: managedEnv(options.env ?? process.env, token, options.allowedCwds),
    // The IPC channel is the child's lifeline: it closes when this process dies, however it dies.
    stdio: ["ignore", options.stdio ?? "inherit", options.stdio ?? "inherit", "ipc"],
  });
  child.channel?.unref();
  if (options.pidFile && child.pid) {
    mkdirSync(path.dirname(options.pidFile), { recursive: true, mode: 0o700 });
    writeFileSync(options.pidFile, `${child.pid}\n`, { mode: 0o600 });
  }
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code) => {
      exitCode = code;
      if (options.pidFile) rmSync(options.pidFile, { force: true });
      resolve();
    }),
  );
  const stop = async (): Promise<void> => {
    if (exitCode !== undefined) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 12_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);
  while (Date.now() < deadline) {
    if (exitCode !== undefined) {
      throw new Error(`The local A2A process exited during startup (exit code ${String(exitCode)}).`);
    }
    if (await probe(url, token)) return { url, token, child, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error("The local A2A process did not become ready in time.");
}
