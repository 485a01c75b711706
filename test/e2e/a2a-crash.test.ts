/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// `iac-code a2a` (run from the sources) killed with SIGKILL at chosen moments,
// then restarted on the same persistence and config dirs: what a client was
// told survives, no task stays working, waiting inputs stay answerable, an
// answer's tool runs once or its task fails visibly, and one dir has one owner.
import { expect } from "chai";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  openStream,
  resultOf,
  rpc,
  stateOf,
  userMessage,
  type AnyJson,
  type LiveStream,
} from "../a2a/helpers.js";
import {
  answerMessage,
  storedAuditLines,
  cleanEnv,
  iacOf,
  removeDir,
  SCRIPTS,
  sendUntilInput,
  sourceCliArgs,
  startSourceCli,
  tempDir,
  texts,
  type CliChild,
} from "./helpers.js";

const INTERRUPTED = "Task was interrupted by process exit and cannot be revived automatically.";
const UNFINISHED = ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"];

interface Setup {
  dir: string;
  workspace: string;
  persistDir: string;
  configDir: string;
  configFile: string;
  env: NodeJS.ProcessEnv;
}

function setup(): Setup {
  const dir = tempDir("iac-crash-");
  const workspace = path.join(dir, "workspace");
  const persistDir = path.join(dir, "persist");
  const configDir = path.join(dir, "config");
  mkdirSync(workspace, { recursive: true });
  const configFile = path.join(dir, "a2a-server.yml");
  writeFileSync(
    configFile,
    [
      "port: 0",
      `persistence-dir: ${JSON.stringify(persistDir)}`,
      `allowed-cwds: [${JSON.stringify(dir)}]`,
      `script: ${JSON.stringify(path.join(SCRIPTS, "e2e-crash.yaml"))}`,
      "provider: scripted",
      "",
    ].join("\n"),
  );
  const env = cleanEnv(dir, { IAC_CODE_CONFIG_DIR: configDir });
  return { dir, workspace, persistDir, configDir, configFile, env };
}

const start = (s: Setup): Promise<CliChild> => startSourceCli(["a2a", "--config", s.configFile], s.env);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const withCwd = (s: Setup) => ({ metadata: { iac_code: { cwd: s.workspace } } });

/** Every task of the caller, through every ListTasks page. */
async function allTasks(url: string): Promise<AnyJson[]> {
  const tasks: AnyJson[] = [];
  let pageToken = "";
  do {
    const reply = await rpc(url, "ListTasks", { pageSize: 100, pageToken, historyLength: 50 });
    expect(reply.body.error, JSON.stringify(reply.body.error)).to.equal(undefined);
    const result = reply.body.result as AnyJson;
    tasks.push(...(result.tasks as AnyJson[]));
    pageToken = result.nextPageToken as string;
  } while (pageToken);
  return tasks;
}

/** What a client saw of one streamed turn: its task and the last state it was told. */
interface Seen {
  taskId?: string;
  contextId?: string;
  text: string;
  lastState?: string;
}

function follow(stream: LiveStream, seen: Seen): Promise<void> {
  return (async () => {
    for (;;) {
      const event = await stream.next().catch(() => undefined);
      if (!event) return;
      const result = resultOf(event);
      if (result?.task) {
        seen.taskId = result.task.id;
        seen.contextId = result.task.contextId;
      }
      const state = stateOf(event);
      if (state) seen.lastState = state;
    }
  })();
}

