/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// A log destination never holds up a stop (issue 21). Each server command is
// started by its CLI the way a shell does `iac-code … > fifo` (or `2> fifo`),
// with a reader on the FIFO, or a reader that never reads (the pipe full). A
// turn waiting for permission is acknowledged (its task persisted), the
// reader is killed with SIGKILL, then SIGTERM: the server exits 0 within
// shutdown-timeout-seconds (2 here; asserted with 3 s to spare), the managed
// A2A child with it, and a server restarted on the same persistence dir reads
// the task back with GetTask.
import { HttpAgent, type Interrupt } from "@ag-ui/client";
import { expect } from "chai";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { rpc, type AnyJson } from "../a2a/helpers.js";
import { agentRun } from "../agui/harness.js";
import {
  BIN,
  cleanEnv,
  removeDir,
  SCRIPTS,
  sendUntilInput,
  startCli,
  tempDir,
  type CliChild,
} from "../e2e/helpers.js";

const SHUTDOWN_TIMEOUT_S = 2;
/** Generous: the bound asserted is the timeout plus this. */
const SPARE_MS = 3000;

type Stream = "stdout" | "stderr";
type Reader = "killed" | "stalled";

/** True while `pid` is a live (not zombie) process. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

const exitOf = (proc: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null)
      resolve({ code: proc.exitCode, signal: proc.signalCode });
    else proc.once("exit", (code, signal) => resolve({ code, signal }));
  });

/** A FIFO's reader: `cat` (its output read here), or a process that holds it open and never reads. */
function startReader(fifo: string, kind: Reader): { proc: ChildProcess; output: () => string } {
  const proc =
    kind === "killed"
      ? spawn("cat", [fifo], { stdio: ["ignore", "pipe", "ignore"] })
      : spawn("/bin/sh", ["-c", 'exec sleep 600 < "$0"', fifo], { stdio: "ignore" });
  let out = "";
  proc.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  return { proc, output: () => out };
}

/** Fills the FIFO through a description of our own (then lets it go), once its reader has it open. */
async function fillPipe(fifo: string): Promise<void> {
  let fd: number | undefined;
  for (let i = 0; i < 250 && fd === undefined; i++) {
    try {
      fd = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    } catch (error) {
      // ENXIO: no reader yet.
      if ((error as NodeJS.ErrnoException).code !== "ENXIO") throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  if (fd === undefined) throw new Error("the FIFO's reader never opened it");
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(64 * 1024, "."));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
  } finally {
    fs.closeSync(fd);
  }
}

interface PipedServer {
  proc: ChildProcess;
  url: string;
  /** The FIFO's reader (`cat`, or the one that never reads). */
  reader: ChildProcess;
  output(): string;
}

/**
 * `iac-code <args>` with `stream` redirected to a FIFO by a shell (`exec … > fifo`,
 * so the server is the shell's process and opens nothing itself), the other stream
 * piped here. Resolves once the server announced its URL (on whichever stream).
 */
async function startOnFifo(
  dir: string,
  args: string[],
  stream: Stream,
  reader: Reader,
  env: NodeJS.ProcessEnv,
): Promise<PipedServer> {
  const fifo = path.join(dir, `${stream}.fifo`);
  execFileSync("mkfifo", [fifo]);
  const r = startReader(fifo, reader);
  const redirect = stream === "stdout" ? ">" : "2>";
  const proc = spawn(
    "/bin/sh",
    ["-c", `exec "$@" ${redirect}"$LOG_FIFO"`, "sh", process.execPath, BIN, ...args],
    {
      env: { ...env, LOG_FIFO: fifo },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let piped = "";
  proc.stdout.on("data", (d: Buffer) => (piped += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (piped += d.toString()));
  const output = () => `${piped}\n${r.output()}`;
  // A reader that never reads: fill the pipe as soon as it is open (before the server writes much).
  if (reader === "stalled") await fillPipe(fifo);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /listening on (http:\/\/\S+?)[\s,)]/.exec(output());
      if (m) {
        clearInterval(timer);
        resolve(m[1].endsWith("/") ? m[1] : `${m[1]}/`);
      } else if (proc.exitCode !== null || proc.signalCode !== null) {
        clearInterval(timer);
        reject(
          new Error(
            `iac-code ${args.join(" ")} exited (${String(proc.exitCode ?? proc.signalCode)}): ${output()}`,
          ),
        );
      }
    }, 50);
  });
  return { proc, url, reader: r.proc, output };
}

