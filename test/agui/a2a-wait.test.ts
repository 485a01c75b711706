// The adapter waits a bounded time (a2a-wait-seconds) for its A2A server to
// come back instead of failing the run (issue 30): a resume started while the
// server is down (kill -9 of `iac-code a2a`, or of the managed child) goes on
// once it is back, with heartbeats meanwhile and the tool run once; past the
// bound it ends A2A_UNAVAILABLE with the interrupt kept; 0 fails at once; a
// client that leaves or cancels ends the wait and nothing is sent. The client
// rules underneath: only a request that certainly never arrived is sent again
// (reads also when they may have), never an answer whose stream broke.
import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import type { AdapterLogger } from "../../src/agui/logger.js";
import { A2aClient, A2aUnavailableError } from "../../src/agui/upstream/a2a-client.js";
import { resolveSettings } from "../../src/agui/config.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import {
  cleanEnv,
  removeDir,
  SCRIPTS,
  sourceCliArgs,
  startCli,
  storedAuditLines,
  tempDir,
  type CliChild,
} from "../e2e/helpers.js";
import { post } from "./harness.js";
import { expectStrictThreadRun, expectValidStream, types, type WireEvent } from "./helpers.js";
import { freePort } from "../fixtures/free-port.js";
import { parseSseText } from "../../src/server/sse.js";

const WAITING = "A2A server unreachable; waiting for it to come back";
const BACK = "A2A server reachable again; the run goes on";
const STOPPED = "stopped waiting for the A2A server";
const TOKEN = "a2a-wait-test-token";

interface LogLine {
  level: "info" | "warn" | "error";
  obj: Record<string, unknown>;
  msg?: string;
}

interface Setup {
  dir: string;
  /** Unique per test: the strict verifier keys threads by adapter URL, and ports get reused. */
  thread: string;
  workspace: string;
  persistDir: string;
  configFile: string;
  env: NodeJS.ProcessEnv;
  logs: LogLine[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A dir with the crash script's A2A config; `port` fixed so a restart comes back where it was. */
function setup(port: number | undefined): Setup {
  const dir = tempDir("agui-a2a-wait-");
  const s: Setup = {
    dir,
    thread: `waiting-${path.basename(dir)}`,
    workspace: path.join(dir, "workspace"),
    persistDir: path.join(dir, "persist"),
    configFile: path.join(dir, "a2a-server.yml"),
    env: cleanEnv(dir, { IAC_CODE_CONFIG_DIR: path.join(dir, "config") }),
    logs: [],
  };
  mkdirSync(s.workspace, { recursive: true });
  writeFileSync(
    s.configFile,
    [
      ...(port === undefined ? [] : [`port: ${port}`, `token: ${TOKEN}`]),
      `persistence-dir: ${JSON.stringify(s.persistDir)}`,
      `allowed-cwds: [${JSON.stringify(dir)}]`,
      `script: ${JSON.stringify(path.join(SCRIPTS, "e2e-crash.yaml"))}`,
      "provider: scripted",
      "",
    ].join("\n"),
  );
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

const logged = (s: Setup, msg: string) => s.logs.filter((l) => l.msg === msg);
const runEnded = (s: Setup, runId: string) =>
  s.logs.some((l) => l.msg === "run ended" && l.obj.runId === runId);

const startA2a = (s: Setup): Promise<CliChild> => startCli(["a2a", "--config", s.configFile], s.env);

/** The adapter in front of an explicit A2A URL (undefined: a managed child on the same config). */
function startAdapter(
  s: Setup,
  a2aUrl: string | undefined,
  a2aWaitSeconds: number | undefined,
  respawnAfterMs = 1000,
): Promise<AguiServer> {
  return startAguiServer(
    {
      host: "127.0.0.1",
      port: 0,
      a2aUrl: a2aUrl ?? "",
      ...(a2aUrl ? { a2aToken: TOKEN } : {}),
      ...(a2aWaitSeconds === undefined ? {} : { a2aWaitSeconds }),
      stateDir: path.join(s.dir, "agui-state"),
      idleShutdown: 0,
      interruptTtl: 540,
      allowedCwds: [s.dir],
      debug: false,
      logStdout: false,
    },
    {
      logger: capture(s),
      heartbeatMs: 200,
      managed: {
        env: s.env,
        extraArgs: ["--config", s.configFile],
        stdio: "ignore",
        backoff: { initialMs: respawnAfterMs, stableMs: 0 },
      },
    },
  );
}

function runBody(s: Setup, runId: string, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    threadId: s.thread,
    runId,
    state: {},
    messages: [],
    tools: [],
    context: [],
    forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "invocation-1", cwd: s.workspace } },
    ...extra,
  };
}