describe("e2e: kill -9 of `iac-code a2a`, then a restart on the same dirs", function () {
  this.timeout(240_000);
  let s: Setup;
  let server: CliChild | undefined;

  beforeEach(() => {
    s = setup();
  });
  afterEach(async () => {
    await server?.stop("SIGKILL");
    server = undefined;
    removeDir(s.dir);
  });

  it("refuses a second server on the same persistence dir, naming the dir and the PID; after kill -9 a restart works", async () => {
    server = await start(s);
    const second = spawn(process.execPath, sourceCliArgs(["a2a", "--config", s.configFile]), {
      env: s.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    second.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => second.once("exit", resolve));
    expect(code).to.equal(1);
    expect(stderr).to.include(s.persistDir);
    expect(stderr).to.include(`PID ${server.child.pid}`);
    // The first server is untouched.
    expect((await fetch(new URL("/health", server.url))).status).to.equal(200);

    await server.stop("SIGKILL");
    server = await start(s);
    expect((await fetch(new URL("/health", server.url))).status).to.equal(200);
  });

  it("kill -9 at 20 random moments of streamed turns: acknowledged tasks survive with their state, none stays working", async () => {
    const rounds: Seen[][] = [];
    for (let round = 0; round < 20; round += 1) {
      server = await start(s);
      // What the previous round's clients were told is there, settled.
      const listed = await allTasks(server.url);
      for (const seen of rounds.at(-1) ?? []) {
        if (!seen.taskId) continue;
        const got = (await rpc(server.url, "GetTask", { id: seen.taskId })).body.result as AnyJson;
        expect(got, `task ${seen.taskId}`).to.be.an("object");
        expect(got.history[0].parts[0].text).to.equal(seen.text);
        const state = got.status.state as string;
        if (UNFINISHED.includes(seen.lastState ?? "TASK_STATE_SUBMITTED")) {
          // Killed mid-turn: failed with the reason, or finished just before the kill.
          expect(["TASK_STATE_FAILED", "TASK_STATE_INPUT_REQUIRED"]).to.include(state);
          if (state === "TASK_STATE_FAILED") expect(got.status.message.parts[0].text).to.equal(INTERRUPTED);
        } else {
          expect(state).to.equal(seen.lastState);
        }
      }
      expect(listed.filter((task) => UNFINISHED.includes(task.status.state as string))).to.deep.equal([]);

      const seen: Seen[] = [0, 1, 2].map((i) => ({ text: `[STREAM] round ${round} turn ${i}` }));
      const streams = await Promise.all(
        seen.map((one) =>
          openStream(server!.url, "SendStreamingMessage", { message: userMessage(one.text, withCwd(s)) }),
        ),
      );
      const followed = streams.map((stream, i) => follow(stream, seen[i]));
      await sleep(Math.floor(Math.random() * 400));
      await server.stop("SIGKILL");
      await Promise.all(followed);
      rounds.push(seen);
    }

    server = await start(s);
    const tasks = await allTasks(server.url);
    expect(tasks).to.have.length(60);
    expect(tasks.filter((task) => UNFINISHED.includes(task.status.state as string))).to.deep.equal([]);
    const failed = tasks.find((task) => task.status.state === "TASK_STATE_FAILED");
    if (failed) {
      // A failed task is terminal; its context takes a new turn.
      const cancel = await rpc(server.url, "CancelTask", { id: failed.id });
      expect(cancel.body.error).to.deep.include({ code: -32002 });
      const next = await rpc(server.url, "SendMessage", {
        message: userMessage("after the crash", { contextId: failed.contextId }),
      });
      const task = (next.body.result as AnyJson).task as AnyJson;
      expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
      expect(task.history.at(-1).parts[0].text).to.equal("Plain answer.");
    }
  });

  it("kill -9 while a permission waits: after the restart the answer works and the tool runs exactly once", async () => {
    server = await start(s);
    const waiting = await sendUntilInput(server.url, "[WRITE] before the crash", withCwd(s));
    await server.stop("SIGKILL");

    server = await start(s);
    const got = (await rpc(server.url, "GetTask", { id: waiting.taskId })).body.result as AnyJson;
    expect(got.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    const stream = await openStream(server.url, "SendStreamingMessage", {
      message: answerMessage(waiting, "allow_once"),
    });
    const events = await stream.rest();
    expect(texts(events)).to.include("WRITTEN.");
    expect(stateOf(events.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(readFileSync(path.join(s.workspace, "out.txt"), "utf8")).to.equal("written once\n");
    const sessionId = iacOf(events.at(-1)!)!.iacCodeSessionId as string;
    await server.stop("SIGKILL");
    expect(storedAuditLines(s.persistDir, sessionId).map((l) => [l.decision, l.reason])).to.deep.equal([
      ["allow_once", "user:allow_once"],
    ]);
  });

  it("kill -9 0-50 ms after an answer is acknowledged: the tool ran once and the turn ended, or the task failed with a reason", async () => {
    for (let round = 0; round < 5; round += 1) {
      server = await start(s);
      const workspace = path.join(s.workspace, `round-${round}`);
      mkdirSync(workspace);
      const waiting = await sendUntilInput(server.url, `[WRITE] round ${round}`, {
        metadata: { iac_code: { cwd: workspace } },
      });
      const stream = await openStream(server.url, "SendStreamingMessage", {
        message: answerMessage(waiting, "allow_once"),
      });
      const ack = await stream.next();
      expect(resultOf(ack!).task.id).to.equal(waiting.taskId);
      await sleep(Math.floor(Math.random() * 51));
      await server.stop("SIGKILL");
      stream.stop();

      server = await start(s);
      const got = (await rpc(server.url, "GetTask", { id: waiting.taskId })).body.result as AnyJson;
      const state = got.status.state as string;
      const written = existsSync(path.join(workspace, "out.txt"));
      const sessionId = waiting.events.map((e) => iacOf(e)?.iacCodeSessionId).find(Boolean) as string;
      if (state === "TASK_STATE_FAILED") {
        expect(got.status.message.parts[0].text).to.equal(INTERRUPTED);
      } else {
        expect(state, `round ${round}`).to.equal("TASK_STATE_INPUT_REQUIRED");
        expect(got.metadata?.iac_code?.input, "not waiting any more").to.equal(undefined);
        expect(written).to.equal(true);
        expect(got.history.at(-1).parts[0].text).to.equal("WRITTEN.");
      }
      if (written) expect(readFileSync(path.join(workspace, "out.txt"), "utf8")).to.equal("written once\n");
      // Never stuck: the same answer is refused, a new turn on the context runs.
      const again = await rpc(server.url, "SendMessage", { message: answerMessage(waiting, "allow_once") });
      expect(again.body.error).to.deep.include({ code: -32602 });
      const next = await rpc(server.url, "SendMessage", {
        message: userMessage("next", { contextId: waiting.contextId }),
      });
      expect(((next.body.result as AnyJson).task as AnyJson).status.state).to.equal(
        "TASK_STATE_INPUT_REQUIRED",
      );
      await server.stop("SIGKILL");
      server = undefined;
      const allows = storedAuditLines(s.persistDir, sessionId).filter((l) => l.decision.startsWith("allow_"));
      expect(allows.length, "the tool is allowed at most once").to.be.at.most(1);
    }
  });
});