/** Kills the FIFO's reader (SIGKILL) and waits until it is gone. */
async function killReader(server: PipedServer): Promise<void> {
  const gone = exitOf(server.reader);
  server.reader.kill("SIGKILL");
  await gone;
}

/** SIGTERM, then how the server ended and how long it took (SIGKILL after timeout + 15 s, so the suite goes on). */
async function terminate(
  proc: ChildProcess,
): Promise<{ code: number | null; signal: string | null; ms: number }> {
  const start = Date.now();
  const exit = exitOf(proc);
  proc.kill("SIGTERM");
  const stuck = setTimeout(() => proc.kill("SIGKILL"), SHUTDOWN_TIMEOUT_S * 1000 + 15_000);
  const end = await exit;
  clearTimeout(stuck);
  return { ...end, ms: Date.now() - start };
}

/** The A2A server config on `dir`: scripted model, persistence under `dir`, workspaces under `dir`. */
function a2aConfig(dir: string, script: string): string {
  const file = path.join(dir, "a2a-server.yml");
  fs.writeFileSync(
    file,
    [
      "port: 0",
      `persistence-dir: ${JSON.stringify(path.join(dir, "persist"))}`,
      `allowed-cwds: [${JSON.stringify(dir)}]`,
      `script: ${JSON.stringify(path.join(SCRIPTS, script))}`,
      "provider: scripted",
      `shutdown-timeout-seconds: ${SHUTDOWN_TIMEOUT_S}`,
      "",
    ].join("\n"),
  );
  return file;
}

/**
 * A new `iac-code a2a` on the same config (same persistence dir): the task as GetTask
 * reads it. Tasks belong to the caller's scheme: the managed child's were created by a
 * bearer caller, so they are read back with a bearer token (any one the new server takes).
 */
async function taskAfterRestart(
  configFile: string,
  env: NodeJS.ProcessEnv,
  taskId: string,
  owner: "anonymous" | "bearer",
): Promise<AnyJson> {
  let again: CliChild | undefined;
  const token = "log-pipe-restart-token";
  try {
    again = await startCli(
      ["a2a", "--config", configFile],
      owner === "bearer" ? { ...env, IACCODE_A2A_HTTP_TOKEN: token } : env,
    );
    const headers: Record<string, string> = owner === "bearer" ? { Authorization: `Bearer ${token}` } : {};
    const reply = await rpc(again.url, "GetTask", { id: taskId }, headers);
    expect(reply.body.error, JSON.stringify(reply.body.error)).to.equal(undefined);
    return reply.body.result as AnyJson;
  } finally {
    await again?.stop();
  }
}