const allowOnce = (interruptId: string) => ({
  resume: [{ interruptId, status: "resolved", payload: { decision: "allow_once" } }],
});

/** The first run: the write asks for permission; its interrupt id and the execution id. */
async function askPermission(
  s: Setup,
  agui: AguiServer,
): Promise<{ interruptId: string; executionId: string }> {
  const first = await post(
    agui.url,
    runBody(s, "r1", { messages: [{ id: "u1", role: "user", content: "[WRITE] across an outage" }] }),
  );
  const last = first.events.at(-1)!;
  expect(last.type, JSON.stringify(last)).to.equal("RUN_FINISHED");
  const outcome = last.outcome as { type: string; interrupts: Array<{ id: string }> };
  expect(outcome.type).to.equal("interrupt");
  const session = first.events.find((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1");
  return {
    interruptId: outcome.interrupts[0].id,
    executionId: (session!.value as { executionId: string }).executionId,
  };
}

/** kill -9; resolves once the process is gone. */
async function killHard(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (check()) return;
  throw new Error(`timed out waiting for ${what}`);
}

function parseEvents(raw: string): WireEvent[] {
  return parseSseText(raw).map((event) => JSON.parse(event.data) as WireEvent);
}

/** A POST / whose SSE body is read as it comes: what arrived so far, and the end. */
interface LiveRun {
  raw(): string;
  /** Resolves once the body so far passes `test`; rejects if the run ends first. */
  until(test: (raw: string) => boolean, what: string): Promise<void>;
  end(): Promise<{ events: WireEvent[]; raw: string }>;
  /** The client goes away. */
  abort(): void;
}

async function openRun(url: string, body: unknown): Promise<LiveRun> {
  const ctl = new AbortController();
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal: ctl.signal,
  });
  expect(res.status).to.equal(200);
  let raw = "";
  let done = false;
  const decoder = new TextDecoder();
  const reader: ReadableStreamDefaultReader<Uint8Array> = res.body!.getReader();
  const reading = (async () => {
    try {
      for (;;) {
        const { done: over, value } = await reader.read();
        if (over) break;
        raw += decoder.decode(value, { stream: true });
      }
    } catch (err) {
      // The client's own abort ends the body; anything else is a failure of the test.
      if (!ctl.signal.aborted) throw err;
    } finally {
      done = true;
    }
  })();
  return {
    raw: () => raw,
    async until(test, what) {
      for (const end = Date.now() + 60_000; Date.now() < end; await sleep(20)) {
        if (test(raw)) return;
        if (done) throw new Error(`the run ended before ${what}: ${raw}`);
      }
      throw new Error(`timed out waiting for ${what}: ${raw}`);
    },
    async end() {
      await reading;
      return { events: parseEvents(raw), raw };
    },
    abort: () => ctl.abort(),
  };
}

const outFile = (s: Setup) => path.join(s.workspace, "out.txt");

/** The permission decisions the A2A server committed (read once it has stopped). */
const decisions = (s: Setup) => storedAuditLines(s.persistDir).map((l) => [l.decision, l.reason]);

/** The first A2A request of a resume. */
const PREFLIGHT = "POST iac-code/session/ensure-restored";

