// A pipeline survives kill -9 at any of its first four interrupts. The demo
// pipeline (nothing configured: the bundled script, the simulated ROS
// endpoint) is driven over AG-UI with @ag-ui/client; right after the k-th
// interrupt the A2A server gets SIGKILL, then (a) it is started again on the
// same state, or (b) with store: redis, the thread goes on through the other
// replica and the other adapter (threads in Redis too). Either way the run
// goes on to its end: no resume ends in a RUN_ERROR, every pipeline event the
// client may see arrives exactly once across the runs, and no tool runs twice.
import { answerFor, type ResumeEntry } from "./answers.js";
import { expect } from "chai";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HttpAgent, type Interrupt } from "@ag-ui/client";
import type { PipelineEnvelope } from "../../src/runtime/seam.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { PIPELINE_CUSTOM_TYPES } from "../../src/agui/run/pipeline-steps.js";
import { agentRun } from "../agui/harness.js";
import { carryThreadVerifiers, type WireEvent } from "../agui/helpers.js";
import { startRedis, type TestRedis } from "../fixtures/redis-server.js";
import {
  adapterSettings,
  cleanEnv,
  startSourceCli,
  tempDir,
  removeDir,
  type CliChild,
} from "../e2e/helpers.js";
import { freePort } from "../fixtures/free-port.js";

const customs = (events: WireEvent[]) =>
  events
    .filter((e) => e.type === "CUSTOM" && e.name === "iac-code.pipeline.v1")
    .map((e) => e.value as PipelineEnvelope);

async function journal(a2aUrl: string, taskId: string): Promise<PipelineEnvelope[]> {
  const res = await fetch(new URL(`iac-code/pipeline/state?taskId=${taskId}&afterSequence=0`, a2aUrl));
  expect(res.status).to.equal(200);
  return ((await res.json()) as { events: PipelineEnvelope[] }).events;
}

interface World {
  dir: string;
  workspace: string;
  /** The A2A server the thread uses now, and its adapter. */
  a2a: CliChild;
  agui: AguiServer;
  /** SIGKILL to the current A2A server; then the thread goes on through what `failover` brings up. */
  failover(): Promise<void>;
  close(): Promise<void>;
}

/** (a) One A2A server on SQLite, started again on the same port and state after the kill. */
async function sqliteWorld(): Promise<World> {
  const dir = tempDir("iac-crash-sqlite-");
  const workspace = path.join(dir, "workspace");
  mkdirSync(workspace, { recursive: true });
  const config = path.join(dir, "a2a-server.yml");
  writeFileSync(
    config,
    [`port: ${await freePort()}`, `persistence-dir: ${path.join(dir, "persist")}`].join("\n"),
  );
  const env = cleanEnv(dir, { IACCODE_A2A_ALLOWED_CWDS: dir });
  const start = () => startSourceCli(["a2a", "--config", config], env);
  const a2a = await start();
  const world: World = {
    dir,
    workspace,
    a2a,
    agui: await startAguiServer(adapterSettings({ url: a2a.url, dir })),
    async failover() {
      world.a2a.child.kill("SIGKILL");
      await new Promise((resolve) => world.a2a.child.once("exit", resolve));
      world.a2a = await start();
    },
    async close() {
      await world.agui.close();
      await world.a2a.stop();
      removeDir(dir);
    },
  };
  return world;
}

/** (b) Two replicas on one Redis, each with its adapter (threads in Redis): the second pair takes over. */
async function redisWorld(redis: TestRedis): Promise<World> {
  const dir = tempDir("iac-crash-redis-");
  const workspace = path.join(dir, "workspace");
  mkdirSync(workspace, { recursive: true });
  const config = path.join(dir, "a2a-server.yml");
  writeFileSync(
    config,
    [
      "port: 0",
      "store: redis",
      `redis-url: ${redis.url}`,
      // Long enough that a replica alive is never taken for gone: what ends the dead one's hold is its exit.
      "context-lease-seconds: 30",
      `artifact-dir: ${JSON.stringify(path.join(dir, "artifacts"))}`,
      `allowed-cwds: [${JSON.stringify(dir)}]`,
    ].join("\n"),
  );
  const replica = (i: number) =>
    startSourceCli(
      ["a2a", "--config", config],
      cleanEnv(dir, { IAC_CODE_CONFIG_DIR: path.join(dir, `config-${i}`) }),
    );
  const adapter = (a2a: CliChild, i: number) =>
    startAguiServer({
      ...adapterSettings({ url: a2a.url, dir }),
      stateDir: path.join(dir, `agui-state-${i}`),
      threadStore: "redis",
      redisUrl: redis.url,
    });
  const [first, second] = [await replica(0), await replica(1)];
  const firstAgui = await adapter(first, 0);
  const secondAgui = await adapter(second, 1);
  const world: World = {
    dir,
    workspace,
    a2a: first,
    agui: firstAgui,
    async failover() {
      first.child.kill("SIGKILL");
      await new Promise((resolve) => first.child.once("exit", resolve));
      await firstAgui.close();
      carryThreadVerifiers(firstAgui.url, secondAgui.url);
      world.a2a = second;
      world.agui = secondAgui;
    },
    async close() {
      await firstAgui.close().catch(() => undefined);
      await secondAgui.close();
      await first.stop().catch(() => undefined);
      await second.stop();
      removeDir(dir);
    },
  };
  return world;
}

