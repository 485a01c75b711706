// Process hygiene with the real CLI: kill -9 of the adapter takes the managed
// A2A child with it and a restart on the same directories works; kill -9 of
// the managed child is logged and answered by a respawn; an A2A
// server whose stdout/stderr were closed keeps serving and stops on SIGTERM; a
// child spawned with an IPC channel stops when the channel closes; a graceful
// stop that hangs still ends within the shutdown timeout, after `keep`.
import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { forcedReserveMs, handleStopSignals } from "../../src/server/shutdown.js";

const BIN = path.resolve(import.meta.dirname, "../../bin/iac-code.mjs");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function cleanEnv(configDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, IAC_CODE_CONFIG_DIR: configDir };
  for (const k of Object.keys(env))
    if (/^(IAC_CODE_|IACCODE_)/.test(k) && k !== "IAC_CODE_CONFIG_DIR" && k !== "IAC_CODE_FROM_SOURCE")
      delete env[k];
  return env;
}

/** True while `pid` is a live (not zombie) process. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (check()) return true;
  return check();
}

/** Starts `iac-code agui` on a free port; resolves with its URL once it listens. */
async function startAdapter(
  configDir: string,
  options: { detached?: boolean } = {},
): Promise<{ proc: ChildProcess; url: string; stderr: () => string }> {
  const proc = spawn(process.execPath, [BIN, "agui", "--port", "0", "--log-format", "json"], {
    env: cleanEnv(configDir),
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.detached,
  });
  let out = "";
  let err = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`adapter did not start: ${out}`)), 30_000);
    proc.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const match = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    proc.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    proc.once("exit", (code) => reject(new Error(`adapter exited with ${code}: ${out}`)));
  });
  return { proc, url, stderr: () => err };
}

const exited = (proc: ChildProcess) =>
  new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null)
      resolve({ code: proc.exitCode, signal: proc.signalCode });
    else proc.once("exit", (code, signal) => resolve({ code, signal }));
  });

