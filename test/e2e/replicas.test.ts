/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// Several `iac-code a2a` replicas (real processes, from the sources) on one
// private redis-server with store: redis: any replica answers any call about a
// task, whichever replica runs its turn; kill -9 of a replica ends its running
// tasks FAILED within the lease and keeps its waiting ones answerable; Redis
// restarted with AOF while idle loses nothing.
import { expect } from "chai";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HttpAgent } from "@ag-ui/client";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import type { WireEvent as AguiEvent } from "../agui/helpers.js";
import { agentRun } from "../agui/harness.js";
import { startRedis, type TestRedis } from "../fixtures/redis-server.js";
import { openStream, resultOf, rpc, stateOf, userMessage, type AnyJson } from "../a2a/helpers.js";
import {
  answerMessage,
  auditLines,
  cleanEnv,
  iacOf,
  removeDir,
  SCRIPTS,
  sendUntilInput,
  startSourceCli,
  tempDir,
  texts,
  type CliChild,
} from "./helpers.js";

const INTERRUPTED = "Task was interrupted by process exit and cannot be revived automatically.";
const LEASE_SECONDS = 2;

interface Cluster {
  dir: string;
  workspace: string;
  redis: TestRedis;
  replicas: CliChild[];
  /** Starts replica i (its own config dir, like a replica on its own machine). */
  start(i: number): Promise<CliChild>;
  configDir(i: number): string;
}

