// Active guidance runs (agui-iaccode.md §9.3, §10 item 81) through real
// servers: the A2A server in this process in front of the real runtime with a
// scripted model (test/fixtures/scripts/pipeline-guidance.yaml: intent_parsing
// makes a long model call, then lists the files), a tap recording every
// request the adapter makes to A2A, and the AG-UI adapter. While the pipeline's
// run streams, a guidance run on the same thread is [RUN_STARTED, RUN_FINISHED];
// its message reaches the running task with the guidance's own rosInvocationId;
// the judge's verdict shows on the pipeline's run as CUSTOM
// iac-code.guidance.v1; a supplement changes the step's next model call; the
// main run stays the thread's active run and nothing is ever cancelled. An
// adapter killed (-9) mid-run and started again still delivers guidance. Every
// admission refusal has its code. Last, the demo's [demo:slow-deploy] (demo
// script, simulated ROS endpoint) guided while its stack group deploys: "stop"
// pauses the run (the judge fails, deploying's policy), anything else is noted.
import { expect } from "chai";
import { HttpAgent, type BaseEvent, type Interrupt } from "@ag-ui/client";
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { RunningA2aServer } from "../../src/a2a/server.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { SseParser } from "../../src/server/sse.js";
import { ThreadStore } from "../../src/agui/threads/thread-store.js";
import { post, type A2aTap } from "../agui/harness.js";
import { guidanceWorld, type GuidanceWorld } from "./guidance-world.js";
import { expectValidStream, type WireEvent } from "../agui/helpers.js";
import { adapterSettings, cleanEnv, startSourceCli } from "../e2e/helpers.js";
import { removeTempDirs, tempDir } from "../runtime/helpers.js";
import { startDemoA2a } from "./helpers.js";
import { answerFor, type ResumeEntry } from "./answers.js";

const TOKEN = "guidance-token";

/** A run read as it streams: the events so far, and a wait for the one a test needs. */
interface LiveRun {
  events: WireEvent[];
  until(pred: (e: WireEvent) => boolean): Promise<WireEvent>;
  end(): Promise<WireEvent[]>;
}

async function openRun(url: string, body: unknown): Promise<LiveRun> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
  expect(res.status, await (res.ok ? Promise.resolve("") : res.text())).to.equal(200);
  const reader = res.body!.getReader();
  const parser = new SseParser();
  const events: WireEvent[] = [];
  let done = false;
  const readMore = async (): Promise<void> => {
    const r = await reader.read();
    if (r.done) done = true;
    else for (const e of parser.push(r.value as Uint8Array)) events.push(JSON.parse(e.data) as WireEvent);
  };
  return {
    events,
    async until(pred) {
      for (;;) {
        const found = events.find(pred);
        if (found) return found;
        if (done) throw new Error(`the run ended without it: ${events.map((e) => e.type).join(" ")}`);
        await readMore();
      }
    },
    async end() {
      while (!done) await readMore();
      return events;
    },
  };
}

interface Envelope {
  eventType: string;
  data: Record<string, unknown>;
}

/** Polls until `probe` gives something (or true). */
async function until<T>(probe: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const got = await probe();
    if (got) return got;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("timed out waiting");
}

const customs = (events: WireEvent[], name: string) =>
  events
    .filter((e) => e.type === "CUSTOM" && e.name === name)
    .map((e) => e.value as { eventType: string; data: Record<string, unknown> });

const textOf = (events: WireEvent[]) =>
  events
    .filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
    .map((e) => e.delta as string)
    .join("");

