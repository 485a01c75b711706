// An observer attached to a demo pipeline while it deploys ([demo:slow-deploy]:
// a stack group in three regions, a few seconds) receives every journal event
// after its ACTIVITY_SNAPSHOT exactly once (the pipeline CUSTOM events, the
// tool calls and results, the text per step, checked against the A2A journal)
// and the run's end; its stream passes the official client and the strict
// verifier. Then the same after the adapter serving the run was killed (-9,
// a CLI child): a new adapter on the same state directory serves the observer
// from the thread's state file, and the pipeline is answered to its end.
import { expect } from "chai";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { RunningA2aServer } from "../../src/a2a/server.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { PIPELINE_CUSTOM_TYPES, pipelineMessageKey } from "../../src/agui/run/pipeline-steps.js";
import type { PipelineEnvelope } from "../../src/runtime/seam.js";
import { SseParser } from "../../src/server/sse.js";
import { post } from "../agui/harness.js";
import { expectValidStream, type WireEvent } from "../agui/helpers.js";
import { adapterSettings, cleanEnv, startSourceCli, type CliChild } from "../e2e/helpers.js";
import { removeTempDirs, tempDir } from "../runtime/helpers.js";
import { answerFor, type AnswerableInterrupt } from "./answers.js";
import { startDemoA2a } from "./helpers.js";

const TOKEN = "observer-pipeline-token";

/** A streaming POST read as events come. */
async function openStream(url: string, body: unknown) {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const events: WireEvent[] = [];
  let done = false;
  const readUntil = async (pred: () => boolean) => {
    while (!pred() && !done) {
      const r = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (r.done) {
        done = true;
        break;
      }
      for (const event of parser.push(decoder.decode(r.value as Uint8Array, { stream: true })))
        events.push(JSON.parse(event.data) as WireEvent);
    }
  };
  return { res, events, readUntil, abort: () => controller.abort() };
}

const pipelineCustoms = (events: WireEvent[]) =>
  events
    .filter((e) => e.type === "CUSTOM" && e.name === "iac-code.pipeline.v1")
    .map((e) => e.value as { eventId: string; eventType: string; sequence: number });

const deploying = (events: WireEvent[]) =>
  pipelineCustoms(events).some((v) => v.eventType === "stack_instances_progress");

interface Session {
  executionId: string;
  contextId: string;
}

