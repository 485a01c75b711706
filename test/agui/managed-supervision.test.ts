// The adapter supervises its managed A2A child (issue 21): kill -9 of the child
// while a permission waits is answered by a respawn on the same persistence dir
// and config, /health says down then up, and the resume on the same adapter
// succeeds with the tool run once; a child that keeps failing to start is
// retried with growing, capped waits while the adapter stays up; an adapter
// that is stopping never respawns. Real `iac-code a2a` children (from the
// sources) running the scripted provider of test/e2e/a2a-crash.test.ts.
import { expect } from "chai";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HttpAgent, type Interrupt } from "@ag-ui/client";
import { parseAguiHealth } from "../../src/contract/index.js";
import type { AdapterLogger } from "../../src/agui/logger.js";
import type { RespawnBackoff } from "../../src/agui/upstream/managed-a2a.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { cleanEnv, removeDir, SCRIPTS, storedAuditLines, tempDir } from "../e2e/helpers.js";
import { agentRun, post } from "./harness.js";

interface LogLine {
  level: "info" | "warn" | "error";
  obj: Record<string, unknown>;
  msg?: string;
}

interface Setup {
  dir: string;
  workspace: string;
  configDir: string;
  configFile: string;
  stateDir: string;
  logs: LogLine[];
}

