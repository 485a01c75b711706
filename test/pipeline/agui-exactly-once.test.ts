// Every pipeline journal event that has an AG-UI projection reaches the client
// exactly once across all the runs of a thread, with parallel candidates
// publishing while interrupts wait and resumes are sent: 20 demo pipelines
// (demo mode: the bundled script and the simulated ROS endpoint), several at a
// time, each answered run after run until pipeline_completed; then the journal
// (GET /iac-code/pipeline/state?afterSequence=0) against every SSE event
// received. Every fifth thread runs a second pipeline after its first. Every
// stream also passes the strict thread verifier (post()): no message id twice
// on a thread, no tool result without its call.
import { expect } from "chai";
import path from "node:path";
import { mkdir } from "node:fs/promises";
import type { RunningA2aServer } from "../../src/a2a/server.js";
import { adapterSettings } from "../e2e/helpers.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { PIPELINE_CUSTOM_TYPES } from "../../src/agui/run/pipeline-steps.js";
import type { PipelineEnvelope } from "../../src/runtime/seam.js";
import { post } from "../agui/harness.js";
import type { WireEvent } from "../agui/helpers.js";
import { removeTempDirs, tempDir } from "../runtime/helpers.js";
import { answerFor } from "./answers.js";
import { startDemoA2a } from "./helpers.js";

const TOKEN = "exactly-once-token";
const PIPELINES = 20;
const AT_A_TIME = 4;

interface Interrupt {
  id: string;
  responseSchema?: unknown;
  metadata?: { kind?: string };
}

/** The events one thread received, run by run, and its A2A context. */
interface ThreadLog {
  threadId: string;
  runs: Array<{ runId: string; events: WireEvent[] }>;
  contextId?: string;
  /** The journal of each pipeline, read when it has completed (the state endpoint shows the latest run). */
  journal: PipelineEnvelope[];
}