describe("AG-UI adapter: waiting for the A2A server to come back (a2a-wait-seconds)", function () {
  this.timeout(120_000);
  let s: Setup;
  let a2a: CliChild | undefined;
  let agui: AguiServer | undefined;

  afterEach(async () => {
    await agui?.close();
    await a2a?.stop();
    agui = a2a = undefined;
    removeDir(s.dir);
  });

  it("a-explicit a2a-url: kill -9 of the server, a resume started meanwhile waits (heartbeats flowing) and succeeds once it is back; the tool runs once", async () => {
    s = setup(await freePort());
    a2a = await startA2a(s);
    // No a2a-wait-seconds given: the default wait (30 s).
    agui = await startAdapter(s, a2a.url, undefined);
    const { interruptId } = await askPermission(s, agui);

    await killHard(a2a.child);
    a2a = undefined;
    const live = await openRun(agui.url, runBody(s, "r2", allowOnce(interruptId)));
    await until(() => logged(s, WAITING).length > 0, "the wait to start");
    // The run's stream stays open while it waits: RUN_STARTED, then heartbeats.
    await live.until((raw) => raw.includes(": heartbeat"), "a heartbeat while waiting");
    expect(types(parseEvents(live.raw()))).to.deep.equal(["RUN_STARTED"]);
    // A resume's first A2A request is the session-restore preflight (§5.5: ensure-restored, then GetTask).
    expect(logged(s, WAITING)[0].obj).to.deep.include({ method: PREFLIGHT, waitSeconds: 30 });
    await sleep(2000);
    a2a = await startA2a(s);

    const { events } = await live.end();
    const errors = events.filter((e) => e.type === "RUN_ERROR");
    expect(errors, JSON.stringify(errors)).to.deep.equal([]);
    expect(events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    await expectValidStream(events);
    expectStrictThreadRun(agui.url, s.thread, events);
    expect(readFileSync(outFile(s), "utf8")).to.equal("written once\n");
    // One line when the wait began, one when it ended.
    expect(logged(s, WAITING)).to.have.length(1);
    expect(logged(s, BACK)).to.have.length(1);
    expect(logged(s, BACK)[0].obj).to.deep.include({ method: PREFLIGHT });
    expect(logged(s, STOPPED)).to.deep.equal([]);
    await a2a.stop();
    a2a = undefined;
    expect(decisions(s)).to.deep.equal([["allow_once", "user:allow_once"]]);
  });

  it("b-the server stays away past the bound: RUN_ERROR A2A_UNAVAILABLE, the interrupt still pending; a later resume succeeds", async () => {
    s = setup(await freePort());
    a2a = await startA2a(s);
    agui = await startAdapter(s, a2a.url, 2);
    const { interruptId } = await askPermission(s, agui);

    await killHard(a2a.child);
    a2a = undefined;
    const failed = await post(agui.url, runBody(s, "r2", allowOnce(interruptId)));
    expect(failed.events.at(-1)).to.include({ type: "RUN_ERROR", code: "A2A_UNAVAILABLE" });
    expect(failed.raw).to.include(": heartbeat");
    expect(logged(s, WAITING)).to.have.length(1);
    expect(logged(s, STOPPED)).to.have.length(1);
    expect(logged(s, STOPPED)[0].obj).to.deep.include({ method: PREFLIGHT, why: "bound reached" });
    expect(logged(s, STOPPED)[0].obj.waitedMs).to.be.at.least(2000);
    expect(existsSync(outFile(s))).to.equal(false);

    a2a = await startA2a(s);
    const resumed = await post(agui.url, runBody(s, "r3", allowOnce(interruptId)));
    expect(resumed.events.at(-1), JSON.stringify(resumed.events.at(-1))).to.deep.include({
      type: "RUN_FINISHED",
      outcome: { type: "success" },
    });
    expect(readFileSync(outFile(s), "utf8")).to.equal("written once\n");
    await a2a.stop();
    a2a = undefined;
    expect(decisions(s)).to.deep.equal([["allow_once", "user:allow_once"]]);
  });

  it("c-managed child killed with SIGKILL while a thread waits for an answer: the resume waits for the respawn and succeeds", async () => {
    s = setup(undefined);
    // The respawn comes 1.5 s after the crash: the resume meets a child that is down, then starting.
    agui = await startAdapter(s, undefined, undefined, 1500);
    const { interruptId } = await askPermission(s, agui);

    await killHard(agui.managed!.child);
    const live = await openRun(agui.url, runBody(s, "r2", allowOnce(interruptId)));
    await until(() => logged(s, WAITING).length > 0, "the wait to start");
    expect(logged(s, WAITING)[0].obj.err).to.match(/the managed A2A server is (down|starting)/);
    // /health says it as today while the run waits.
    const health = (await (await fetch(new URL("/health", agui.url))).json()) as {
      a2a: { state: string };
      runtime?: unknown;
    };
    expect(health.a2a.state).to.be.oneOf(["down", "starting"]);

    const { events } = await live.end();
    const errors = events.filter((e) => e.type === "RUN_ERROR");
    expect(errors, JSON.stringify(errors)).to.deep.equal([]);
    expect(events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    await expectValidStream(events);
    expect(readFileSync(outFile(s), "utf8")).to.equal("written once\n");
    expect(agui.managed!.status()).to.deep.include({ state: "up", restarts: 1 });
    expect(logged(s, BACK)).to.have.length(1);
    await agui.close();
    agui = undefined;
    expect(decisions(s)).to.deep.equal([["allow_once", "user:allow_once"]]);
  });

  it("d-a2a-wait-seconds 0 keeps failing at once: RUN_ERROR A2A_UNAVAILABLE, no wait", async () => {
    s = setup(await freePort());
    a2a = await startA2a(s);
    agui = await startAdapter(s, a2a.url, 0);
    const { interruptId } = await askPermission(s, agui);

    await killHard(a2a.child);
    a2a = undefined;
    const failed = await post(agui.url, runBody(s, "r2", allowOnce(interruptId)));
    expect(failed.events.at(-1)).to.include({ type: "RUN_ERROR", code: "A2A_UNAVAILABLE" });
    expect(logged(s, WAITING)).to.deep.equal([]);
    expect(logged(s, STOPPED)).to.deep.equal([]);
    expect(existsSync(outFile(s))).to.equal(false);
  });

  it("a client that leaves while its resume waits ends the wait: nothing is sent, the interrupt stays answerable", async () => {
    s = setup(await freePort());
    a2a = await startA2a(s);
    agui = await startAdapter(s, a2a.url, 60);
    const { interruptId } = await askPermission(s, agui);

    await killHard(a2a.child);
    a2a = undefined;
    const live = await openRun(agui.url, runBody(s, "r2", allowOnce(interruptId)));
    await until(() => logged(s, WAITING).length > 0, "the wait to start");
    live.abort();
    await live.end();
    await until(() => runEnded(s, "r2"), "the run to end");
    expect(logged(s, STOPPED)).to.have.length(1);
    expect(logged(s, STOPPED)[0].obj).to.deep.include({ why: "client gone or run cancelled" });

    // Back again: the answer was never sent, and the interrupt still takes it (once).
    a2a = await startA2a(s);
    expect(existsSync(outFile(s))).to.equal(false);
    const resumed = await post(agui.url, runBody(s, "r3", allowOnce(interruptId)));
    expect(resumed.events.at(-1), JSON.stringify(resumed.events.at(-1))).to.deep.include({
      type: "RUN_FINISHED",
      outcome: { type: "success" },
    });
    expect(readFileSync(outFile(s), "utf8")).to.equal("written once\n");
    expect(logged(s, BACK)).to.deep.equal([]);
    await a2a.stop();
    a2a = undefined;
    expect(decisions(s)).to.deep.equal([["allow_once", "user:allow_once"]]);
  });

  it("a cancel while a resume waits ends the wait and the run (CANCELLED): the answer is never sent", async () => {
    s = setup(await freePort());
    a2a = await startA2a(s);
    agui = await startAdapter(s, a2a.url, 60);
    const { interruptId, executionId } = await askPermission(s, agui);

    await killHard(a2a.child);
    a2a = undefined;
    const live = await openRun(agui.url, runBody(s, "r2", allowOnce(interruptId)));
    await until(() => logged(s, WAITING).length > 0, "the wait to start");
    const cancel = await fetch(new URL(`extensions/iac-code/v1/executions/${executionId}/cancel`, agui.url), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ threadId: s.thread, rosInvocationId: "invocation-1" }),
    });
    expect(cancel.status).to.equal(200);
    const { events } = await live.end();
    expect(events.at(-1)).to.include({ type: "RUN_ERROR", code: "CANCELLED" });
    expect(logged(s, STOPPED)[0].obj).to.deep.include({ why: "client gone or run cancelled" });

    a2a = await startA2a(s);
    expect(existsSync(outFile(s))).to.equal(false);
    await a2a.stop();
    a2a = undefined;
    expect(decisions(s)).to.deep.equal([]);
  });
});