/** Drives the thread: kill after the k-th interrupt, then on to the end; returns every run's events. */
async function crashAt(world: World, k: number): Promise<{ runs: WireEvent[][]; taskId: string }> {
  const props = () => ({
    iacCode: { schemaVersion: 1, rosInvocationId: "inv-crash", cwd: world.workspace, runMode: "pipeline" },
  });
  const initial = [{ id: "u1", role: "user" as const, content: "I need a small website" }];
  const runs: WireEvent[][] = [];
  let resume: ResumeEntry[] | undefined;
  let interrupts = 0;
  let taskId = "";
  for (let i = 1; i <= 20; i++) {
    // A new agent per run: after a failover the thread goes on through the other adapter.
    const agent = new HttpAgent({ url: world.agui.url, threadId: `thread-${k}`, initialMessages: initial });
    const run = await agentRun(agent, {
      runId: `run-${i}`,
      forwardedProps: props(),
      ...(resume ? { resume } : {}),
    });
    expect(run.warnings).to.deep.equal([]);
    runs.push(run.events);
    const session = run.events.find((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1");
    if (session) taskId = (session.value as { taskId: string }).taskId;
    const end = run.events.at(-1)!;
    expect(end.type, `run ${i} after a kill at interrupt ${k}: ${JSON.stringify(end)}`).to.equal(
      "RUN_FINISHED",
    );
    const outcome = end.outcome as { type: string; interrupts?: Interrupt[] };
    if (outcome.type !== "interrupt") return { runs, taskId };
    resume = outcome.interrupts!.map((it) => answerFor(it));
    if (++interrupts === k) await world.failover();
  }
  throw new Error("the pipeline did not end in 20 runs");
}

/** Every question the user was asked: kind, tool and what it acts on. */
function asked(runs: WireEvent[][]): string[] {
  return runs.flatMap((events) => {
    const outcome = events.at(-1)!.outcome as { interrupts?: Interrupt[] } | undefined;
    return (outcome?.interrupts ?? []).map((i) => {
      const m = i.metadata as { kind: string; toolName?: string; target?: string };
      return `${m.kind}:${m.toolName ?? ""}:${m.target ?? ""}`;
    });
  });
}

async function expectWhole(world: World, runs: WireEvent[][], taskId: string): Promise<void> {
  const questions = asked(runs);
  expect(
    questions.filter((q, i) => questions.indexOf(q) !== i),
    "asked twice",
  ).to.deep.equal([]);
  const seen = runs.flatMap(customs);
  const ids = seen.map((e) => e.eventId);
  expect(new Set(ids).size, "a pipeline event shown twice").to.equal(ids.length);
  const events = await journal(world.a2a.url, taskId);
  const allowlisted = events.filter((e) => PIPELINE_CUSTOM_TYPES.has(e.eventType));
  expect(
    allowlisted.map((e) => e.eventId).filter((id) => !ids.includes(id)),
    "journal events never shown",
  ).to.deep.equal([]);
  expect(seen.at(-1)?.eventType).to.equal("pipeline_completed");
  expect((seen.at(-1)!.data as { failed?: boolean }).failed).to.not.equal(true);
  // No tool ran twice: one result per tool call, one stack created.
  const results = events.filter((e) => e.eventType === "tool_result");
  const byCall = new Map<string, number>();
  for (const r of results) {
    const data = r.data as { toolUseId: string; result?: unknown };
    if (JSON.stringify(data.result ?? "").includes("interrupted")) continue;
    byCall.set(data.toolUseId, (byCall.get(data.toolUseId) ?? 0) + 1);
  }
  expect([...byCall].filter(([, n]) => n > 1)).to.deep.equal([]);
  const created = events.filter((e) => e.eventType === "stack_current_changed");
  expect(created).to.have.length(1);
}

describe("pipeline: kill -9 at each of the first four interrupts", function () {
  this.timeout(240_000);

  describe("(a) the A2A server started again on the same state", () => {
    for (const k of [1, 2, 3, 4]) {
      it(`interrupt ${k}: the run goes on to its end, every event once, no tool twice`, async () => {
        const world = await sqliteWorld();
        try {
          const { runs, taskId } = await crashAt(world, k);
          await expectWhole(world, runs, taskId);
        } finally {
          await world.close();
        }
      });
    }
  });

  describe("(b) two replicas and two adapters on one Redis: the other pair goes on", () => {
    let redis: TestRedis;
    before(async () => {
      redis = await startRedis();
    });
    after(async () => {
      await redis?.close();
    });
    for (const k of [1, 2, 3, 4]) {
      it(`interrupt ${k}: the run goes on to its end through the other pair, every event once, no tool twice`, async () => {
        const world = await redisWorld(redis);
        try {
          const { runs, taskId } = await crashAt(world, k);
          await expectWhole(world, runs, taskId);
        } finally {
          await world.close();
        }
      });
    }
  });
});
