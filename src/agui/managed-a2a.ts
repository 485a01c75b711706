// A managed A2A server for the adapter: `iac-code a2a` as a child process on a
// free loopback port with a random bearer token, probed for readiness, and
// stopped with the adapter (SIGTERM, then SIGKILL after a grace period).
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/iac-code.mjs");

export interface ManagedA2a {
  url: string;
  token: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export interface ManagedA2aOptions {
  env?: NodeJS.ProcessEnv;
  /** Extra arguments for `iac-code a2a` (e.g. --config). */
  extraArgs?: string[];
  readyTimeoutMs?: number;
  /** Where the child's stdout/stderr go; inherited by default. */
  stdio?: "inherit" | "ignore" | "pipe";
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

/** The child's environment: the parent's, plus the token and the allowed workspace roots. */
export function managedEnv(parent: NodeJS.ProcessEnv, token: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...parent, IACCODE_A2A_HTTP_TOKEN: token };
  if (parent.IAC_CODE_AGUI_ALLOWED_CWDS && !parent.IACCODE_A2A_ALLOWED_CWDS) {
    env.IACCODE_A2A_ALLOWED_CWDS = parent.IAC_CODE_AGUI_ALLOWED_CWDS;
  }
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
  const child = spawn(process.execPath, managedArgs(port, options.extraArgs), {
    env: managedEnv(options.env ?? process.env, token),
    stdio: ["ignore", options.stdio ?? "inherit", options.stdio ?? "inherit"],
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code) => {
      exitCode = code;
      resolve();
    }),
  );
  const stop = async (): Promise<void> => {
    if (exitCode !== undefined) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
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