describe("pipeline over AG-UI: every journal event reaches the client exactly once", function () {
  this.timeout(240_000);
  let dir: string;
  let demo: Awaited<ReturnType<typeof startDemoA2a>>;
  let a2a: RunningA2aServer;
  let agui: AguiServer;

  before(async () => {
    dir = await tempDir("iac-exactly-once-");
    demo = await startDemoA2a(dir, { token: TOKEN });
    a2a = demo.server;
    agui = await startAguiServer(adapterSettings({ url: a2a.url, dir }, TOKEN));
  });
  after(async () => {
    await agui?.close();
    await demo?.close();
    await removeTempDirs();
  });

  /** Runs `pipelines` pipelines on one thread, one after the other, answering every interrupt with a new run. */
  async function pipelineThread(n: number, pipelines: number): Promise<ThreadLog> {
    const threadId = `thread-${n}`;
    const cwd = path.join(dir, `ws-${n}`);
    await mkdir(cwd, { recursive: true });
    const log: ThreadLog = { threadId, runs: [], journal: [] };
    for (let p = 1; p <= pipelines; p++) {
      await pipelineToEnd(n, p, cwd, log);
      expect(log.contextId, threadId).to.be.a("string");
      const journal = await journalOf(log.contextId!);
      expect(
        journal.filter((e) => e.eventType === "pipeline_completed"),
        threadId,
      ).to.have.length(1);
      log.journal.push(...journal);
    }
    return log;
  }

  async function pipelineToEnd(n: number, p: number, cwd: string, log: ThreadLog): Promise<void> {
    const threadId = log.threadId;
    let resume: unknown[] | undefined;
    for (let i = 1; i <= 12; i++) {
      const runId = `run-${n}-${p}-${i}`;
      const res = await post(agui.url, {
        threadId,
        runId,
        state: {},
        tools: [],
        context: [],
        messages: i === 1 ? [{ id: `m-${n}-${p}`, role: "user", content: "I need a website" }] : [],
        forwardedProps: {
          iacCode: { schemaVersion: 1, rosInvocationId: `inv-${n}`, cwd, runMode: "pipeline" },
        },
        ...(resume ? { resume } : {}),
      });
      expect(res.status, res.raw).to.equal(200);
      log.runs.push({ runId, events: res.events });
      const session = res.events.find((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1");
      log.contextId ??= (session?.value as { contextId?: string } | undefined)?.contextId;
      const last = res.events.at(-1)!;
      expect(last.type, JSON.stringify(last)).to.equal("RUN_FINISHED");
      const outcome = last.outcome as { type: string; interrupts?: Interrupt[] };
      if (outcome.type === "success") return;
      resume = outcome.interrupts!.map((it) => answerFor(it, "1"));
    }
    throw new Error(`${threadId}: the pipeline did not end`);
  }

  async function journalOf(contextId: string): Promise<PipelineEnvelope[]> {
    const res = await fetch(
      `${a2a.url.replace(/\/$/, "")}/iac-code/pipeline/state?contextId=${contextId}&afterSequence=0`,
      { headers: { Authorization: `Bearer ${TOKEN}` } },
    );
    expect(res.status).to.equal(200);
    return ((await res.json()) as { events: PipelineEnvelope[] }).events;
  }

  it(`${PIPELINES} demo pipelines, ${AT_A_TIME} at a time: 0 missing, 0 duplicated`, async () => {
    const logs: ThreadLog[] = [];
    for (let start = 1; start <= PIPELINES; start += AT_A_TIME) {
      const batch = Array.from({ length: Math.min(AT_A_TIME, PIPELINES - start + 1) }, (_, k) => start + k);
      // Every fifth thread runs a second pipeline after the first (message ids stay unique on the thread).
      logs.push(...(await Promise.all(batch.map((n) => pipelineThread(n, n % 5 === 0 ? 2 : 1)))));
    }
    const report: string[] = [];
    for (const log of logs) report.push(...differences(log, log.journal));
    expect(report, report.join("\n")).to.deep.equal([]);
  });
});

/** What the client should have seen of the journal and did not, or saw twice. */
function differences(log: ThreadLog, journal: PipelineEnvelope[]): string[] {
  const all = log.runs.flatMap((r) => r.events);
  const count = (pred: (e: WireEvent) => boolean) => all.filter(pred).length;
  const out: string[] = [];
  const expectOnce = (what: string, n: number) => {
    if (n !== 1) out.push(`${log.threadId}: ${what} seen ${n} times`);
  };
  for (const env of journal) {
    const at = `#${env.sequence} ${env.eventType}`;
    const data = env.data;
    if (PIPELINE_CUSTOM_TYPES.has(env.eventType)) {
      expectOnce(at, count((e) => e.type === "CUSTOM" && (e.value as { eventId?: string }).eventId === env.eventId));
    }
    if (env.eventType === "tool_started")
      expectOnce(`${at} ${String(data.toolUseId)} START`, count((e) => e.type === "TOOL_CALL_START" && e.toolCallId === data.toolUseId));
    if (env.eventType === "tool_result")
      expectOnce(`${at} ${String(data.toolUseId)} RESULT`, count((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === data.toolUseId));
  } // prettier-ignore
  // Text and reasoning: per step (scope and coordinates), the deltas in journal order are what the client got.
  for (const [eventType, contentType] of [
    ["text_delta", "TEXT_MESSAGE_CONTENT"],
    ["thinking_delta", "REASONING_MESSAGE_CONTENT"],
  ] as const) {
    const expected = new Map<string, string>();
    for (const env of journal.filter((e) => e.eventType === eventType)) {
      const key = groupOf(env);
      expected.set(key, (expected.get(key) ?? "") + String(env.data.text));
    }
    const received = new Map<string, string>();
    for (const run of log.runs) {
      for (const e of run.events.filter((ev) => ev.type === contentType)) {
        const key = groupOfMessageId(String(e.messageId), run.runId);
        if (key) received.set(key, (received.get(key) ?? "") + String(e.delta));
      }
    }
    for (const key of new Set([...expected.keys(), ...received.keys()])) {
      if (expected.get(key) !== received.get(key)) {
        out.push(`${log.threadId}: ${eventType} of ${key}: journal ${JSON.stringify(expected.get(key))}, received ${JSON.stringify(received.get(key))}`);
      }
    } // prettier-ignore
  }
  // Usage: what RUN_FINISHED / RUN_ERROR summed over the runs is what the journal recorded.
  const journalTokens = journal
    .filter((e) => e.eventType === "usage")
    .reduce((sum, e) => sum + Number(e.data.totalTokens ?? 0), 0);
  const runTokens = log.runs
    .map((r) => r.events.at(-1)?.usage as Array<{ totalTokens: number }> | undefined)
    .reduce((sum, list) => sum + (list ?? []).reduce((s, u) => s + u.totalTokens, 0), 0);
  if (journalTokens !== runTokens)
    out.push(`${log.threadId}: usage ${runTokens} tokens, journal ${journalTokens}`);
  return out;
}

/** A journal event's step: its scope and coordinates (as the adapter names its messages). */
function groupOf(env: PipelineEnvelope): string {
  const coords: string[] = [];
  for (const o of [env.candidate, env.candidateStep, env.step]) {
    const c = o?.runId ?? o?.id;
    if (typeof c === "string" && c && !coords.includes(c)) coords.push(c);
  }
  return [env.scope ?? "pipeline", ...coords].join(":");
}

/**
 * The step of a pipeline message id, `pipeline-message:<pipelineRunId>:<scope>[:<coord>…]@<runId>[.<n>]`
 * (reasoning ids add `reasoning-` in front); undefined for other messages.
 */
function groupOfMessageId(id: string, runId: string): string | undefined {
  const bare = id.replace(/^reasoning-/, "");
  if (!bare.startsWith("pipeline-message:")) return undefined;
  const at = bare.lastIndexOf(`@${runId}`);
  const base = at < 0 ? bare : bare.slice(0, at);
  // Drop "pipeline-message" and the pipelineRunId.
  return base.split(":").slice(2).join(":");
}
