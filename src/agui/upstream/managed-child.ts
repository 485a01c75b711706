// One managed A2A child: `iac-code a2a` as a child process on a loopback port
// with the adapter's bearer token, probed for readiness, stopped with SIGTERM
// (then SIGKILL after a grace period). The child holds an IPC channel to the
// adapter and stops when it closes, so it never outlives a killed adapter; its
// PID is kept in a file so that a restarted adapter first waits for (or ends) a
// previous child still stopping. The supervision (respawn) is in managed-a2a.ts.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { PACKAGE_ROOT } from "../../package-root.js";

const BIN = path.join(PACKAGE_ROOT, "bin", "iac-code.mjs");

/** How long a child has to stop after SIGTERM before it is killed. */
const STOP_GRACE_MS = 12_000;

export interface ManagedChildOptions {
  env?: NodeJS.ProcessEnv;
  /** The adapter's workspace roots, given to the child too. */
  allowedCwds?: readonly string[];
  /** Extra arguments for `iac-code a2a` (e.g. --config). */
  extraArgs?: string[];
  /** Where the child's stdout/stderr go; inherited by default. */
  stdio?: "inherit" | "ignore" | "pipe";
  /** Where the child's PID is kept while it runs (a restarted adapter reads it). */
  pidFile?: string;
}

/** How a child ended: its exit code, or the signal that killed it. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface LaunchedChild {
  child: ChildProcess;
  /** Resolves when the child has exited. */
  exited: Promise<ChildExit>;
  /** How it ended, once it has (set before `exited` resolves). */
  exit?: ChildExit;
  /** SIGTERM, SIGKILL after the grace period; resolves once it has exited. */
  stop(): Promise<void>;
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

/**
 * Waits for the child a previous adapter left (it stops by itself once its
 * parent is gone), else kills it. Called once this adapter holds the home
 * (server.ts takeHome): the adapter that started that child is gone.
 */
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

/** Spawns `iac-code a2a` on `port` with `token` (not yet ready: see waitUntilReady). */
export function launchManagedChild(port: number, token: string, options: ManagedChildOptions): LaunchedChild {
  const child = spawn(process.execPath, managedArgs(port, options.extraArgs), {
    env: managedEnv(options.env ?? process.env, token, options.allowedCwds),
    // The IPC channel is the child's lifeline: it closes when this process dies, however it dies.
    stdio: ["ignore", options.stdio ?? "inherit", options.stdio ?? "inherit", "ipc"],
  });
  child.channel?.unref();
  const { pidFile } = options;
  if (pidFile && child.pid) {
    mkdirSync(path.dirname(pidFile), { recursive: true, mode: 0o700 });
    writeFileSync(pidFile, `${child.pid}\n`, { mode: 0o600 });
  }
  const launched: LaunchedChild = {
    child,
    exited: new Promise<ChildExit>((resolve) =>
      child.once("exit", (code, signal) => {
        launched.exit = { code, signal };
        // Only this child's PID: a newer child may have written its own since.
        if (pidFile) removePidFile(pidFile, child.pid);
        resolve(launched.exit);
      }),
    ),
    async stop() {
      if (launched.exit) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
      await launched.exited;
      clearTimeout(timer);
    },
  };
  return launched;
}

function removePidFile(pidFile: string, pid: number | undefined): void {
  try {
    if (Number(readFileSync(pidFile, "utf8").trim()) === pid) rmSync(pidFile, { force: true });
  } catch {
    // Already gone.
  }
}

export type Readiness = { ready: true } | { ready: false; reason: "exited" | "timeout" | "stopping" };

/**
 * Polls the child's /health (0.5 s per probe, every 0.1 s) until it answers,
 * the child exits, `timeoutMs` passes or `stopping()` turns true.
 */
export async function waitUntilReady(
  launched: LaunchedChild,
  url: string,
  token: string,
  timeoutMs: number,
  stopping: () => boolean,
): Promise<Readiness> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (launched.exit) return { ready: false, reason: "exited" };
    if (stopping()) return { ready: false, reason: "stopping" };
    if (await probe(url, token)) return launched.exit ? { ready: false, reason: "exited" } : { ready: true };
    await sleep(100);
  }
  return { ready: false, reason: "timeout" };
}