describe("AG-UI active guidance runs reach the running pipeline's judge", function () {
  this.timeout(60_000);
  let world: GuidanceWorld;
  let dir: string;
  let workspace: string;
  let a2a: RunningA2aServer;
  let tap: A2aTap;
  let agui: AguiServer;
  let n = 0;

  before(async () => {
    world = await guidanceWorld(TOKEN);
    ({ dir, a2a, tap } = world);
    agui = await startAguiServer(adapterSettings({ url: tap.url, dir }, TOKEN));
  });
  after(async () => {
    await agui?.close();
    await world?.close();
    await removeTempDirs();
  });

  beforeEach(() => {
    n++;
    workspace = path.join(dir, `ws-${n}`);
    mkdirSync(workspace, { recursive: true });
    tap.calls.length = 0;
  });

  const body = (o: { runId: string; text: string; ros: string; guidance?: boolean; extra?: object }) => ({
    threadId: `thread-${n}`,
    runId: o.runId,
    state: {},
    messages: [{ id: `msg-${o.runId}`, role: "user", content: o.text }],
    tools: [],
    context: [],
    forwardedProps: {
      iacCode: {
        schemaVersion: 1,
        rosInvocationId: o.ros,
        cwd: workspace,
        runMode: "pipeline",
        pipelineName: "selling",
        ...(o.guidance ? { activeGuidance: true } : {}),
        ...o.extra,
      },
    },
  });

  /** Starts the pipeline run and waits until intent_parsing is in its long model call. */
  async function startPipeline(url = agui.url): Promise<LiveRun> {
    const main = await openRun(url, body({ runId: "main", text: "Deploy a small web app", ros: "inv-main" }));
    await main.until((e) => e.type === "TEXT_MESSAGE_CONTENT" && String(e.delta).includes("workspace first"));
    return main;
  }

  const stateDir = () => path.join(dir, "agui-state");
  const sends = () => tap.calls.filter((c) => c.method === "SendStreamingMessage");
  const messageOf = (call: { params?: Record<string, unknown> }) =>
    call.params!.message as {
      taskId?: string;
      messageId: string;
      metadata: { iac_code: Record<string, unknown> };
    };

  it("item 81: guidance is [RUN_STARTED, RUN_FINISHED], reaches the judge with its own rosInvocationId, and a supplement changes the step's next model call", async () => {
    const main = await startPipeline();
    const guidance = await post(
      agui.url,
      body({ runId: "guide-1", text: "[GUIDE] a static site only", ros: "inv-guide", guidance: true }),
    );
    expect(guidance.status).to.equal(200);
    expect(guidance.events.map((e) => e.type)).to.deep.equal(["RUN_STARTED", "RUN_FINISHED"]);
    expect(guidance.events[0]).to.include({ threadId: `thread-${n}`, runId: "guide-1" });
    expect(guidance.events[1].outcome).to.deep.equal({ type: "success" });
    expect(guidance.events[1]).to.not.have.property("usage");

    // The pipeline's run is still the thread's active run: a new turn is refused.
    const busy = await post(agui.url, body({ runId: "other", text: "hello", ros: "inv-main" }));
    expect(busy.status).to.equal(409);
    expect(busy.json!.error.code).to.equal("THREAD_BUSY");

    const events = await main.end();
    await expectValidStream(events);
    expect(events.at(-1)!.type).to.equal("RUN_FINISHED");
    expect(events.at(-1)!.outcome).to.deep.equal({ type: "success" });
    const judged = customs(events, "iac-code.guidance.v1");
    expect(judged.map((v) => v.eventType)).to.deep.equal(["interrupt_received", "interrupt_classified"]);
    expect(judged[0].data).to.deep.equal({ messageLength: "[GUIDE] a static site only".length });
    expect(judged[1].data).to.include({
      action: "supplement",
      targetStepId: "intent_parsing",
      paused: false,
      judgeFailed: false,
    });
    // The step's next model call carried the supplement: the script answered its guided rule.
    expect(textOf(events)).to.contain("Taking your guidance into account.");
    expect(textOf(events)).to.not.contain("Nothing to deploy here.");
    const completed = customs(events, "iac-code.pipeline.v1").find(
      (v) => v.eventType === "pipeline_completed",
    );
    expect(completed, "pipeline_completed").to.not.equal(undefined);
    // §4.6's allowlist is unchanged: the judge's events are never iac-code.pipeline.v1.
    expect(customs(events, "iac-code.pipeline.v1").map((v) => v.eventType)).to.not.include.members([
      "interrupt_received",
      "interrupt_classified",
    ]);

    const [first, second] = sends();
    expect(sends()).to.have.length(2);
    const session = events.find((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1");
    const { taskId } = session!.value as { taskId: string };
    expect(messageOf(first).taskId).to.equal(undefined);
    expect(messageOf(second)).to.include({ taskId, messageId: "msg-guide-1" });
    expect(messageOf(second).metadata.iac_code).to.include({
      rosInvocationId: "inv-guide",
      run_mode: "pipeline",
    });
    expect(messageOf(first).metadata.iac_code).to.include({ rosInvocationId: "inv-main" });
    expect(tap.calls.map((c) => c.method)).to.not.include("CancelTask");

    // The execution keeps the pipeline run's identity; the guidance's run id is recorded.
    const doc = (await new ThreadStore({ root: stateDir() }).load(`thread-${n}`))!;
    expect(doc.execution.rosInvocationId).to.equal("inv-main");
    expect(Object.keys(doc.runDigests).sort()).to.deep.equal(["guide-1", "main"]);
  });

  it("a guidance run's client leaving cancels nothing, and an ignored message changes nothing", async () => {
    const main = await startPipeline();
    const leaving = new AbortController();
    const res = await fetch(agui.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(
        body({ runId: "guide-2", text: "[IGNORE] skip the rules", ros: "inv-guide", guidance: true }),
      ),
      signal: leaving.signal,
    });
    expect(res.status).to.equal(200);
    // The guidance reached A2A; its client leaves before reading anything.
    await until(() => sends().length === 2);
    leaving.abort();
    const events = await main.end();
    await expectValidStream(events);
    expect(events.at(-1)!.outcome).to.deep.equal({ type: "success" });
    const verdict = customs(events, "iac-code.guidance.v1").find(
      (v) => v.eventType === "interrupt_classified",
    );
    expect(verdict!.data).to.include({ action: "ignored" });
    expect(textOf(events)).to.contain("Nothing to deploy here.");
    expect(textOf(events)).to.not.contain("Taking your guidance");
    expect(tap.calls.map((c) => c.method)).to.not.include("CancelTask");
  });

  it("hard_interrupt: the judge starts the running step again with the message as its feedback; the run shows the rollback", async () => {
    const main = await startPipeline();
    const guidance = await post(
      agui.url,
      body({ runId: "guide-3", text: "[REDO] start over", ros: "inv-guide", guidance: true }),
    );
    expect(guidance.events.map((e) => e.type)).to.deep.equal(["RUN_STARTED", "RUN_FINISHED"]);
    const events = await main.end();
    await expectValidStream(events);
    expect(events.at(-1)!.outcome).to.deep.equal({ type: "success" });
    const verdict = customs(events, "iac-code.guidance.v1").find(
      (v) => v.eventType === "interrupt_classified",
    );
    expect(verdict!.data).to.include({ action: "hard_interrupt", targetStepId: "intent_parsing" });
    const pipeline = customs(events, "iac-code.pipeline.v1");
    const rollback = pipeline.find((v) => v.eventType === "rollback_completed");
    expect(rollback!.data).to.include({ fromStep: "intent_parsing", toStep: "intent_parsing" });
    expect(pipeline.map((v) => v.eventType)).to.include("pipeline_completed");
    expect(textOf(events)).to.contain("Starting over as you asked.");
    expect(textOf(events)).to.not.contain("Nothing to deploy here.");
    expect(tap.calls.map((c) => c.method)).to.not.include("CancelTask");
  });

  it("after the adapter is killed (-9) mid-run and started again, guidance still reaches the run", async () => {
    // A home of its own: the suite's adapter holds stateDir() (one adapter per state dir).
    const home = path.join(dir, "agui-state-restart");
    const child = await startSourceCli(
      ["agui", "--port", "0", "--a2a-url", tap.url, "--a2a-token", TOKEN, "--state-dir", home,
        "--allowed-cwds", dir, "--no-console"], // prettier-ignore
      cleanEnv(dir),
    );
    let restarted: AguiServer | undefined;
    try {
      const main = await startPipeline(child.url);
      const session = await main.until((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1");
      const { taskId } = session.value as { taskId: string };
      await child.stop("SIGKILL");
      restarted = await startAguiServer({ ...adapterSettings({ url: tap.url, dir }, TOKEN), stateDir: home });
      const guidance = await post(
        restarted.url,
        body({ runId: "guide-4", text: "[GUIDE] a static site only", ros: "inv-guide", guidance: true }),
      );
      expect(guidance.events.map((e) => e.type)).to.deep.equal(["RUN_STARTED", "RUN_FINISHED"]);
      expect(messageOf(sends().at(-1)!)).to.include({ taskId });
      // Nobody reads the pipeline's run any more: its journal on the A2A server tells how it went.
      const journal = await until(async () => {
        const res = await fetch(
          new URL(`iac-code/pipeline/state?taskId=${taskId}&afterSequence=0`, a2a.url),
          {
            headers: { Authorization: `Bearer ${TOKEN}` },
          },
        );
        const state = (await res.json()) as { events: Envelope[] };
        return state.events.some((e) => e.eventType === "pipeline_completed") ? state.events : undefined;
      });
      const verdict = journal.find((e) => e.eventType === "interrupt_classified");
      expect(verdict!.data).to.include({ action: "supplement" });
      const said = journal
        .filter((e) => e.eventType === "text_delta")
        .map((e) => String(e.data.text))
        .join("");
      expect(said).to.contain("Taking your guidance into account.");
      // The pipeline has ended meanwhile: more guidance finds no running task and sends nothing
      // (a message to the ended task would start a new turn on it).
      const sent = sends().length;
      const late = await post(
        restarted.url,
        body({ runId: "guide-5", text: "[GUIDE] too late", ros: "inv-guide", guidance: true }),
      );
      expect(late.events.map((e) => [e.type, e.code])).to.deep.equal([
        ["RUN_STARTED", undefined],
        ["RUN_ERROR", "EXECUTION_LOST"],
      ]);
      expect(late.events[1].message).to.equal("There is no running pipeline on this thread to guide.");
      expect(sends().length).to.equal(sent);
      expect(tap.calls.map((c) => c.method)).to.not.include("CancelTask");
    } finally {
      await restarted?.close();
      await child.stop("SIGKILL").catch(() => undefined);
    }
  });

  it("a guidance stream that goes wrong ends in its code (A2A_UNAVAILABLE, A2A_PROTOCOL_ERROR, A2A_EXECUTION_FAILED, CANCELLED); the pipeline's run goes on, nothing is cancelled", async () => {
    const main = await startPipeline();
    type Rpc = { id?: unknown; result?: { task?: { id: string; status: { state: string } } } };
    const breaks: Record<string, (rpc: Rpc) => unknown> = {
      "A2A_UNAVAILABLE": (rpc) => ({ jsonrpc: "2.0", id: rpc.id, error: { code: -32603, message: "boom" } }),
      "A2A_PROTOCOL_ERROR": (rpc) => (rpc.result?.task && (rpc.result.task.id = "another-task"), rpc),
      "A2A_EXECUTION_FAILED": (rpc) => (rpc.result?.task && (rpc.result.task.status.state = "TASK_STATE_FAILED"), rpc),
      "CANCELLED": (rpc) => (rpc.result?.task && (rpc.result.task.status.state = "TASK_STATE_CANCELED"), rpc),
    }; // prettier-ignore
    try {
      for (const [code, broken] of Object.entries(breaks)) {
        // Only the guidance's stream is broken: the pipeline's own run reads A2A untouched.
        tap.rewrite = (call, rpc) => {
          const message = call.params?.message as { messageId?: string } | undefined;
          return message?.messageId === `msg-g-${code}` ? broken(rpc as Rpc) : rpc;
        };
        const res = await post(
          agui.url,
          body({ runId: `g-${code}`, text: "[IGNORE] x", ros: "inv-guide", guidance: true }),
        );
        expect(
          res.events.map((e) => e.type),
          code,
        ).to.deep.equal(["RUN_STARTED", "RUN_ERROR"]);
        expect(res.events[1].code).to.equal(code);
      }
    } finally {
      tap.rewrite = undefined;
    }
    // The execution was not touched: guidance is still admitted, and the pipeline ends well.
    const again = await post(
      agui.url,
      body({ runId: "g-after", text: "[IGNORE] y", ros: "inv-guide", guidance: true }),
    );
    expect(again.events.map((e) => e.type)).to.deep.equal(["RUN_STARTED", "RUN_FINISHED"]);
    const events = await main.end();
    expect(events.at(-1)!.outcome).to.deep.equal({ type: "success" });
    expect(tap.calls.map((c) => c.method)).to.not.include("CancelTask");
  });

  describe("admission (§9.3): every refusal has its code, before any A2A call", () => {
    const refused = async (
      request: Record<string, unknown>,
      status: number,
      code: string,
      url = agui.url,
    ): Promise<string> => {
      const before = tap.calls.length;
      const res = await post(url, request);
      expect(res.status, res.raw).to.equal(status);
      expect(res.json!.error.code).to.equal(code);
      expect(tap.calls.slice(before).map((c) => c.method)).to.deep.equal([]);
      return res.json!.error.message;
    };
    const guide = (runId: string, extra: object = {}) =>
      body({ runId, text: "[GUIDE] a static site only", ros: "inv-guide", guidance: true, extra });

    it("no thread: 409 EXECUTION_LOST", async () => {
      const message = await refused(guide("g-new"), 409, "EXECUTION_LOST");
      expect(message).to.equal("There is no running pipeline on this thread to guide.");
    });

    it("activeGuidance that is not a boolean: 400 INVALID_INPUT naming the field", async () => {
      const message = await refused(
        {
          ...guide("g-bad"),
          forwardedProps: { iacCode: { ...guide("g").forwardedProps.iacCode, activeGuidance: "true" } },
        },
        400,
        "INVALID_INPUT",
      );
      expect(message).to.contain("activeGuidance");
    });

    it("while the pipeline runs: a resume, another runMode, another workspace, a used run id are refused; the run goes on", async () => {
      const main = await startPipeline();
      await refused(
        { ...guide("g-resume"), resume: [{ interruptId: "x", status: "resolved", payload: {} }] },
        409,
        "EXECUTION_LOST",
      );
      await refused(guide("g-normal", { runMode: "normal" }), 409, "EXECUTION_LOST");
      await refused(guide("g-nomode", { runMode: null }), 409, "EXECUTION_LOST");
      const elsewhere = path.join(dir, `ws-${n}-other`);
      mkdirSync(elsewhere, { recursive: true });
      await refused(guide("g-cwd", { cwd: elsewhere }), 409, "THREAD_BINDING_CONFLICT");
      await refused(guide("g-user", { userId: "someone-else" }), 409, "THREAD_BINDING_CONFLICT");
      // A guidance run id is recorded like any other: the same body again, or another body with it.
      const first = await post(agui.url, guide("g-once", { preferredLanguage: "en" }));
      expect(first.events.map((e) => e.type)).to.deep.equal(["RUN_STARTED", "RUN_FINISHED"]);
      await refused(guide("g-once", { preferredLanguage: "en" }), 409, "DUPLICATE_RUN_ID");
      await refused(guide("g-once", { preferredLanguage: "fr" }), 409, "RUN_ID_CONFLICT");
      await refused(guide("main"), 409, "RUN_ID_CONFLICT");
      const events = await main.end();
      expect(events.at(-1)!.outcome).to.deep.equal({ type: "success" });
      expect(tap.calls.map((c) => c.method)).to.not.include("CancelTask");
    });

    it("a thread with no bound task, and a pipeline that has ended: 409 EXECUTION_LOST", async () => {
      // The first run fails before any A2A call (an empty message): the thread is bound, no task.
      const empty = await post(agui.url, {
        ...body({ runId: "empty", text: "", ros: "inv-main" }),
        messages: [],
      });
      expect(empty.events.map((e) => [e.type, e.code])).to.deep.equal([
        ["RUN_STARTED", undefined],
        ["RUN_ERROR", "INVALID_INPUT"],
      ]);
      await refused(guide("g-notask"), 409, "EXECUTION_LOST");
      const done = await post(
        agui.url,
        body({ runId: "main", text: "Deploy a small web app", ros: "inv-main" }),
      );
      expect(done.events.at(-1)!.outcome).to.deep.equal({ type: "success" });
      await refused(guide("g-ended"), 409, "EXECUTION_LOST");
    });

    it("an interrupt waiting for its answer: 409 RESUME_REQUIRED, in the request's language", async () => {
      const asked = await post(agui.url, body({ runId: "main", text: "[ASK] something", ros: "inv-main" }));
      expect(asked.events.at(-1)!.outcome).to.include({ type: "interrupt" });
      await refused(guide("g-waiting"), 409, "RESUME_REQUIRED");
      const zh = await refused(guide("g-waiting-zh", { preferredLanguage: "zh-CN" }), 409, "RESUME_REQUIRED");
      expect(zh).to.not.match(/^[ -~]+$/);
      expect(
        await refused(
          guide("g-zh-lost", { preferredLanguage: "zh-CN", runMode: "normal" }),
          409,
          "EXECUTION_LOST",
        ),
      ).to.equal("此线程上没有可引导的正在运行的流水线。");
    });
  });
});

describe("AG-UI guidance during [demo:slow-deploy] (the demo's scripted model and simulated ROS endpoint)", function () {
  this.timeout(120_000);
  let dir: string;
  let demo: Awaited<ReturnType<typeof startDemoA2a>>;
  let agui: AguiServer;
  let n = 0;

  before(async () => {
    dir = await tempDir("iac-guidance-demo-");
    demo = await startDemoA2a(dir);
    agui = await startAguiServer(adapterSettings({ url: demo.server.url, dir }));
  });
  after(async () => {
    await agui?.close();
    await demo?.close();
    await removeTempDirs();
  });

  /**
   * Plays the scenario over AG-UI (the official client), answering every interrupt with its
   * first choice; once the stack group's progress shows, `text` is sent as guidance.
   */
  async function playGuided(text: string) {
    n++;
    const cwd = path.join(dir, `ws-${n}`);
    mkdirSync(cwd, { recursive: true });
    const iacCode = { schemaVersion: 1, rosInvocationId: `inv-${n}`, cwd, runMode: "pipeline" };
    const agent = new HttpAgent({
      url: agui.url,
      threadId: `demo-${n}`,
      initialMessages: [{ id: "u1", role: "user", content: "I need a website [demo:slow-deploy]" }],
    });
    const runs: WireEvent[][] = [];
    let guidance: ReturnType<typeof post> | undefined;
    let resume: ResumeEntry[] | undefined;
    for (let i = 1; i <= 20; i++) {
      const events: WireEvent[] = [];
      await agent.runAgent(
        { runId: `run-${i}`, forwardedProps: { iacCode }, ...(resume ? { resume } : {}) },
        {
          onEvent: ({ event }: { event: BaseEvent }) => {
            const ev = event as unknown as WireEvent;
            events.push(ev);
            const value = ev.value as { eventType?: string } | undefined;
            if (!guidance && ev.type === "CUSTOM" && value?.eventType === "stack_instances_progress") {
              const body = {
                threadId: `demo-${n}`,
                runId: "guide-1",
                state: {},
                messages: [{ id: "g1", role: "user", content: text }],
                tools: [],
                context: [],
                forwardedProps: {
                  iacCode: { ...iacCode, rosInvocationId: "inv-guide", activeGuidance: true },
                },
              };
              guidance = post(agui.url, body);
            }
          },
        },
      );
      await expectValidStream(events);
      runs.push(events);
      const outcome = events.at(-1)!.outcome as { type: string; interrupts?: Interrupt[] } | undefined;
      if (outcome?.type !== "interrupt") break;
      resume = outcome.interrupts!.map((it) => answerFor(it));
    }
    expect(guidance, "the deployment's progress showed").to.not.equal(undefined);
    return { runs, guidance: await guidance! };
  }

  const kinds = (runs: WireEvent[][]) =>
    runs.flatMap((events) => {
      const outcome = events.at(-1)!.outcome as { interrupts?: Interrupt[] } | undefined;
      return (outcome?.interrupts ?? []).map((it) => (it.metadata as { kind: string }).kind);
    });
  const verdictOf = (runs: WireEvent[][]) =>
    customs(runs.flat(), "iac-code.guidance.v1").find((v) => v.eventType === "interrupt_classified");

  it("'stop' reaches the judge while the stack group deploys; the judge fails, so deploying pauses until the user continues", async () => {
    const { runs, guidance } = await playGuided("stop");
    expect(guidance.events.map((e) => e.type)).to.deep.equal(["RUN_STARTED", "RUN_FINISHED"]);
    expect(verdictOf(runs)!.data).to.include({
      action: "continue",
      targetStepId: "deploying",
      paused: true,
      judgeFailed: true,
    });
    expect(kinds(runs)).to.include("pipeline_pause_confirmation");
    expect(runs.at(-1)!.at(-1)!.outcome).to.deep.equal({ type: "success" });
    const stacks = customs(runs.flat(), "iac-code.pipeline.v1").filter(
      (v) => v.eventType === "stack_current_changed",
    );
    expect(stacks).to.have.length(1);
  });

  it("any other message is noted (continue): no pause, no second confirmation, one deployment", async () => {
    const { runs, guidance } = await playGuided("please tag everything team=web");
    expect(guidance.events.map((e) => e.type)).to.deep.equal(["RUN_STARTED", "RUN_FINISHED"]);
    expect(verdictOf(runs)!.data).to.include({ action: "continue", paused: false, judgeFailed: false });
    expect(kinds(runs)).to.not.include("pipeline_pause_confirmation");
    expect(kinds(runs).filter((k) => k === "deployment_confirmation")).to.have.length(1);
    expect(runs.at(-1)!.at(-1)!.outcome).to.deep.equal({ type: "success" });
  });
});