/** A loopback TCP server that answers each connection with `handle`, counting the requests it read. */
async function rawServer(
  handle: (socket: net.Socket, index: number) => void,
  port = 0,
): Promise<{ port: number; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.once("data", (chunk) => {
      requests.push(chunk.toString());
      handle(socket, requests.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const GET_TASK_REPLY = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { id: "t1" } });

function answerJson(socket: net.Socket, body: string): void {
  socket.end(
    `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

describe("AG-UI adapter's A2A client: what may be sent again while it waits", function () {
  this.timeout(30_000);
  const logs: LogLine[] = [];
  const logger: AdapterLogger = {
    info: (obj, msg) => logs.push({ level: "info", obj: obj as Record<string, unknown>, msg }),
    warn: (obj, msg) => logs.push({ level: "warn", obj: obj as Record<string, unknown>, msg }),
    error: (obj, msg) => logs.push({ level: "error", obj: obj as Record<string, unknown>, msg }),
  };
  const client = (port: number, maxMs = 10_000) =>
    new A2aClient({ url: `http://127.0.0.1:${port}`, wait: { maxMs, firstDelayMs: 50 }, logger });
  beforeEach(() => (logs.length = 0));

  it("a send whose connection was refused is sent once the port answers, and reaches the server once", async () => {
    const port = await freePort();
    let server: Awaited<ReturnType<typeof rawServer>> | undefined;
    const starting = sleep(700).then(async () => {
      server = await rawServer(
        (socket) =>
          socket.end(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" +
              `data: ${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { task: { id: "t1" } } })}\n\n`,
          ),
        port,
      );
    });
    try {
      const items: unknown[] = [];
      for await (const item of client(port).sendStreamingMessage({ message: {} })) items.push(item);
      await starting;
      expect(items).to.have.length(1);
      expect(server!.requests).to.have.length(1);
      expect(server!.requests[0]).to.contain('"method":"SendStreamingMessage"');
      expect(logs.map((l) => l.msg)).to.deep.equal([WAITING, BACK]);
    } finally {
      await starting;
      await server?.close();
    }
  });

  it("a send whose connection broke after it left is never sent again (an answer reaches A2A once)", async () => {
    const server = await rawServer((socket) => socket.resetAndDestroy());
    try {
      let caught: unknown;
      try {
        for await (const _ of client(server.port).sendStreamingMessage({ message: {} })) break;
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(A2aUnavailableError);
      expect((caught as A2aUnavailableError).reach).to.equal("no-answer");
      expect(server.requests).to.have.length(1);
      expect(logs).to.deep.equal([]);
    } finally {
      await server.close();
    }
  });

  it("a send cut mid-stream is not sent again", async () => {
    // Chunked: a connection that ends before the last chunk is a broken stream, not its end.
    const record = `data: ${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { task: { id: "t1" } } })}\n\n`;
    const server = await rawServer((socket) => {
      socket.write(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
          `${Buffer.byteLength(record).toString(16)}\r\n${record}\r\n`,
      );
      setTimeout(() => socket.resetAndDestroy(), 50);
    });
    try {
      const items: unknown[] = [];
      let caught: unknown;
      try {
        for await (const item of client(server.port).sendStreamingMessage({ message: {} })) items.push(item);
      } catch (err) {
        caught = err;
      }
      expect(items).to.have.length(1);
      expect(caught).to.be.instanceOf(A2aUnavailableError);
      expect(server.requests).to.have.length(1);
      expect(logs).to.deep.equal([]);
    } finally {
      await server.close();
    }
  });

  it("a read (GetTask) whose connection broke before any response is sent again", async () => {
    // The first two connections are reset once the request arrived; the third is answered.
    const server = await rawServer((socket, i) =>
      i < 2 ? socket.resetAndDestroy() : answerJson(socket, GET_TASK_REPLY),
    );
    try {
      expect(await client(server.port).getTask("t1")).to.deep.equal({ id: "t1" });
      expect(server.requests).to.have.length(3);
      expect(logs.map((l) => l.msg)).to.deep.equal([WAITING, BACK]);
    } finally {
      await server.close();
    }
  });

  it("a cancel never waits; an aborted signal ends a wait", async () => {
    const port = await freePort();
    let caught: unknown;
    try {
      await client(port).cancelTask("t1");
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(A2aUnavailableError);
    expect(logs).to.deep.equal([]);

    const abort = new AbortController();
    setTimeout(() => abort.abort(), 300);
    caught = undefined;
    try {
      await client(port).getTask("t1", { signal: abort.signal });
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(A2aUnavailableError);
    expect(logs.map((l) => l.msg)).to.deep.equal([WAITING, STOPPED]);
    expect(logs[1].obj).to.deep.include({ why: "aborted" });
  });
});

describe("a2a-wait-seconds: flag, file and environment", function () {
  this.timeout(30_000);

  it("defaults to 30; the flag beats the file, which beats the environment; 0 is allowed", () => {
    const dir = tempDir("agui-a2a-wait-config-");
    try {
      const file = path.join(dir, "agui-server.yml");
      writeFileSync(file, "a2a_wait_seconds: 5\n");
      expect(resolveSettings({}, {}).a2aWaitSeconds).to.equal(30);
      expect(resolveSettings({}, { IAC_CODE_AGUI_A2A_WAIT_SECONDS: "7.5" }).a2aWaitSeconds).to.equal(7.5);
      expect(
        resolveSettings({ config: file }, { IAC_CODE_AGUI_A2A_WAIT_SECONDS: "9" }).a2aWaitSeconds,
      ).to.equal(5);
      expect(resolveSettings({ config: file, a2aWaitSeconds: "0" }, {}).a2aWaitSeconds).to.equal(0);
      expect(resolveSettings({ a2aWaitSeconds: "12" }, {}, "serve").a2aWaitSeconds).to.equal(12);
    } finally {
      removeDir(dir);
    }
  });

  it("bad values are refused, naming the key and why", () => {
    const dir = tempDir("agui-a2a-wait-config-");
    try {
      const file = path.join(dir, "agui-server.yml");
      writeFileSync(file, "a2a-wait-seconds: -2\n");
      const refused = (options: object, env: NodeJS.ProcessEnv = {}) => {
        try {
          resolveSettings(options, env);
        } catch (err) {
          return (err as Error).message;
        }
        throw new Error(`accepted: ${JSON.stringify(options)} ${JSON.stringify(env)}`);
      };
      expect(refused({ a2aWaitSeconds: "-1" })).to.equal("Invalid --a2a-wait-seconds -1: must be >= 0");
      expect(refused({ a2aWaitSeconds: "soon" })).to.equal(
        "Invalid --a2a-wait-seconds 'soon': expected a number.",
      );
      expect(refused({}, { IAC_CODE_AGUI_A2A_WAIT_SECONDS: "30s" })).to.equal(
        "Invalid IAC_CODE_AGUI_A2A_WAIT_SECONDS '30s': expected a number.",
      );
      expect(refused({ a2aWaitSeconds: "7200" })).to.equal(
        "Invalid --a2a-wait-seconds 7200: must be <= 3600",
      );
      expect(refused({ config: file })).to.equal(`${file}:1:19: a2a-wait-seconds must be >= 0`);
    } finally {
      removeDir(dir);
    }
  });

  it("the agui command takes --a2a-wait-seconds and exits 2 (usage) on a bad one, saying which", async () => {
    const dir = tempDir("agui-a2a-wait-cli-");
    try {
      const child = spawn(
        process.execPath,
        sourceCliArgs(["agui", "--port", "0", "--a2a-wait-seconds", "-3"]),
        {
          env: cleanEnv(dir),
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(code).to.equal(2);
      expect(stderr).to.contain("Invalid --a2a-wait-seconds -3: must be >= 0");
    } finally {
      removeDir(dir);
    }
  });
});