async function cluster(count: number, redis?: TestRedis): Promise<Cluster> {
  const dir = tempDir("iac-replicas-");
  const workspace = path.join(dir, "workspace");
  mkdirSync(workspace, { recursive: true });
  const shared = redis ?? (await startRedis({ appendOnly: true }));
  const configFile = path.join(dir, "a2a-server.yml");
  writeFileSync(
    configFile,
    [
      "port: 0",
      "store: redis",
      `redis-url: ${shared.url}`,
      `context-lease-seconds: ${LEASE_SECONDS}`,
      `artifact-dir: ${JSON.stringify(path.join(dir, "artifacts"))}`,
      `allowed-cwds: [${JSON.stringify(dir)}]`,
      `script: ${JSON.stringify(path.join(SCRIPTS, "replicas.yaml"))}`,
      "provider: scripted",
      "",
    ].join("\n"),
  );
  const c: Cluster = {
    dir,
    workspace,
    redis: shared,
    replicas: [],
    configDir: (i) => path.join(dir, `config-${i}`),
    async start(i) {
      const env = cleanEnv(dir, { IAC_CODE_CONFIG_DIR: c.configDir(i) });
      const child = await startSourceCli(["a2a", "--config", configFile], env);
      c.replicas[i] = child;
      return child;
    },
  };
  for (let i = 0; i < count; i += 1) await c.start(i);
  return c;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const inWorkspace = (c: Cluster, extra: Record<string, unknown> = {}) => ({
  metadata: { iac_code: { cwd: c.workspace } },
  ...extra,
});

async function getTask(url: string, id: string): Promise<AnyJson> {
  const reply = await rpc(url, "GetTask", { id });
  expect(reply.body.error, JSON.stringify(reply.body.error)).to.equal(undefined);
  return reply.body.result as AnyJson;
}

/** Starts a [SLOW] turn on a stream and reads until it is working (the stream stays open). */
async function startSlow(url: string, c: Cluster, extra: Record<string, unknown> = {}) {
  const stream = await openStream(url, "SendStreamingMessage", {
    message: userMessage("[SLOW] a long turn", inWorkspace(c, extra)),
  });
  const events = await stream.until((e) => (texts([e])[0] ?? "").startsWith("slow-"));
  const task = resultOf(events[0]).task as AnyJson;
  return { stream, taskId: task.id as string, contextId: task.contextId as string };
}

function allowsIn(c: Cluster, sessionId: string, replicas: number): number {
  let allows = 0;
  for (let i = 0; i < replicas; i += 1)
    allows += auditLines(c.configDir(i), sessionId).filter((l) => l.decision.startsWith("allow_")).length;
  return allows;
}

describe("e2e: replicas of `iac-code a2a` on one Redis (store: redis)", function () {
  this.timeout(120_000);
  let c: Cluster | undefined;

  afterEach(async () => {
    if (!c) return;
    await Promise.all(c.replicas.map((r) => r?.stop("SIGKILL")));
    await c.redis.close();
    removeDir(c.dir);
    c = undefined;
  });

  it("a task started on A is read, listed, answered on B: the tool runs exactly once, every stream sees the continuation", async () => {
    c = await cluster(2);
    const [a, b] = c.replicas;
    const waiting = await sendUntilInput(a.url, "[WRITE] on A", inWorkspace(c));

    const seen = await getTask(b.url, waiting.taskId);
    expect(seen.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(seen.metadata.iac_code.input.inputId).to.equal(waiting.envelope.inputId);
    const listed = (await rpc(b.url, "ListTasks", { contextId: waiting.contextId })).body.result as AnyJson;
    expect(listed.tasks.map((t: AnyJson) => t.id)).to.deep.equal([waiting.taskId]);
    expect(listed.totalSize).to.equal(1);

    // A still runs the turn (waiting): the answer sent to B is handed to A.
    const onB = await openStream(b.url, "SendStreamingMessage", {
      message: answerMessage(waiting, "allow_once"),
    });
    const events = await onB.rest();
    expect(resultOf(events[0]).task.id).to.equal(waiting.taskId);
    expect(events.some((e) => iacOf(e)?.inputReceived?.decision === "allow_once")).to.equal(true);
    expect(texts(events)).to.include("WRITTEN.");
    expect(stateOf(events.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(iacOf(events.at(-1)!)?.input).to.equal(undefined);
    expect(readFileSync(path.join(c.workspace, "out.txt"), "utf8")).to.equal("written once\n");
    const sessionId = iacOf(events.at(-1)!)!.iacCodeSessionId as string;
    expect(allowsIn(c, sessionId, 2)).to.equal(1);
    expect(auditLines(c.configDir(0), sessionId)).to.have.length(1);

    // The same answer again, on either replica, is refused: nothing waits any more.
    for (const url of [a.url, b.url]) {
      const again = await rpc(url, "SendMessage", { message: answerMessage(waiting, "allow_once") });
      expect(again.body.error).to.deep.include({ code: -32602 });
    }
    // The context continues on B (the conversation comes from the shared session).
    const next = await rpc(b.url, "SendMessage", {
      message: userMessage("next turn on B", { contextId: waiting.contextId }),
    });
    const task = (next.body.result as AnyJson).task as AnyJson;
    expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(task.history.at(-1).parts[0].text).to.equal("Plain answer.");
  });

  it("a turn running on A is subscribed to and cancelled on B; a new message for its busy context on B is refused as on one process", async () => {
    c = await cluster(2);
    const [a, b] = c.replicas;
    const slow = await startSlow(a.url, c);

    const busy = await rpc(b.url, "SendMessage", {
      message: userMessage("while busy", { contextId: slow.contextId }),
    });
    const refused = (busy.body.result as AnyJson).task as AnyJson;
    expect(refused.status.state).to.equal("TASK_STATE_FAILED");
    expect(refused.status.message.parts[0].text).to.equal("Task is already working.");
    const plain = await rpc(b.url, "SendMessage", {
      message: userMessage("to the running task", { taskId: slow.taskId, contextId: slow.contextId }),
    });
    expect(plain.body.error).to.deep.include({ code: -32004 });

    const sub = await openStream(b.url, "SubscribeToTask", { id: slow.taskId });
    const followed = await sub.until((e) => (texts([e])[0] ?? "").startsWith("slow-"));
    expect(resultOf(followed[0]).task.id).to.equal(slow.taskId);

    const canceled = await rpc(b.url, "CancelTask", { id: slow.taskId });
    expect(canceled.body.error, JSON.stringify(canceled.body.error)).to.equal(undefined);
    expect((canceled.body.result as AnyJson).status.state).to.equal("TASK_STATE_CANCELED");
    const rest = await sub.rest();
    expect(stateOf(rest.at(-1)!)).to.equal("TASK_STATE_CANCELED");
    const onA = await slow.stream.rest();
    expect(stateOf(onA.at(-1)!)).to.equal("TASK_STATE_CANCELED");
    expect((await getTask(a.url, slow.taskId)).status.state).to.equal("TASK_STATE_CANCELED");
    // The context is free again, on any replica.
    const after = await rpc(b.url, "SendMessage", {
      message: userMessage("after the cancel", { contextId: slow.contextId }),
    });
    expect(((after.body.result as AnyJson).task as AnyJson).status.state).to.equal(
      "TASK_STATE_INPUT_REQUIRED",
    );
  });

  it("kill -9 of A mid-turn: within the lease its task ends FAILED with the reason, on B and for B's subscriber", async () => {
    c = await cluster(2);
    const [a, b] = c.replicas;
    const slow = await startSlow(a.url, c);
    const sub = await openStream(b.url, "SubscribeToTask", { id: slow.taskId });
    await sub.until((e) => (texts([e])[0] ?? "").startsWith("slow-"));
    const killed = Date.now();
    await a.stop("SIGKILL");

    const events = await sub.rest();
    const last = events.at(-1)!;
    expect(stateOf(last)).to.equal("TASK_STATE_FAILED");
    expect(texts([last])[0]).to.equal(INTERRUPTED);
    expect(Date.now() - killed).to.be.below((LEASE_SECONDS * 2 + 3) * 1000);
    const task = await getTask(b.url, slow.taskId);
    expect(task.status.state).to.equal("TASK_STATE_FAILED");
    expect(task.status.message.parts[0].text).to.equal(INTERRUPTED);
    expect(task.status.message.parts[0].text).to.not.match(/redis|replica|pid|\d{3,}/i);
    // The context takes a new turn on B.
    const next = await rpc(b.url, "SendMessage", {
      message: userMessage("after the loss", { contextId: slow.contextId }),
    });
    expect(((next.body.result as AnyJson).task as AnyJson).status.state).to.equal(
      "TASK_STATE_INPUT_REQUIRED",
    );
  });

  it("kill -9 of A while a permission waits: the answer on B resumes from the shared session, the tool runs once", async () => {
    c = await cluster(2);
    const [a, b] = c.replicas;
    const waiting = await sendUntilInput(a.url, "[WRITE] then A dies", inWorkspace(c));
    await a.stop("SIGKILL");
    await sleep(LEASE_SECONDS * 1000 + 1500);
    expect((await getTask(b.url, waiting.taskId)).status.state).to.equal("TASK_STATE_INPUT_REQUIRED");

    const stream = await openStream(b.url, "SendStreamingMessage", {
      message: answerMessage(waiting, "allow_once"),
    });
    const events = await stream.rest();
    expect(texts(events)).to.include("WRITTEN.");
    expect(stateOf(events.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(readFileSync(path.join(c.workspace, "out.txt"), "utf8")).to.equal("written once\n");
    const sessionId = iacOf(events.at(-1)!)!.iacCodeSessionId as string;
    expect(auditLines(c.configDir(1), sessionId).map((l) => [l.decision, l.reason])).to.deep.equal([
      ["allow_once", "user:allow_once"],
    ]);
    expect(allowsIn(c, sessionId, 2)).to.equal(1);
  });

  it("Redis restarted (AOF on) while idle: the replicas reconnect and serve the same tasks", async () => {
    c = await cluster(2);
    const [a, b] = c.replicas;
    const done = await rpc(a.url, "SendMessage", {
      message: userMessage("before the restart", inWorkspace(c)),
    });
    const task = (done.body.result as AnyJson).task as AnyJson;
    await sleep(1200); // appendfsync everysec
    await c.redis.restart();
    for (const url of [a.url, b.url]) {
      const got = await getTask(url, task.id as string);
      expect(got.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
      expect(got.history.at(-1).parts[0].text).to.equal("Plain answer.");
    }
    const next = await rpc(b.url, "SendMessage", {
      message: userMessage("after the restart", { contextId: task.contextId }),
    });
    const continued = (next.body.result as AnyJson).task as AnyJson;
    expect(continued.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    const listed = (await rpc(a.url, "ListTasks", {})).body.result as AnyJson;
    expect(listed.totalSize).to.equal(2);
    expect(existsSync(path.join(c.redis.dir, "appendonlydir"))).to.equal(true);
  });

  it("AG-UI replicas share thread state: a run on adapter 1 is resumed on adapter 2, another is cancelled there", async () => {
    c = await cluster(2);
    const adapters: AguiServer[] = [];
    try {
      for (const replica of c.replicas) {
        adapters.push(
          await startAguiServer({
            host: "127.0.0.1",
            port: 0,
            a2aUrl: replica.url,
            stateDir: path.join(c.dir, `agui-state-${adapters.length}`),
            threadStore: "redis",
            redisUrl: c.redis.url,
            idleShutdown: 0,
            interruptTtl: 540,
            allowedCwds: [c.dir],
            debug: false,
            logStdout: false,
          }),
        );
      }
      const props = (id: string) => ({
        iacCode: { schemaVersion: 1, rosInvocationId: id, cwd: c!.workspace },
      });
      const outcome = (events: AguiEvent[]) =>
        events.at(-1)!.outcome as { type: string; interrupts?: AnyJson[] };
      const agentOn = (i: number, threadId: string, messages: HttpAgent["messages"]) =>
        new HttpAgent({ url: adapters[i].url, threadId, initialMessages: messages });

      const first = agentOn(0, "thread-resume", [
        { id: "u-1", role: "user", content: "[WRITE] through AG-UI" },
      ]);
      const run1 = await agentRun(first, { runId: "run-1", forwardedProps: props("inv-1") });
      const interrupt = outcome(run1.events).interrupts![0];
      expect(interrupt.metadata).to.include({ toolName: "write_file" });
      const second = agentOn(1, "thread-resume", first.messages);
      const run2 = await agentRun(second, {
        runId: "run-2",
        forwardedProps: props("inv-1"),
        resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }],
      });
      expect(outcome(run2.events).type).to.equal("success");
      expect(run2.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta)).to.include(
        "WRITTEN.",
      );
      expect(readFileSync(path.join(c.workspace, "out.txt"), "utf8")).to.equal("written once\n");
      // The same interrupt resumed again, on the first adapter, is known there as already applied.
      const again = await fetch(adapters[0].url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify({
          threadId: "thread-resume",
          runId: "run-2",
          messages: [],
          tools: [],
          context: [],
          state: {},
          forwardedProps: props("inv-1"),
        }),
      });
      expect(again.status).to.equal(409);

      const waiting = agentOn(0, "thread-cancel", [
        { id: "u-2", role: "user", content: "[WRITE] to be cancelled" },
      ]);
      const run3 = await agentRun(waiting, { runId: "run-3", forwardedProps: props("inv-2") });
      expect(outcome(run3.events).type).to.equal("interrupt");
      const session = run3.events.find((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1")!
        .value as { executionId: string; taskId: string };
      const cancel = await fetch(
        `${adapters[1].url}extensions/iac-code/v1/executions/${session.executionId}/cancel`,
        {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ threadId: "thread-cancel", rosInvocationId: "inv-2" }),
        },
      );
      expect(cancel.status).to.equal(200);
      expect(await cancel.json()).to.deep.equal({ executionId: session.executionId, status: "cancelled" });
      expect((await getTask(c.replicas[0].url, session.taskId)).status.state).to.equal("TASK_STATE_CANCELED");
    } finally {
      await Promise.all(adapters.map((a) => a.close()));
    }
  });
});