interface Health {
  status: string;
  runtime?: { provider?: string };
  a2a?: {
    state: string;
    since: string;
    restarts: number;
    nextAttemptAt?: string;
    lastExit?: { code: number | null; signal: string | null; at: string; duringStartup: boolean };
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function validConfig(s: Setup): string {
  return [
    `persistence-dir: ${JSON.stringify(path.join(s.dir, "persist"))}`,
    `allowed-cwds: [${JSON.stringify(s.dir)}]`,
    `script: ${JSON.stringify(path.join(SCRIPTS, "e2e-crash.yaml"))}`,
    "provider: scripted",
    "",
  ].join("\n");
}

function setup(): Setup {
  const dir = tempDir("agui-supervise-");
  const s: Setup = {
    dir,
    workspace: path.join(dir, "workspace"),
    configDir: path.join(dir, "config"),
    configFile: path.join(dir, "a2a-server.yml"),
    stateDir: path.join(dir, "agui-state"),
    logs: [],
  };
  mkdirSync(s.workspace, { recursive: true });
  writeFileSync(s.configFile, validConfig(s));
  return s;
}

function capture(s: Setup): AdapterLogger {
  const log =
    (level: LogLine["level"]) =>
    (obj: unknown, msg?: string): void => {
      s.logs.push({ level, obj: obj as Record<string, unknown>, msg });
    };
  return { info: log("info"), warn: log("warn"), error: log("error") };
}

function startAdapter(s: Setup, backoff: Partial<RespawnBackoff>): Promise<AguiServer> {
  return startAguiServer(
    {
      host: "127.0.0.1",
      port: 0,
      a2aUrl: "",
      // Fail fast while the child is down (waiting for it is test/agui/a2a-wait.test.ts's).
      a2aWaitSeconds: 0,
      stateDir: s.stateDir,
      idleShutdown: 0,
      interruptTtl: 540,
      allowedCwds: [s.dir],
      debug: false,
      logStdout: false,
    },
    {
      logger: capture(s),
      managed: {
        env: cleanEnv(s.dir, { IAC_CODE_CONFIG_DIR: s.configDir }),
        extraArgs: ["--config", s.configFile],
        stdio: "ignore",
        backoff,
      },
    },
  );
}

async function health(agui: AguiServer): Promise<Health> {
  const res = await fetch(new URL("/health", agui.url));
  expect(res.status).to.equal(200);
  const body = (await res.json()) as Health;
  const checked = parseAguiHealth(body);
  expect(checked.ok, JSON.stringify(checked)).to.equal(true);
  return body;
}

/** Polls /health (bounded) until `test` holds; returns that body. */
async function healthUntil(agui: AguiServer, test: (h: Health) => boolean, what: string): Promise<Health> {
  let last: Health | undefined;
  for (const end = Date.now() + 90_000; Date.now() < end; await sleep(100)) {
    last = await health(agui);
    if (test(last)) return last;
  }
  throw new Error(`/health never showed ${what}: ${JSON.stringify(last)}`);
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 90_000; Date.now() < end; await sleep(50)) if (check()) return;
  throw new Error(`timed out waiting for ${what}`);
}

/** kill -9 of a child; resolves once the adapter has seen it exit. */
async function killHard(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

/** True while `pid` is a live (not zombie) process. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Every permission audit line of every session, as committed (read once the child has stopped). */
function allAuditLines(s: Setup): ReturnType<typeof storedAuditLines> {
  return storedAuditLines(path.join(s.dir, "persist"));
}

const forwardedProps = (s: Setup) => ({
  iacCode: { schemaVersion: 1, rosInvocationId: "invocation-1", cwd: s.workspace },
});

const logged = (s: Setup, msg: string) => s.logs.filter((l) => l.msg === msg);

describe("AG-UI adapter: supervision of the managed A2A child", function () {
  this.timeout(180_000);
  let s: Setup;
  let agui: AguiServer | undefined;

  beforeEach(() => {
    s = setup();
  });
  afterEach(async () => {
    await agui?.close();
    agui = undefined;
    removeDir(s.dir);
  });

  it("kill -9 of the child while a permission waits: /health says down then up, the resume on the same adapter succeeds, the tool runs once", async () => {
    // A wait of 2 s before the respawn: the resume sent right after the kill meets a child that is not up.
    // stableMs 0: any time up counts as stable, so each crash waits initialMs again.
    agui = await startAdapter(s, { initialMs: 2000, stableMs: 0 });
    const before = await health(agui);
    expect(before.a2a).to.deep.include({ state: "up", restarts: 0 });
    expect(before.a2a?.lastExit).to.equal(undefined);

    const agent = new HttpAgent({
      url: agui.url,
      threadId: "supervised-1",
      initialMessages: [{ id: "u1", role: "user", content: "[WRITE] across a child crash" }],
    });
    const first = await agentRun(agent, { runId: "r1", forwardedProps: forwardedProps(s) });
    const outcome = first.events.at(-1)!.outcome as { type: string; interrupts: Interrupt[] };
    expect(outcome.type).to.equal("interrupt");
    const interruptId = outcome.interrupts[0].id;

    const oldChild = agui.managed!.child;
    const oldPid = oldChild.pid!;
    await killHard(oldChild);
    const down = await health(agui);
    expect(["down", "starting"]).to.include(down.a2a?.state);
    expect(down.a2a?.lastExit).to.deep.include({ code: null, signal: "SIGKILL", duringStartup: false });
    expect(down.runtime, "nothing answers for the runtime").to.equal(undefined);

    // While the child is not up a resume fails fast (a2a-wait-seconds 0), and the interrupt stays answerable.
    const early = await post(agui.url, {
      threadId: "supervised-1",
      runId: "r2",
      state: {},
      messages: [],
      tools: [],
      context: [],
      forwardedProps: forwardedProps(s),
      resume: [{ interruptId, status: "resolved", payload: { decision: "allow_once" } }],
    });
    expect(early.events.at(-1)).to.include({ type: "RUN_ERROR", code: "A2A_UNAVAILABLE" });
    expect(existsSync(path.join(s.workspace, "out.txt"))).to.equal(false);

    const up = await healthUntil(agui, (h) => h.a2a?.state === "up", "the child up again");
    expect(up.a2a).to.deep.include({ restarts: 1 });
    expect(up.a2a?.lastExit).to.deep.include({ signal: "SIGKILL" });
    expect(up.runtime).to.deep.include({ provider: "scripted" });
    expect(agui.managed!.child.pid).to.not.equal(oldPid);

    const resumed = await agentRun(agent, {
      runId: "r3",
      forwardedProps: forwardedProps(s),
      resume: [{ interruptId, status: "resolved", payload: { decision: "allow_once" } }],
    });
    expect(resumed.warnings).to.deep.equal([]);
    expect(resumed.events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    expect(readFileSync(path.join(s.workspace, "out.txt"), "utf8")).to.equal("written once\n");

    // The log says the child died (how) and when it was back.
    const died = logged(s, "managed A2A server exited; respawning");
    expect(died).to.have.length(1);
    expect(died[0]).to.deep.include({ level: "error" });
    expect(died[0].obj).to.deep.include({ pid: oldPid, code: null, signal: "SIGKILL", retryInMs: 2000 });
    const back = logged(s, "managed A2A server is back");
    expect(back).to.have.length(1);
    expect(back[0].obj).to.deep.include({ restarts: 1, pid: agui.managed!.child.pid });

    const metrics = await (await fetch(new URL("/metrics", agui.url))).text();
    expect(metrics).to.match(/^iac_code_managed_a2a_up\{server="agui"\} 1$/m);
    expect(metrics).to.match(/^iac_code_managed_a2a_restarts_total\{server="agui"\} 1$/m);

    // The respawned child had been up (stably, here): its crash waits initialMs again, not twice that.
    await killHard(agui.managed!.child);
    expect(logged(s, "managed A2A server exited; respawning").map((l) => l.obj.retryInMs)).to.deep.equal([
      2000, 2000,
    ]);
    // The tool ran once: one allow in the audit the children committed.
    await agui.close();
    agui = undefined;
    expect(allAuditLines(s).map((l) => [l.decision, l.reason])).to.deep.equal([
      ["allow_once", "user:allow_once"],
    ]);
  });

  it("a child that keeps failing to start is retried with doubling, capped waits; the adapter stays up, says so, and recovers", async () => {
    agui = await startAdapter(s, { initialMs: 100, maxMs: 400 });
    const firstUrl = agui.a2aUrl;
    // Every start from now on fails: the config names an unknown key.
    writeFileSync(s.configFile, `${validConfig(s)}not-a-setting: 1\n`);
    await killHard(agui.managed!.child);
    const failed = () => logged(s, "managed A2A server failed to start; retrying");
    await until(() => failed().length >= 3, "three failed starts");

    // Waits before each attempt: 100 ms after the crash, then doubling per failed start, capped at 400.
    const waits = [...logged(s, "managed A2A server exited; respawning"), ...failed()].map(
      (l) => l.obj.retryInMs,
    );
    expect(waits.slice(0, 4)).to.deep.equal([100, 200, 400, 400]);
    expect(failed()[0].obj).to.deep.include({ reason: "exited during startup", code: 2, restarts: 1 });

    const looping = await health(agui);
    expect(["down", "starting"]).to.include(looping.a2a?.state);
    expect(looping.a2a?.restarts).to.be.at.least(3);
    expect(looping.a2a?.lastExit).to.deep.include({ code: 2, signal: null, duringStartup: true });
    // A run meanwhile fails fast with the usual code (a2a-wait-seconds 0).
    const refused = await post(agui.url, {
      threadId: "while-down",
      runId: "r1",
      state: {},
      messages: [{ id: "m1", role: "user", content: "hello" }],
      tools: [],
      context: [],
      forwardedProps: forwardedProps(s),
    });
    expect(refused.events.at(-1)).to.include({ type: "RUN_ERROR", code: "A2A_UNAVAILABLE" });

    // Once the config is fixed the next attempt starts it (on a new port after failed starts).
    writeFileSync(s.configFile, validConfig(s));
    await healthUntil(agui, (h) => h.a2a?.state === "up", "the child up again");
    expect(agui.a2aUrl).to.match(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    if (agui.a2aUrl !== firstUrl)
      expect(logged(s, "managed A2A server is back").at(-1)?.obj.url).to.equal(agui.a2aUrl);
    const agent = new HttpAgent({
      url: agui.url,
      threadId: "after-recovery",
      initialMessages: [{ id: "u1", role: "user", content: "hello again" }],
    });
    const run = await agentRun(agent, { runId: "r1", forwardedProps: forwardedProps(s) });
    expect(run.events.at(-1)).to.deep.include({ type: "RUN_FINISHED" });
    expect(run.events.some((e) => e.type === "TEXT_MESSAGE_CONTENT" && e.delta === "Plain answer.")).to.equal(
      true,
    );

    // A crash soon after coming back (under stableMs, 60 s by default) keeps the long wait.
    await killHard(agui.managed!.child);
    expect(logged(s, "managed A2A server exited; respawning").at(-1)?.obj.retryInMs).to.equal(400);
  });

  it("an adapter that is stopping never respawns its child: not when the child dies during the stop, not during a backoff wait, not during a respawn", async () => {
    const pidFile = path.join(s.stateDir, "managed-a2a.pid");

    // The child dies once the stop has begun (as with Ctrl-C to the process group; close() says
    // stopRespawning() before anything else): it stays down, with no attempt planned.
    agui = await startAdapter(s, { initialMs: 10 });
    const child = agui.managed!.child;
    agui.managed!.stopRespawning();
    await killHard(child);
    const afterKill = agui.managed!.status();
    expect(afterKill).to.deep.include({ state: "stopped", restarts: 0 });
    expect(afterKill.nextAttemptAt).to.equal(undefined);
    await agui.close();
    expect(agui.managed!.status()).to.deep.include({ state: "stopped", restarts: 0 });
    expect(running(child.pid!)).to.equal(false);
    expect(existsSync(pidFile), "the pid file goes with the child").to.equal(false);

    // The child died earlier and the adapter waits before respawning: the stop ends the wait.
    agui = await startAdapter(s, { initialMs: 600_000 });
    await killHard(agui.managed!.child);
    expect(agui.managed!.status()).to.deep.include({ state: "down", restarts: 0 });
    await agui.close();
    expect(agui.managed!.status()).to.deep.include({ state: "stopped", restarts: 0 });

    // A respawn is under way: its child is stopped and nothing is tried again.
    agui = await startAdapter(s, { initialMs: 10 });
    const managed = agui.managed!;
    await killHard(managed.child);
    await until(
      () => managed.status().state === "starting" && managed.status().pid !== undefined,
      "a respawn",
    );
    const starting = managed.status().pid!;
    await agui.close();
    expect(managed.status()).to.deep.include({ state: "stopped", restarts: 1 });
    expect(running(starting)).to.equal(false);
    expect(existsSync(pidFile)).to.equal(false);
    expect(logged(s, "managed A2A server failed to start; retrying")).to.deep.equal([]);
    agui = undefined;
  });
});