describe("process hygiene (real CLI)", function () {
  this.timeout(90_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "hygiene-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("kill -9 of the adapter: the managed A2A child goes too; a restart on the same dirs works", async () => {
    const pidFile = path.join(dir, "agui", "managed-a2a.pid");
    const first = await startAdapter(dir);
    const childPid = Number(readFileSync(pidFile, "utf8"));
    expect(running(childPid)).to.equal(true);
    first.proc.kill("SIGKILL");
    await exited(first.proc);
    expect(await until(() => !running(childPid), 15_000), "orphaned child still running").to.equal(true);

    const second = await startAdapter(dir);
    try {
      const health = (await (await fetch(`${second.url}health`)).json()) as { runtime?: { demo?: boolean } };
      expect(health.runtime?.demo).to.equal(true);
      const newChild = Number(readFileSync(pidFile, "utf8"));
      expect(newChild).to.not.equal(childPid);
      expect(running(newChild)).to.equal(true);
    } finally {
      second.proc.kill("SIGTERM");
      expect((await exited(second.proc)).code).to.equal(0);
    }
    expect(existsSync(pidFile), "the pid file goes with the child").to.equal(false);
  });

  it("kill -9 of the managed A2A child: the adapter logs it, respawns it and says so on /health", async () => {
    const pidFile = path.join(dir, "agui", "managed-a2a.pid");
    const adapter = await startAdapter(dir);
    try {
      const childPid = Number(readFileSync(pidFile, "utf8"));
      process.kill(childPid, "SIGKILL");
      type Health = { a2a?: { state: string; restarts: number; lastExit?: { signal: string | null } } };
      let health: Health = {};
      for (const end = Date.now() + 60_000; Date.now() < end; await sleep(100)) {
        health = (await (await fetch(`${adapter.url}health`)).json()) as Health;
        if (health.a2a?.state === "up" && health.a2a.restarts === 1) break;
      }
      expect(health.a2a, JSON.stringify(health)).to.deep.include({ state: "up", restarts: 1 });
      expect(health.a2a?.lastExit?.signal).to.equal("SIGKILL");
      const newPid = Number(readFileSync(pidFile, "utf8"));
      expect(newPid).to.not.equal(childPid);
      expect(running(newPid)).to.equal(true);
      const lines = adapter
        .stderr()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.find((l) => l.msg === "managed A2A server exited; respawning")).to.deep.include({
        pid: childPid,
        signal: "SIGKILL",
        code: null,
      });
      expect(lines.find((l) => l.msg === "managed A2A server is back")).to.deep.include({
        pid: newPid,
        restarts: 1,
      });
      // /health names where the respawned server listens now (the banner printed the first one).
      const back = lines.find((l) => l.msg === "managed A2A server is back")!;
      expect((health.a2a as { url?: string }).url).to.equal(back.url);
    } finally {
      adapter.proc.kill("SIGTERM");
      expect((await exited(adapter.proc)).code).to.equal(0);
    }
    expect(existsSync(pidFile), "the pid file goes with the child").to.equal(false);
  });

  it("a second adapter on the same home refuses at once in one line naming the holder; the first one's child is untouched", async () => {
    const pidFile = path.join(dir, "agui", "managed-a2a.pid");
    const first = await startAdapter(dir);
    try {
      const childPid = Number(readFileSync(pidFile, "utf8"));
      const second = spawn(process.execPath, [BIN, "serve", "--port", "0"], {
        env: cleanEnv(dir),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      second.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
      const end = await Promise.race([exited(second), sleep(10_000).then(() => "still running" as const)]);
      expect(end, err).to.deep.equal({ code: 1, signal: null });
      expect(err.trim().split("\n"), err).to.have.length(1);
      expect(err).to.include(`in use by another iac-code AG-UI adapter (PID ${first.proc.pid})`);
      expect(err).to.include("IAC_CODE_CONFIG_DIR");
      // The old bug killed the first adapter's child ~15 s after the second started.
      await sleep(1000);
      expect(running(childPid)).to.equal(true);
      expect(Number(readFileSync(pidFile, "utf8"))).to.equal(childPid);
      const health = (await (await fetch(`${first.url}health`)).json()) as { a2a?: Record<string, unknown> };
      expect(health.a2a).to.deep.include({ state: "up", restarts: 0 });
    } finally {
      first.proc.kill("SIGTERM");
      expect((await exited(first.proc)).code).to.equal(0);
    }
    // Once the first has stopped, the home is free again.
    const third = await startAdapter(dir);
    third.proc.kill("SIGTERM");
    expect((await exited(third.proc)).code).to.equal(0);
  });

  it("Ctrl-C to the process group stops the adapter and its managed child cleanly, without a forced stop", async () => {
    const pidFile = path.join(dir, "agui", "managed-a2a.pid");
    const adapter = await startAdapter(dir, { detached: true });
    const childPid = Number(readFileSync(pidFile, "utf8"));
    // As a terminal's Ctrl-C (or systemd's KillMode=control-group) does: every process of the group.
    process.kill(-adapter.proc.pid!, "SIGINT");
    const end = await Promise.race([exited(adapter.proc), sleep(15_000).then(() => "hung" as const)]);
    expect(end, adapter.stderr()).to.deep.equal({ code: 0, signal: null });
    expect(await until(() => !running(childPid), 5000), "the child is gone").to.equal(true);
    expect(adapter.stderr()).to.not.include("stopping without waiting any longer");
  });

  it("an A2A server whose stdout and stderr are closed keeps serving and exits 0 on SIGTERM", async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const proc = spawn(process.execPath, [BIN, "a2a", "--port", String(port), "--debug"], {
      env: cleanEnv(dir),
      stdio: ["ignore", "pipe", "pipe"],
    });
    await new Promise((resolve) => proc.stderr.once("data", resolve));
    proc.stdout.destroy();
    proc.stderr.destroy();
    let ok = false;
    for (let i = 0; i < 100 && !ok; i++) {
      ok = await fetch(`http://127.0.0.1:${port}/health`)
        .then((r) => r.ok)
        .catch(() => false);
      if (!ok) await sleep(100);
    }
    expect(ok, "serves /health with its log destination gone").to.equal(true);
    expect(proc.exitCode).to.equal(null);
    proc.kill("SIGTERM");
    const end = await Promise.race([exited(proc), sleep(15_000).then(() => "hung" as const)]);
    expect(end).to.deep.equal({ code: 0, signal: null });
  });

  it("an A2A server spawned with an IPC channel stops when the channel closes", async () => {
    const proc = spawn(process.execPath, [BIN, "a2a", "--port", "0"], {
      env: cleanEnv(dir),
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    await new Promise((resolve) => proc.stderr!.once("data", resolve));
    proc.stderr!.resume();
    proc.disconnect();
    const end = await Promise.race([exited(proc), sleep(15_000).then(() => "hung" as const)]);
    expect(end).to.deep.equal({ code: 0, signal: null });
  });

  it("a graceful stop that hangs ends within the shutdown timeout, after keeping what must be kept", async () => {
    const signals = new EventEmitter();
    const calls: string[] = [];
    const logger = { info() {}, warn() {}, error() {}, flush() {} };
    const exitCode = new Promise<number>((resolve) => {
      handleStopSignals({
        logger,
        graceful: () => new Promise<void>(() => calls.push("graceful started")),
        keep: () => {
          calls.push("keep");
          return Promise.resolve();
        },
        timeoutMs: 200,
        signals,
        exit: resolve,
      });
    });
    const start = Date.now();
    signals.emit("SIGTERM");
    expect(await exitCode).to.equal(1);
    // The whole stop fits the timeout: the graceful part gets it less the reserve kept for `keep`.
    expect(Date.now() - start).to.be.within(200 - forcedReserveMs(200) - 10, 3000);
    expect(calls).to.deep.equal(["graceful started", "keep"]);
  });

  it("a second signal during a stuck shutdown exits at once (after keep), a finished one exits 0", async () => {
    const signals = new EventEmitter();
    const logger = { info() {}, warn() {}, error() {}, flush() {} };
    let kept = false;
    const code = new Promise<number>((resolve) =>
      handleStopSignals({
        logger,
        graceful: () => new Promise<void>(() => undefined),
        keep: () => Promise.resolve(void (kept = true)),
        timeoutMs: 60_000,
        signals,
        exit: resolve,
      }),
    );
    signals.emit("SIGINT");
    signals.emit("SIGTERM");
    expect(await code).to.equal(1);
    expect(kept).to.equal(true);
    const quick = new EventEmitter();
    const ok = new Promise<number>((resolve) =>
      handleStopSignals({
        logger,
        graceful: () => Promise.resolve(),
        timeoutMs: 1000,
        signals: quick,
        exit: resolve,
      }),
    );
    quick.emit("SIGTERM");
    expect(await ok).to.equal(0);
  });
});
