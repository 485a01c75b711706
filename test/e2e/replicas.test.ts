/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// Several `iac-code a2a` replicas (real processes, from the sources) on one
// private redis-server with store: redis: any replica answers any call about a
// task, whichever replica runs its turn; kill -9 of a replica ends its running
// tasks FAILED within the lease and keeps its waiting ones answerable; Redis
// restarted with AOF while idle loses nothing.
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HttpAgent } from "@ag-ui/client";
import { carryThreadVerifiers } from "../agui/helpers.js";
import { Redis } from "ioredis";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import type { WireEvent as AguiEvent } from "../agui/helpers.js";
import { agentRun } from "../agui/harness.js";
import { startPushReceiver, type PushReceiver } from "../fixtures/push-receiver.js";
import { startRedis, type TestRedis } from "../fixtures/redis-server.js";
import { openStream, resultOf, rpc, stateOf, userMessage, type AnyJson } from "../a2a/helpers.js";
import { RosEndpointFixture } from "../fixtures/ros-endpoint.js";
import { AK, PIPELINE_SCRIPT, SECRET } from "../pipeline/helpers.js";
import {
  answerMessage,
  inputAnswerMessage,
  isInputRequest,
  redisAuditLines,
  cleanEnv,
  iacOf,
  removeDir,
  SCRIPTS,
  sendUntilInput,
  startSourceCli,
  tempDir,
  texts,
  type CliChild,
  type WaitingTurn,
} from "./helpers.js";

const INTERRUPTED = "Task was interrupted by process exit and cannot be revived automatically.";
/** The lease of the tests that wait for one to run out (a killed replica). */
const LEASE_SECONDS = 2;
/**
 * The lease of the others: replicas run from the sources here, and a first turn's module loading
 * can stall a busy machine's event loop past a 2 s lease's renewal (the context then looks free).
 */
const STEADY: ClusterExtra = { leaseSeconds: 10 };

interface Cluster {
  dir: string;
  workspace: string;
  redis: TestRedis;
  replicas: CliChild[];
  /** Starts replica i (its own config dir, like a replica on its own machine). */
  start(i: number): Promise<CliChild>;
  configDir(i: number): string;
}

/** Extra lines of the shared config file and variables of every replica's environment. */
interface ClusterExtra {
  lines?: string[];
  /** The scripted provider's script (default replicas.yaml). */
  script?: string;
  leaseSeconds?: number;
  env?: NodeJS.ProcessEnv;
}