/** What an observer should have seen of the journal after its snapshot and did not, or saw twice. */
function differences(observer: WireEvent[], journal: PipelineEnvelope[]): string[] {
  const out: string[] = [];
  const count = (pred: (e: WireEvent) => boolean) => observer.filter(pred).length;
  const once = (what: string, n: number) => {
    if (n !== 1) out.push(`${what} seen ${n} times`);
  };
  const texts = new Map<string, string>();
  for (const env of journal) {
    const at = `#${env.sequence} ${env.eventType}`;
    if (PIPELINE_CUSTOM_TYPES.has(env.eventType))
      once(at, count((e) => e.type === "CUSTOM" && (e.value as { eventId?: string }).eventId === env.eventId));
    if (env.eventType === "tool_started")
      once(`${at} START`, count((e) => e.type === "TOOL_CALL_START" && e.toolCallId === env.data.toolUseId));
    if (env.eventType === "tool_result")
      once(`${at} RESULT`, count((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === env.data.toolUseId));
    if (env.eventType === "text_delta") {
      const key = pipelineMessageKey(env as unknown as Record<string, unknown>, "");
      const group = key.split(":").slice(2).join(":");
      texts.set(group, (texts.get(group) ?? "") + String(env.data.text));
    }
  } // prettier-ignore
  const received = new Map<string, string>();
  for (const e of observer.filter((ev) => ev.type === "TEXT_MESSAGE_CONTENT")) {
    const id = String(e.messageId);
    if (!id.startsWith("pipeline-message:")) continue;
    const group = id.slice(0, id.lastIndexOf("@")).split(":").slice(2).join(":");
    received.set(group, (received.get(group) ?? "") + String(e.delta));
  }
  for (const key of new Set([...texts.keys(), ...received.keys()]))
    if (texts.get(key) !== received.get(key))
      out.push(
        `text of ${key}: journal ${JSON.stringify(texts.get(key))}, received ${JSON.stringify(received.get(key))}`,
      );
  return out;
}

describe("pipeline over AG-UI: an observer attached mid-deploy", function () {
  this.timeout(180_000);
  let dir: string;
  let demo: Awaited<ReturnType<typeof startDemoA2a>>;
  let a2a: RunningA2aServer;
  let agui: AguiServer | undefined;
  let cli: CliChild | undefined;

  before(async () => {
    dir = await tempDir("iac-observer-");
    demo = await startDemoA2a(dir, { token: TOKEN });
    a2a = demo.server;
  });
  afterEach(async () => {
    await cli?.stop("SIGKILL").catch(() => undefined);
    await agui?.close();
    agui = cli = undefined;
  });
  after(async () => {
    await demo?.close();
    await removeTempDirs();
  });

  async function journalAfter(contextId: string, after: number): Promise<PipelineEnvelope[]> {
    const res = await fetch(
      `${a2a.url.replace(/\/$/, "")}/iac-code/pipeline/state?contextId=${contextId}&afterSequence=${after}`,
      { headers: { Authorization: `Bearer ${TOKEN}` } },
    );
    expect(res.status).to.equal(200);
    return ((await res.json()) as { events: PipelineEnvelope[] }).events;
  }

  function body(threadId: string, runId: string, cwd: string, text?: string, resume?: unknown[]) {
    return {
      threadId,
      runId,
      state: {},
      tools: [],
      context: [],
      messages: text ? [{ id: `m-${runId}`, role: "user", content: text }] : [],
      forwardedProps: {
        iacCode: { schemaVersion: 1, rosInvocationId: "inv-1", cwd, runMode: "pipeline" },
      },
      ...(resume ? { resume } : {}),
    };
  }

  /**
   * Runs the slow-deploy pipeline on `threadId` through `runUrl`, answering
   * each interrupt, until a run shows the deploy; that run's stream is returned
   * open, with the run id and the session.
   */
  async function untilDeploying(runUrl: string, threadId: string, cwd: string) {
    let resume: unknown[] | undefined;
    let session: Session | undefined;
    for (let i = 1; i <= 12; i++) {
      const runId = `run-${i}`;
      const text = i === 1 ? "[demo:slow-deploy] I need a website" : undefined;
      const run = await openStream(runUrl, body(threadId, runId, cwd, text, resume));
      expect(run.res.status).to.equal(200);
      await run.readUntil(() => deploying(run.events));
      const announced = run.events.find((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1");
      session ??= announced?.value as Session | undefined;
      if (deploying(run.events)) return { run, runId, session: session! };
      const last = run.events.at(-1)!;
      expect(last.type, JSON.stringify(last)).to.equal("RUN_FINISHED");
      const outcome = last.outcome as { type: string; interrupts?: AnswerableInterrupt[] };
      expect(outcome.type, "the pipeline ended before deploying").to.equal("interrupt");
      resume = outcome.interrupts!.map((it) => answerFor(it, "1"));
    }
    throw new Error("the pipeline never deployed");
  }

  async function observe(url: string, threadId: string, runId: string, executionId: string) {
    const observer = await openStream(`${url}extensions/iac-code/v1/executions/${executionId}/subscribe`, {
      threadId,
      runId,
      rosInvocationId: "inv-1",
    });
    expect(observer.res.status).to.equal(200);
    await observer.readUntil(() => false);
    return observer.events;
  }

  /** The observer's stream: snapshots first, every later journal event once, the run's end. */
  async function checkObserved(events: WireEvent[], contextId: string, runEnd?: WireEvent) {
    await expectValidStream(events);
    expect(events.slice(0, 3).map((e) => e.type)).to.deep.equal([
      "RUN_STARTED",
      "MESSAGES_SNAPSHOT",
      "ACTIVITY_SNAPSHOT",
    ]);
    expect(events[1].messages).to.deep.include({
      id: "m-run-1",
      role: "user",
      content: "[demo:slow-deploy] I need a website",
    });
    // The steps' texts so far (from the journal up to the snapshot's cursor) are in the conversation.
    const said = (events[1].messages as Array<{ id: string; role: string }>).filter((m) =>
      m.id.startsWith("pipeline-message:"),
    );
    expect(said.length).to.be.greaterThan(0);
    expect(said.every((m) => m.role === "assistant")).to.equal(true);
    const snapshot = (events[2].content as { snapshot: { lastSequence: number; status: string } }).snapshot;
    expect(snapshot.lastSequence).to.be.greaterThan(0);
    const journal = await journalAfter(contextId, snapshot.lastSequence);
    expect(journal.length, "the deploy went on after the observer attached").to.be.greaterThan(0);
    const report = differences(events, journal);
    expect(report, report.join("\n")).to.deep.equal([]);
    const end = events.at(-1)!;
    if (runEnd) {
      expect(end.type).to.equal(runEnd.type);
      expect((end.outcome as { type?: string } | undefined)?.type).to.equal(
        (runEnd.outcome as { type?: string } | undefined)?.type,
      );
    } else expect(["RUN_FINISHED"]).to.include(end.type);
    return end;
  }

  it("[demo:slow-deploy]: the observer gets every later journal event once and the run's end", async () => {
    const cwd = path.join(dir, "ws-live");
    await mkdir(cwd, { recursive: true });
    agui = await startAguiServer(adapterSettings({ url: a2a.url, dir }, TOKEN));
    const threadId = "thread-observed";
    const { run, runId, session } = await untilDeploying(agui.url, threadId, cwd);
    const observed = observe(agui.url, threadId, runId, session.executionId);
    await run.readUntil(() => false);
    const events = await observed;
    await checkObserved(events, session.contextId, run.events.at(-1));
    // The run's own stream: every pipeline event the observer showed, in the same order.
    const seen = new Set(pipelineCustoms(events).map((v) => v.eventId));
    expect(pipelineCustoms(run.events).filter((v) => seen.has(v.eventId))).to.deep.equal(
      pipelineCustoms(events),
    );
  });

  it("after the adapter serving the run was killed (-9), a new adapter serves the observer", async () => {
    const cwd = path.join(dir, "ws-kill");
    await mkdir(cwd, { recursive: true });
    const stateDir = path.join(dir, "agui-state-kill");
    cli = await startSourceCli(
      [
        "agui",
        "--port",
        "0",
        "--a2a-url",
        a2a.url,
        "--state-dir",
        stateDir,
        "--allowed-cwds",
        dir,
        "--no-console",
      ],
      cleanEnv(dir, { IAC_CODE_AGUI_A2A_TOKEN: TOKEN }),
      // Run from the repository: `--import tsx` resolves from the working directory.
      process.cwd(),
    );
    const threadId = "thread-killed";
    const { run, runId, session } = await untilDeploying(`${cli.url.replace(/\/?$/, "/")}`, threadId, cwd);
    await cli.stop("SIGKILL");
    cli = undefined;
    run.abort();
    agui = await startAguiServer({ ...adapterSettings({ url: a2a.url, dir }, TOKEN), stateDir });
    const watching = observe(agui.url, threadId, runId, session.executionId);
    // The new adapter runs nothing itself: the observer alone keeps it from being idle (idle shutdown).
    let busy = false;
    for (let i = 0; i < 100 && !busy; i++) {
      busy = !agui.adapter.isIdle();
      if (!busy) await new Promise((r) => setTimeout(r, 20));
    }
    expect(busy, "idle while an observer follows the run").to.equal(true);
    const events = await watching;
    expect(agui.adapter.isIdle()).to.equal(true);
    const end = await checkObserved(events, session.contextId);
    // The thread goes on through the new adapter: each interrupt answered, to the pipeline's end.
    let outcome = end.outcome as { type: string; interrupts?: AnswerableInterrupt[] };
    for (let i = 1; outcome.type === "interrupt" && i <= 10; i++) {
      const res = await post(
        agui.url,
        body(
          threadId,
          `after-${i}`,
          cwd,
          undefined,
          outcome.interrupts!.map((it) => answerFor(it, "1")),
        ),
      );
      expect(res.status, res.raw).to.equal(200);
      const last = res.events.at(-1)!;
      expect(last.type, JSON.stringify(last)).to.equal("RUN_FINISHED");
      outcome = last.outcome as typeof outcome;
    }
    expect(outcome.type).to.equal("success");
  });
});