describe("a broken log pipe does not hold up a stop (real CLI, FIFO)", function () {
  this.timeout(120_000);
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let workspace: string;
  let server: PipedServer | undefined;
  beforeEach(() => {
    dir = tempDir("log-pipe-");
    workspace = path.join(dir, "workspace");
    fs.mkdirSync(workspace);
    env = cleanEnv(dir, { IAC_CODE_CONFIG_DIR: path.join(dir, "config") });
  });
  afterEach(async () => {
    if (server) {
      for (const proc of [server.proc, server.reader])
        if (proc.exitCode === null && proc.signalCode === null) {
          const gone = exitOf(proc);
          proc.kill("SIGKILL");
          await gone;
        }
    }
    server = undefined;
    removeDir(dir);
  });

  const cases: Array<{ stream: Stream; reader: Reader; extra: string[] }> = [
    { stream: "stdout", reader: "killed", extra: ["--log-to-stdout"] },
    { stream: "stderr", reader: "killed", extra: [] },
    { stream: "stderr", reader: "stalled", extra: [] },
  ];

  for (const { stream, reader, extra } of cases) {
    const what = reader === "killed" ? "whose reader was killed" : "that is full (its reader never reads)";
    it(`iac-code a2a, ${stream}${extra.length ? ` (${extra.join(" ")})` : ""} to a FIFO ${what}: SIGTERM exits 0 within the timeout; the task is kept`, async () => {
      const configFile = a2aConfig(dir, "e2e-a2a.yaml");
      server = await startOnFifo(dir, ["a2a", "--config", configFile, ...extra], stream, reader, env);
      const waiting = await sendUntilInput(server.url, "[WRITE] then stop", {
        metadata: { iac_code: { cwd: workspace } },
      });
      // The reader goes after the server's last line and before the stop: its first lines
      // into the broken pipe are those of the stop itself (what used to hang).
      if (reader === "killed") await killReader(server);

      const end = await terminate(server.proc);
      expect(end, server.output()).to.deep.include({ code: 0, signal: null });
      expect(end.ms).to.be.below(SHUTDOWN_TIMEOUT_S * 1000 + SPARE_MS);

      const task = await taskAfterRestart(configFile, env, waiting.taskId, "anonymous");
      expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
      expect(task.metadata.iac_code.input.inputId).to.equal(waiting.envelope.inputId);
    });
  }

  // serve is agui with other defaults: one case each way between them.
  const adapterCases: Array<{ command: "serve" | "agui"; stream: Stream; reader: Reader; extra: string[] }> =
    [
      { command: "serve", stream: "stdout", reader: "killed", extra: ["--log-to-stdout"] },
      { command: "agui", stream: "stderr", reader: "killed", extra: [] },
      { command: "serve", stream: "stderr", reader: "stalled", extra: [] },
    ];

  for (const { command, stream, reader, extra } of adapterCases) {
    const what = reader === "killed" ? "whose reader was killed" : "that is full (its reader never reads)";
    it(`iac-code ${command} and its managed A2A child, ${stream}${extra.length ? ` (${extra.join(" ")})` : ""} to a FIFO ${what}: SIGTERM exits 0 within the timeout; the task is kept`, async () => {
      const configFile = a2aConfig(dir, "e2e-agui.yaml");
      const args = [
        command,
        "--port",
        "0",
        "--a2a-config",
        configFile,
        "--allowed-cwds",
        dir,
        "--shutdown-timeout-seconds",
        String(SHUTDOWN_TIMEOUT_S),
        ...extra,
      ];
      server = await startOnFifo(dir, args, stream, reader, env);
      const childPid = Number(fs.readFileSync(path.join(dir, "config", "agui", "managed-a2a.pid"), "utf8"));
      const threadId = "log-pipe-thread";
      const agent = new HttpAgent({
        url: server.url,
        threadId,
        initialMessages: [{ id: "u-1", role: "user", content: "[WRITE] then stop" }],
      });
      const run = await agentRun(agent, {
        runId: "run-1",
        forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "inv-1", cwd: workspace } },
      });
      const outcome = run.events.at(-1)!.outcome as { type: string; interrupts: Interrupt[] };
      expect(outcome.type).to.equal("interrupt");
      const thread = JSON.parse(
        fs.readFileSync(path.join(dir, "config", "agui", "threads", `${threadId}.json`), "utf8"),
      ) as { execution: { taskId: string } };
      if (reader === "killed") await killReader(server);

      const end = await terminate(server.proc);
      expect(end, server.output()).to.deep.include({ code: 0, signal: null });
      expect(end.ms).to.be.below(SHUTDOWN_TIMEOUT_S * 1000 + SPARE_MS);
      expect(running(childPid), "the managed A2A child is gone too").to.equal(false);

      const task = await taskAfterRestart(configFile, env, thread.execution.taskId, "bearer");
      expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
      expect(task.metadata.iac_code.input.inputId).to.equal(outcome.interrupts[0].id);
    });
  }
});