async function cluster(count: number, redis?: TestRedis, extra: ClusterExtra = {}): Promise<Cluster> {
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
      `context-lease-seconds: ${extra.leaseSeconds ?? LEASE_SECONDS}`,
      `artifact-dir: ${JSON.stringify(path.join(dir, "artifacts"))}`,
      `allowed-cwds: [${JSON.stringify(dir)}]`,
      `script: ${JSON.stringify(extra.script ?? path.join(SCRIPTS, "replicas.yaml"))}`,
      "provider: scripted",
      ...(extra.lines ?? []),
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
      const env = cleanEnv(dir, { ...extra.env, IAC_CODE_CONFIG_DIR: c.configDir(i) });
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

/** A pipeline's snapshot and its events after a sequence, from any replica. */
async function pipelineState(
  url: string,
  taskId: string,
  afterSequence?: number,
): Promise<{ snapshot: AnyJson; events: AnyJson[] }> {
  const query = `taskId=${taskId}${afterSequence === undefined ? "" : `&afterSequence=${afterSequence}`}`;
  const res = await fetch(`${url.replace(/\/$/, "")}/iac-code/pipeline/state?${query}`);
  expect(res.status, await res.clone().text()).to.equal(200);
  return (await res.json()) as { snapshot: AnyJson; events: AnyJson[] };
}

/**
 * Answers the input a task waits for (a permission decision, or a selection)
 * and reads until the next input or the end of the run.
 */
async function answerInput(
  url: string,
  waiting: WaitingTurn,
  answer: Record<string, unknown>,
): Promise<{ waiting?: WaitingTurn; events: Array<Record<string, unknown>> }> {
  const input = waiting.envelope;
  const stream = await openStream(url, "SendStreamingMessage", {
    message: inputAnswerMessage(waiting, answer),
  });
  const next = (e: Record<string, unknown>) =>
    isInputRequest(e) && iacOf(e)?.input?.inputId !== input.inputId;
  const ended = (e: Record<string, unknown>) =>
    ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"].includes(stateOf(e) ?? "");
  const events = await stream.until((e) => next(e) || ended(e));
  stream.stop();
  const last = events.at(-1)!;
  if (!next(last)) return { events };
  return {
    waiting: { taskId: waiting.taskId, contextId: waiting.contextId, envelope: iacOf(last)!.input, events },
    events,
  };
}

/** Allows in the session's audit, which every replica writes to the shared Redis. */
async function allowsIn(c: Cluster, sessionId: string): Promise<number> {
  return (await redisAuditLines(c.redis.url, sessionId)).filter((l) => l.decision.startsWith("allow_"))
    .length;
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
    c = await cluster(2, undefined, STEADY);
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
    expect(await allowsIn(c, sessionId)).to.equal(1);
    expect(await redisAuditLines(c.redis.url, sessionId)).to.have.length(1);

    // The same answer again, on either replica, is refused: nothing waits any more.
    for (const url of [a.url, b.url]) {
      const again = await rpc(url, "SendMessage", { message: answerMessage(waiting, "allow_once") });
      expect(again.body.error, `${url}: ${JSON.stringify(again.body)}`).to.deep.include({ code: -32602 });
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
    c = await cluster(2, undefined, STEADY);
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

  it("a burst of events on A reaches B's subscriber whole and in order (relayed a batch at a time)", async () => {
    c = await cluster(2, undefined, STEADY);
    const [a, b] = c.replicas;
    const onA = await openStream(a.url, "SendStreamingMessage", {
      message: userMessage("[BURST]", inWorkspace(c)),
    });
    const started = await onA.until((e) => texts([e])[0] === "burst-start ");
    const taskId = ((resultOf(started[0]).task as AnyJson).id as string) ?? "";
    const sub = await openStream(b.url, "SubscribeToTask", { id: taskId });
    await sub.until(() => true); // B follows before the burst
    const chunks = (events: AnyJson[]) => texts(events).filter((t) => t.startsWith("b-"));
    const [restOfA, onB] = await Promise.all([onA.rest(), sub.rest()]);
    const expected = Array.from({ length: 48 }, (_, i) => `b-${i + 1} `);
    expect(chunks(restOfA)).to.deep.equal(expected);
    expect(chunks(onB)).to.deep.equal(expected);
    expect(stateOf(onB.at(-1)!)).to.equal(stateOf(restOfA.at(-1)!));
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
    expect((await redisAuditLines(c.redis.url, sessionId)).map((l) => [l.decision, l.reason])).to.deep.equal([
      ["allow_once", "user:allow_once"],
    ]);
    expect(await allowsIn(c, sessionId)).to.equal(1);
  });

  it("kill -9 of the replica whose pipeline waits for the selection: the answer on the other replica completes the run", async () => {
    const ros = await RosEndpointFixture.start({ [AK]: SECRET });
    ros.timeline = ["CREATE_COMPLETE"];
    try {
      c = await cluster(2, undefined, {
        script: PIPELINE_SCRIPT,
        env: { ALIBABA_CLOUD_ACCESS_KEY_ID: AK, ALIBABA_CLOUD_ACCESS_KEY_SECRET: SECRET, IAC_CODE_ROS_ENDPOINT: ros.url },
      });
      const [a, b] = c.replicas;
      const pipeline = { metadata: { iac_code: { cwd: c.workspace, runMode: "pipeline" } } };
      let waiting = await sendUntilInput(a.url, "Deploy a small web app", pipeline);
      // The template writes of the two candidates, allowed on A one after the other.
      while (waiting.envelope.kind === "permission") {
        waiting = (await answerInput(a.url, waiting, { decision: "allow_once" })).waiting!;
      }
      expect(waiting.envelope.kind).to.equal("candidate_selection");
      const before = await pipelineState(a.url, waiting.taskId);
      await a.stop("SIGKILL");
      await sleep(LEASE_SECONDS * 1000 + 1500);

      // B serves the run's state from the shared store, then takes the selection.
      const onB = await pipelineState(b.url, waiting.taskId);
      expect(onB.snapshot).to.deep.include({ status: "waiting_input", lastSequence: before.snapshot.lastSequence });
      const deploy = (await answerInput(b.url, waiting, { selectedId: "1" })).waiting!;
      expect(deploy.envelope).to.include({ kind: "permission", toolName: "ros_deploy" });
      const end = await answerInput(b.url, deploy, { decision: "allow_once" });
      expect(stateOf(end.events.at(-1)!)).to.equal("TASK_STATE_COMPLETED");
      expect(ros.callsOf("CreateStack")).to.have.length(1);
      const after = await pipelineState(b.url, waiting.taskId, 0);
      const types = after.events.map((e) => e.eventType);
      expect(types.filter((t) => t === "pipeline_completed")).to.have.length(1);
      const sequences = after.events.map((e) => e.sequence);
      expect(sequences).to.deep.equal(sequences.map((_, i) => sequences[0] + i));
      expect(new Set(after.events.map((e) => e.eventId)).size).to.equal(after.events.length);
    } finally {
      await ros.close();
    }
  }); // prettier-ignore

  it("Redis restarted (AOF on) while idle: the replicas reconnect and serve the same tasks", async () => {
    c = await cluster(2, undefined, STEADY);
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
    c = await cluster(2, undefined, STEADY);
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
      // One thread over both adapters: the strict verifier follows it across them.
      carryThreadVerifiers(adapters[0].url, adapters[1].url);
      const second = agentOn(1, "thread-resume", first.messages);
      const run2 = await agentRun(second, {
        runId: "run-2",
        forwardedProps: props("inv-1"),
        resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }],
      });
      // On failure: the run's last events and both replicas' last log lines.
      const why = () =>
        [JSON.stringify(run2.events.slice(-3)), ...c!.replicas.map((r) => r.stderr().slice(-2000))].join(
          "\n",
        );
      expect(outcome(run2.events)?.type, why()).to.equal("success");
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

describe("e2e: push notifications with store: redis", function () {
  this.timeout(120_000);
  const TOKEN = "replica-notify-5e2d91";
  const CREDENTIAL = "replica-cred-c07a44";
  const keyring = JSON.stringify({
    activeKeyId: "k",
    keys: [{ id: "k", key: randomBytes(32).toString("base64") }],
  });
  const push = (leaseMs: number): ClusterExtra => ({
    lines: [
      "push-notifications: true",
      "push-allow-private-hosts: [127.0.0.1]",
      `push-lease-timeout-ms: ${leaseMs}`,
    ],
    env: { IAC_CODE_A2A_PUSH_KEYRING: keyring },
  });
  const hook = (receiver: PushReceiver) => ({
    url: receiver.url,
    token: TOKEN,
    authentication: { scheme: "Bearer", credentials: CREDENTIAL },
  });
  let c: Cluster | undefined;
  let receiver: PushReceiver;

  beforeEach(async () => (receiver = await startPushReceiver()));
  afterEach(async () => {
    await receiver.close();
    if (!c) return;
    await Promise.all(c.replicas.map((r) => r?.stop("SIGKILL")));
    await c.redis.close();
    removeDir(c.dir);
    c = undefined;
  });

  it("a config created on A, the turn on B: each event delivered once; Redis, its AOF and the logs hold no token or credential", async () => {
    c = await cluster(2, undefined, { ...push(60_000), ...STEADY });
    const [a, b] = c.replicas;
    // WORKING updates are refused for good: their jobs end as dead letters in Redis.
    receiver.reply = (r) => (r.state === "TASK_STATE_WORKING" ? 400 : 200);
    const waiting = await sendUntilInput(b.url, "[WRITE] on B", inWorkspace(c));
    const created = await rpc(a.url, "CreateTaskPushNotificationConfig", {
      taskId: waiting.taskId,
      ...hook(receiver),
    });
    expect(created.body.error, JSON.stringify(created.body.error)).to.equal(undefined);
    expect(JSON.stringify(created.body.result)).to.not.include(TOKEN);
    const listed = await rpc(b.url, "ListTaskPushNotificationConfigs", { taskId: waiting.taskId });
    expect((listed.body.result as AnyJson).configs.map((x: AnyJson) => x.id)).to.deep.equal([waiting.taskId]);

    const events = await (
      await openStream(b.url, "SendStreamingMessage", { message: answerMessage(waiting, "allow_once") })
    ).rest();
    expect(texts(events)).to.include("WRITTEN.");
    await receiver.waitFor((r) => r.some((e) => e.state === "TASK_STATE_INPUT_REQUIRED"));
    await sleep(1500); // a second delivery of anything would have come by now

    const client = new Redis(c.redis.url);
    try {
      // One job per event (one config): the job counter says how many events there were.
      const jobs = Number(await client.get("iac-code:a2a:outbox:seq"));
      const received = receiver.received;
      expect(received.map((r) => r.state)).to.include.members([
        "TASK_STATE_WORKING",
        "TASK_STATE_INPUT_REQUIRED",
      ]);
      expect(received).to.have.length(jobs);
      expect(new Set(received.map((r) => r.eventId)).size).to.equal(jobs);
      expect(
        received.every((r) => (r.body.statusUpdate ?? r.body.task ?? r.body.artifactUpdate) !== undefined),
      ).to.equal(true);
      expect(received.every((r) => r.headers["x-a2a-notification-token"] === TOKEN)).to.equal(true);
      expect(received.every((r) => r.headers.authorization === `Bearer ${CREDENTIAL}`)).to.equal(true);
      const dead = await client.lrange("iac-code:a2a:outbox:dead", 0, -1);
      expect(dead).to.have.length(received.filter((r) => r.state === "TASK_STATE_WORKING").length);
      expect(await client.zcard("iac-code:a2a:outbox:due")).to.equal(0);

      const stored = await redisDump(client);
      expect(stored).to.include("sealedSecrets").and.include(receiver.url);
      for (const secret of [TOKEN, CREDENTIAL]) expect(stored).to.not.include(secret);
    } finally {
      client.disconnect();
    }
    await sleep(1200); // appendfsync everysec
    const aof = path.join(c.redis.dir, "appendonlydir");
    const text = readdirSync(aof)
      .map((name) => readFileSync(path.join(aof, name), "latin1"))
      .join("");
    expect(text).to.include("outbox");
    for (const output of [text, a.stderr(), b.stderr()])
      for (const secret of [TOKEN, CREDENTIAL]) expect(output).to.not.include(secret);
  });

  it("kill -9 of A during a delivery: B delivers the job again once the lease is over, with the same event id", async () => {
    c = await cluster(1, undefined, push(2000));
    // The first delivery never gets an answer: A is killed while it waits.
    receiver.reply = (_r, n) => (n === 0 ? "hang" : 200);
    const sent = await rpc(c.replicas[0].url, "SendMessage", {
      message: userMessage("hello", inWorkspace(c)),
      configuration: { taskPushNotificationConfig: hook(receiver) },
    });
    expect(sent.body.error, JSON.stringify(sent.body.error)).to.equal(undefined);
    const [inFlight] = await receiver.waitFor((r) => r.length === 1);
    await c.replicas[0].stop("SIGKILL");

    await c.start(1);
    const received = await receiver.waitFor((r) => r.some((e, i) => i > 0 && e.eventId === inFlight.eventId));
    const again = received.slice(1).find((e) => e.eventId === inFlight.eventId)!;
    expect(again.at - inFlight.at).to.be.at.least(2000);
    expect(again.body).to.deep.equal(inFlight.body);
    expect(again.headers["x-a2a-notification-token"]).to.equal(TOKEN);
    // The rest of the turn's updates follow, each once.
    const all = await receiver.waitFor((r) => r.some((e) => e.state === "TASK_STATE_INPUT_REQUIRED"));
    expect(all.filter((e) => e.eventId === inFlight.eventId)).to.have.length(2);
    expect(new Set(all.map((e) => e.eventId)).size).to.equal(all.length - 1);
  });
});

/** Every key of a Redis with its values, as text (to look for what must not be there). */
async function redisDump(client: Redis): Promise<string> {
  const out: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await client.scan(cursor, "COUNT", 200);
    cursor = next;
    for (const key of keys) {
      const type = await client.type(key);
      const value =
        type === "string"
          ? await client.get(key)
          : type === "hash"
            ? await client.hgetall(key)
            : type === "list"
              ? await client.lrange(key, 0, -1)
              : type === "set"
                ? await client.smembers(key)
                : type === "zset"
                  ? await client.zrange(key, 0, -1)
                  : type === "stream"
                    ? await client.xrange(key, "-", "+")
                    : type;
      out.push(`${key} ${JSON.stringify(value)}`);
    }
  } while (cursor !== "0");
  return out.join("\n");
}
