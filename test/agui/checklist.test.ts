// Items of the AG-UI acceptance checklist (agui-iaccode.md §10) that had code
// but no test (issue 30): each test names its item and fails when the
// behaviour it describes is removed. Everything runs over loopback HTTP: the
// real A2A server (backed by the scripted fixture runtime) and the real
// adapter, with a tap between them (harness.ts startTap) that records what the
// adapter asks A2A and, where our A2A server never sends what an item is
// about (sideband permissions, a task snapshot with a pipeline suffix, a
// session id named only on the envelopes), rewrites A2A's answers the way an
// A2A server that sends it would.
import { expect } from "chai";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import type { ServerResponse } from "node:http";
import type { InputRequest, PipelineEnvelope } from "../../src/runtime/seam.js";
import { PIPELINE_EVENTS_EXTENSION } from "../../src/runtime/seam.js";
import { parseSseText } from "../../src/server/sse.js";
import { writePermissionRequest } from "../fixtures/input-requests.js";
import { expectStrictThreadRun, type WireEvent } from "./helpers.js";
import { post, runInput, startHarness, type Harness, type TapCall } from "./harness.js";
import type { ScriptSession } from "./fixtures/runtime.js";

type Json = Record<string, unknown>;

interface Interrupt {
  id: string;
  metadata: Json;
}

const CUSTOM_PIPELINE = "iac-code.pipeline.v1";
const CUSTOM_SESSION = "iac-code.session.v1";

function interruptsOf(events: WireEvent[]): Interrupt[] {
  const last = events.at(-1)!;
  expect(last.type, JSON.stringify(last)).to.equal("RUN_FINISHED");
  const outcome = last.outcome as { type: string; interrupts: Interrupt[] };
  expect(outcome.type).to.equal("interrupt");
  return outcome.interrupts;
}

function expectSuccess(events: WireEvent[]): void {
  expect(events.at(-1), JSON.stringify(events.at(-1))).to.deep.include({
    type: "RUN_FINISHED",
    outcome: { type: "success" },
  });
}

const named = (events: WireEvent[], type: string, name?: string) =>
  events.filter((e) => e.type === type && (name === undefined || e.stepName === name || e.name === name));

const pipelineCustoms = (events: WireEvent[]) => named(events, "CUSTOM", CUSTOM_PIPELINE);

/** The thread's state file as it is on disk (the store's cache is the adapter's memory). */
function onDisk(
  h: Harness,
  threadId: string,
): {
  iacCodeSessionId: string | null;
  terminalExecutionIds: string[];
  execution: {
    executionId: string;
    taskId: string | null;
    pipelineSequence: number;
    pipelineOpenSteps: string[];
    pending: Record<string, { value: Json; sideband: boolean }>;
  };
} {
  return JSON.parse(readFileSync(h.store.fileFor(threadId), "utf8")) as never;
}

function sessionOf(h: Harness): ScriptSession {
  const sessions = [...h.runtime.sessions.values()];
  expect(sessions).to.have.length(1);
  return sessions[0];
}

/** A pipeline envelope as the runtime publishes it (a2a/pipeline-envelope), for the session's context. */
function envelope(
  session: ScriptSession,
  taskId: string,
  fields: Partial<PipelineEnvelope> & Pick<PipelineEnvelope, "eventId" | "sequence" | "eventType">,
): PipelineEnvelope {
  return {
    schemaVersion: "1.0",
    extensionUri: PIPELINE_EVENTS_EXTENSION,
    createdAt: new Date().toISOString(),
    scope: "pipeline",
    pipelineRunId: session.contextId,
    taskId,
    contextId: session.contextId,
    pipelineName: "selling",
    iacCodeSessionId: session.sessionId,
    status: "working",
    data: {},
    ...fields,
  };
}

const calls = (h: Harness, method: string): TapCall[] => h.tap!.calls.filter((c) => c.method === method);

/** The afterSequence of each pipeline catch-up the adapter asked A2A for. */
const catchUps = (h: Harness): number[] =>
  h
    .tap!.calls.filter((c) => c.path.startsWith("/iac-code/pipeline/state"))
    .map((c) => Number(new URL(c.path, "http://x").searchParams.get("afterSequence")));

/** The Task a JSON-RPC answer carries: a stream's snapshot item, or GetTask's result. */
function taskOf(body: unknown): Json | undefined {
  const result = (body as { result?: Json } | undefined)?.result;
  if (!result) return undefined;
  if (result.task && typeof result.task === "object") return result.task as Json;
  return typeof result.id === "string" && result.status ? result : undefined;
}

/** metadata.iac_code of a JSON-RPC answer's task or status update (created when missing). */
function iacOf(body: unknown, create = false): Json | undefined {
  const result = (body as { result?: Json } | undefined)?.result;
  const holder = taskOf(body) ?? (result?.statusUpdate as Json | undefined);
  if (!holder) return undefined;
  if (!holder.metadata && create) holder.metadata = {};
  const metadata = holder.metadata as Json | undefined;
  if (metadata && !metadata.iac_code && create) metadata.iac_code = {};
  return metadata?.iac_code as Json | undefined;
}

async function a2aTaskState(h: Harness, taskId: string): Promise<string> {
  const res = await fetch(h.a2a.url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "A2A-Version": "1.0",
      Authorization: "Bearer a2a-secret-token",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: taskId } }),
  });
  return ((await res.json()) as { result: { status: { state: string } } }).result.status.state;
}

const allow = (interruptId: string, decision = "allow_once") => [
  { interruptId, status: "resolved", payload: { decision } },
];

/** Runs `[[permission]]` on a new thread: the run ends on the write permission. */
async function permissionInterrupt(h: Harness, threadId: string, iac?: Json) {
  const first = await post(
    h.url,
    runInput(h, { threadId, runId: `${threadId}-1`, text: "[[permission]] x", iac }),
  );
  const [interrupt] = interruptsOf(first.events);
  const session = named(first.events, "CUSTOM", CUSTOM_SESSION)[0]?.value as
    { executionId: string; taskId: string; sessionId: string } | undefined;
  return { first, interrupt, session };
}

describe("AG-UI acceptance checklist (agui-iaccode.md §10), items with code and no test until now", function () {
  this.timeout(30_000);
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ tap: true });
  });
  afterEach(async () => {
    await h.close();
  });

  it("item 2: model, llmApiKey, thinking, alibabaCloud and llmHeaders reach A2A as metadata.iac_code exactly and as the turn's overrides", async () => {
    const headers = { "X-Tenant": "tenant-7", "x-trace-id": "trace-abc" };
    const cloud = {
      accessKeyId: "fake-access-key",
      accessKeySecret: "fake-access-secret",
      securityToken: "fake-sts-token",
      regionId: "cn-hangzhou",
    };
    const res = await post(
      h.url,
      runInput(h, {
        threadId: "t-overrides",
        runId: "r1",
        text: "hello",
        iac: {
          model: "qwen-test",
          llmApiKey: "fake-provider-key",
          thinking: { enabled: true, effort: "low", budget: 1024 },
          alibabaCloud: cloud,
          llmHeaders: headers,
        },
      }),
    );
    expectSuccess(res.events);
    const sends = calls(h, "SendStreamingMessage");
    expect(sends).to.have.length(1);
    const message = sends[0].params!.message as { metadata: { iac_code: Json } };
    expect(message.metadata.iac_code).to.deep.equal({
      cwd: realpathSync(h.workspace),
      iac_code_model: "qwen-test",
      iac_code_api_key: "fake-provider-key",
      llm_headers: headers,
      thinking: { enabled: true, effort: "low", budget: 1024 },
      preferredLanguage: "en",
      cleanupOnly: false,
      rosInvocationId: "invocation-1",
      alibaba_cloud_access_key_id: "fake-access-key",
      alibaba_cloud_access_key_secret: "fake-access-secret",
      alibaba_cloud_security_token: "fake-sts-token",
      alibaba_cloud_region_id: "cn-hangzhou",
    });
    // ... and A2A hands them to the runtime as the turn's model, key, thinking and cloud credentials.
    expect(h.runtime.turns).to.have.length(1);
    expect(h.runtime.turns[0].overrides).to.deep.include({
      model: "qwen-test",
      apiKey: "fake-provider-key",
      thinking: { enabled: true, effort: "low", budget: 1024 },
      alibabaCloud: cloud,
      llmHeaders: headers,
    });
    // The headers are secret: not in the thread's state file, not echoed in the run's events.
    const state = readFileSync(h.store.fileFor("t-overrides"), "utf8");
    for (const value of Object.values(headers)) {
      expect(state).not.to.include(value);
      expect(res.raw).not.to.include(value);
    }
  });

  it("item 3: an empty llmHeaders {} is forwarded as {}", async () => {
    const res = await post(
      h.url,
      runInput(h, { threadId: "t-empty-headers", runId: "r1", text: "hello", iac: { llmHeaders: {} } }),
    );
    expectSuccess(res.events);
    const [send] = calls(h, "SendStreamingMessage");
    const iac = (send.params!.message as { metadata: { iac_code: Json } }).metadata.iac_code;
    expect(iac).to.have.property("llm_headers").that.deep.equals({});
    expect(h.runtime.turns[0].overrides.llmHeaders).to.deep.equal({});
    // null means "not given": no key at all.
    const none = await post(
      h.url,
      runInput(h, { threadId: "t-null-headers", runId: "r1", text: "hello", iac: { llmHeaders: null } }),
    );
    expectSuccess(none.events);
    const second = calls(h, "SendStreamingMessage")[1];
    expect(
      (second.params!.message as { metadata: { iac_code: Json } }).metadata.iac_code,
    ).not.to.have.property("llm_headers");
  });

  it("item 25: the session id is read from pipelineBatch.events[].iacCodeSessionId", async () => {
    // Our A2A server also names the session at the top of metadata.iac_code; the tap
    // removes it there, as from an A2A server that names it only on its envelopes.
    let batches = 0;
    h.tap!.rewrite = (_call, body) => {
      const iac = iacOf(body);
      if (iac) {
        delete iac.iacCodeSessionId;
        if (iac.pipelineBatch) batches++;
      }
      return body;
    };
    h.runtime.scripts.set("batch", function* ({ session, input }) {
      yield {
        type: "pipeline",
        envelopes: [
          envelope(session, input.taskId!, { eventId: "b-1", sequence: 1, eventType: "pipeline_progress" }),
          envelope(session, input.taskId!, { eventId: "b-2", sequence: 2, eventType: "pipeline_progress" }),
        ],
      };
      yield { type: "text_delta", messageId: "m1", text: "done" };
      yield { type: "message_end", messageId: "m1", stopReason: "end_turn", text: "done" };
    });
    h.runtime.scripts.set("plain", function* () {
      yield { type: "text_delta", messageId: "m1", text: "done" };
      yield { type: "message_end", messageId: "m1", stopReason: "end_turn", text: "done" };
    });
    // Without envelopes the stripped stream names no session: the batch is the only source.
    const plain = await post(
      h.url,
      runInput(h, { threadId: "t-plain", runId: "r1", text: "[[script:plain]]" }),
    );
    expectSuccess(plain.events);
    expect(named(plain.events, "CUSTOM", CUSTOM_SESSION)[0].value).not.to.have.property("sessionId");
    h.runtime.sessions.clear();

    const res = await post(
      h.url,
      runInput(h, { threadId: "t-batch", runId: "r1", text: "[[script:batch]]" }),
    );
    expectSuccess(res.events);
    expect(batches).to.equal(1);
    const sessionId = sessionOf(h).sessionId;
    const announced = named(res.events, "CUSTOM", CUSTOM_SESSION);
    expect(announced).to.have.length(1);
    expect(announced[0].value).to.include({ sessionId });
    expect(onDisk(h, "t-batch").iacCodeSessionId).to.equal(sessionId);
  });

  it("item 35: pipeline thinking of two candidates is REASONING content under two message ids, no CUSTOM", async () => {
    h.runtime.scripts.set("thinking", function* ({ session, input }) {
      let sequence = 0;
      for (const [candidate, text] of [
        ["candidate-a", "A thinks. "],
        ["candidate-b", "B thinks. "],
        ["candidate-a", "A again."],
        ["candidate-b", "B again."],
      ]) {
        sequence++;
        yield {
          type: "pipeline",
          envelopes: [
            envelope(session, input.taskId!, {
              eventId: `think-${sequence}`,
              sequence,
              eventType: "thinking_delta",
              scope: "candidate_step",
              candidate: { id: candidate, runId: candidate },
              candidateStep: { id: "template_generating" },
              data: { type: "raw_thinking", text },
            }),
          ],
        };
      }
    });
    const res = await post(
      h.url,
      runInput(h, {
        threadId: "t-think",
        runId: "r1",
        text: "[[script:thinking]]",
        iac: { runMode: "pipeline" },
      }),
    );
    expectSuccess(res.events);
    const byId = new Map<string, string>();
    for (const e of named(res.events, "REASONING_MESSAGE_CONTENT"))
      byId.set(String(e.messageId), (byId.get(String(e.messageId)) ?? "") + String(e.delta));
    expect(byId.size).to.equal(2);
    const [a, b] = [...byId.keys()];
    expect(a).to.include("candidate-a:template_generating");
    expect(b).to.include("candidate-b:template_generating");
    expect([...byId.values()]).to.deep.equal(["A thinks. A again.", "B thinks. B again."]);
    expect(named(res.events, "REASONING_START")).to.have.length(2);
    expect(pipelineCustoms(res.events)).to.deep.equal([]);
  });

  it("item 36: input_received reopens a step closed for the interactive selection (2 starts, 2 finishes)", async () => {
    const step = { id: "confirm_and_select", runId: "step-confirm_and_select-1" };
    const selection: InputRequest = {
      inputId: "select-1",
      kind: "candidate_selection",
      toolUseId: "select-tool-1",
      toolName: "candidate_selection",
      title: "Choose a candidate",
      purpose: "Pick the architecture to deploy",
      effect: "read",
      isReadOnly: true,
      prompt: "Which architecture should I deploy?",
      safeSummary: "candidate selection",
      options: [
        { id: "0", label: "Basic" },
        { id: "1", label: "Highly available" },
      ],
      responseSchema: { type: "object" },
      language: "en",
    };
    h.runtime.scripts.set("select", async function* (turn) {
      const env = (eventId: string, sequence: number, eventType: string) =>
        envelope(turn.session, turn.input.taskId!, { eventId, sequence, eventType, scope: "step", step });
      yield { type: "pipeline", envelopes: [env("s-1", 1, "step_started")] };
      // The engine closes the step while it waits for the user's choice.
      yield { type: "pipeline", envelopes: [env("s-2", 2, "step_completed")] };
      turn.expect(selection);
      yield { type: "input_required", request: selection };
      const answer = await turn.answer(selection.inputId);
      if (!answer) return;
      yield {
        type: "input_received",
        inputId: selection.inputId,
        toolUseId: selection.toolUseId,
        kind: "candidate_selection",
        pipeline: [env("s-3", 3, "input_received")],
      };
      yield { type: "pipeline", envelopes: [env("s-4", 4, "step_completed")] };
    });
    const iac = { runMode: "pipeline" };
    const first = await post(
      h.url,
      runInput(h, { threadId: "t-reopen", runId: "r1", text: "[[script:select]]", iac }),
    );
    const [interrupt] = interruptsOf(first.events);
    const second = await post(
      h.url,
      runInput(h, {
        threadId: "t-reopen",
        runId: "r2",
        iac,
        resume: [{ interruptId: interrupt.id, status: "resolved", payload: { selectedId: "1" } }],
      }),
    );
    expectSuccess(second.events);
    const all = [...first.events, ...second.events];
    expect(named(all, "STEP_STARTED", "confirm_and_select")).to.have.length(2);
    expect(named(all, "STEP_FINISHED", "confirm_and_select")).to.have.length(2);
    // The second start is the answer's: the resume run reopens the step and the engine closes it.
    expect(named(second.events, "STEP_STARTED", "confirm_and_select")).to.have.length(1);
    expect(named(second.events, "STEP_FINISHED", "confirm_and_select")).to.have.length(1);
    expect(onDisk(h, "t-reopen").execution.pipelineOpenSteps).to.deep.equal([]);
  });

  it("item 40: a direct input with scope candidate or a subPipelineId is a sideband interrupt", async () => {
    // Our A2A server never sends these fields (DECISIONS: parallel permissions are asked
    // one at a time, no sideband permissions); the tap adds them to the input as an A2A
    // server with sub-pipeline permissions would.
    let extra: Json = {};
    h.tap!.rewrite = (_call, body) => {
      const iac = iacOf(body);
      if (iac?.input) Object.assign(iac.input as Json, extra);
      return body;
    };
    const plain = await permissionInterrupt(h, "t-top");
    expect(onDisk(h, "t-top").execution.pending[plain.interrupt.id].sideband).to.equal(false);

    extra = { scope: "candidate" };
    const scoped = await permissionInterrupt(h, "t-scope");
    expect(scoped.interrupt.metadata).to.include({ scope: "candidate" });
    expect(onDisk(h, "t-scope").execution.pending[scoped.interrupt.id].sideband).to.equal(true);

    extra = { subPipelineId: "candidate-a" };
    const sub = await permissionInterrupt(h, "t-sub");
    expect(sub.interrupt.metadata).to.include({ subPipelineId: "candidate-a" });
    expect(onDisk(h, "t-sub").execution.pending[sub.interrupt.id].sideband).to.equal(true);
  });

  it("item 43: thinking caught up from the pipeline journal is reasoning content, no thinking CUSTOM", async () => {
    const { interrupt } = await permissionInterrupt(h, "t-rec-think");
    const session = sessionOf(h);
    const taskId = onDisk(h, "t-rec-think").execution.taskId!;
    // Published while no run was reading: only the journal has it.
    const thinking = envelope(session, taskId, {
      eventId: "thinking-1",
      sequence: 1,
      eventType: "thinking_delta",
      data: { type: "raw_thinking", text: "recovered reasoning" },
    });
    h.runtime.journal = (after) => ({
      snapshot: { schemaVersion: "1.0", pipelineRunId: session.contextId, lastSequence: 1 },
      events: (after ?? 0) < 1 ? [thinking] : [],
    });
    const res = await post(
      h.url,
      runInput(h, { threadId: "t-rec-think", runId: "r2", resume: allow(interrupt.id) }),
    );
    expectSuccess(res.events);
    expect(catchUps(h)).to.deep.equal([0]);
    expect(named(res.events, "ACTIVITY_SNAPSHOT")).to.have.length(1);
    expect(named(res.events, "REASONING_MESSAGE_CONTENT").map((e) => e.delta)).to.deep.equal([
      "recovered reasoning",
    ]);
    expect(pipelineCustoms(res.events)).to.deep.equal([]);
  });

  it("item 44: a task snapshot's pipeline suffix is never mapped: no events, the cursor stays 0", async () => {
    // Our A2A server's tasks carry no pipeline envelopes; the tap gives every Task (the
    // first item of each stream, GetTask's answer) the suffix a task of the reference's
    // A2A server carries. Only the journal, read from the persisted cursor, is authoritative.
    let injected = 0;
    h.tap!.rewrite = (_call, body) => {
      const task = taskOf(body);
      if (!task) return body;
      injected++;
      const session = [...h.runtime.sessions.values()][0];
      const suffix = [
        { eventId: "old-5", sequence: 5, eventType: "pipeline_started" },
        { eventId: "old-6", sequence: 6, eventType: "step_started", scope: "step" as const },
        { eventId: "old-7", sequence: 7, eventType: "step_completed", scope: "step" as const },
      ].map((f) =>
        session
          ? envelope(session, String(task.id), { ...f, step: { id: "confirm_and_select" } })
          : { ...f, step: { id: "confirm_and_select" } },
      );
      const iac = iacOf(body, true)!;
      iac.pipelineBatch = { schemaVersion: "1.0", extensionUri: PIPELINE_EVENTS_EXTENSION, events: suffix };
      return body;
    };
    const { first, interrupt } = await permissionInterrupt(h, "t-suffix");
    expect(named(first.events, "STEP_STARTED")).to.deep.equal([]);
    expect(named(first.events, "STEP_FINISHED")).to.deep.equal([]);
    expect(pipelineCustoms(first.events)).to.deep.equal([]);
    expect(onDisk(h, "t-suffix").execution).to.deep.include({ pipelineSequence: 0, pipelineOpenSteps: [] });

    const res = await post(
      h.url,
      runInput(h, { threadId: "t-suffix", runId: "r2", resume: allow(interrupt.id) }),
    );
    expectSuccess(res.events);
    // The new run's snapshot, GetTask's and the answer stream's snapshot all carried it.
    expect(injected).to.equal(3);
    expect(catchUps(h)).to.deep.equal([0]);
    expect(named(res.events, "STEP_STARTED")).to.deep.equal([]);
    expect(named(res.events, "STEP_FINISHED")).to.deep.equal([]);
    expect(pipelineCustoms(res.events)).to.deep.equal([]);
    expect(onDisk(h, "t-suffix").execution.pipelineSequence).to.equal(0);
  });

  it("item 48: the journal may fill an unseen eventId below the live cursor (9 < 10): one STEP_FINISHED, cursor 12", async () => {
    const candidateStep = {
      scope: "candidate_step" as const,
      candidate: { id: "candidate-a" },
      candidateStep: { id: "template_generating" },
    };
    h.runtime.scripts.set("fill", async function* (turn) {
      const taskId = turn.input.taskId!;
      yield {
        type: "pipeline",
        envelopes: [
          envelope(turn.session, taskId, {
            eventId: "c-1",
            sequence: 1,
            eventType: "candidate_step_started",
            ...candidateStep,
          }),
        ],
      };
      // Sequence 9 (the candidate's end) is journaled, but the live stream carries 10 first.
      yield {
        type: "pipeline",
        envelopes: [
          envelope(turn.session, taskId, { eventId: "p-10", sequence: 10, eventType: "pipeline_progress" }),
        ],
      };
      const request = writePermissionRequest({ inputId: "permission-fill", toolUseId: "tool-fill" });
      turn.expect(request);
      yield { type: "input_required", request };
      if (!(await turn.answer(request.inputId))) return;
      yield { type: "text_delta", messageId: "m2", text: "Written." };
      yield { type: "message_end", messageId: "m2", stopReason: "end_turn", text: "Written." };
    });
    const iac = { runMode: "pipeline" };
    const first = await post(
      h.url,
      runInput(h, { threadId: "t-fill", runId: "r1", text: "[[script:fill]]", iac }),
    );
    const [interrupt] = interruptsOf(first.events);
    const key = "candidate:candidate-a:template_generating";
    expect(onDisk(h, "t-fill").execution).to.deep.include({ pipelineSequence: 10, pipelineOpenSteps: [key] });
    const session = sessionOf(h);
    const missed = envelope(session, onDisk(h, "t-fill").execution.taskId!, {
      eventId: "missed-9",
      sequence: 9,
      eventType: "candidate_step_completed",
      ...candidateStep,
    });
    // Our own journal returns only events after afterSequence; an A2A journal that fills a
    // gap returns the missed event although it lies below the caller's cursor.
    h.runtime.journal = () => ({
      snapshot: { schemaVersion: "1.0", pipelineRunId: session.contextId, lastSequence: 12 },
      events: [missed],
    });
    const res = await post(
      h.url,
      runInput(h, { threadId: "t-fill", runId: "r2", iac, resume: allow(interrupt.id) }),
    );
    expectSuccess(res.events);
    expect(catchUps(h)).to.deep.equal([10]);
    const finished = named(res.events, "STEP_FINISHED", key);
    expect(finished).to.have.length(1);
    // Finished by the journal's event right after the snapshot, not by the run's end.
    const at = res.events.findIndex((e) => e.type === "ACTIVITY_SNAPSHOT");
    expect(res.events[at + 1]).to.include({ type: "STEP_FINISHED", stepName: key });
    expect(onDisk(h, "t-fill").execution).to.deep.include({ pipelineSequence: 12, pipelineOpenSteps: [] });
  });

  it("item 54: a JSON-RPC error answering a permission is A2A_UNAVAILABLE and the interrupt stays pending", async () => {
    const { interrupt } = await permissionInterrupt(h, "t-rpc");
    let rpcErrors = 0;
    h.tap!.rewrite = (_call, body) => {
      if ((body as { error?: unknown }).error) rpcErrors++;
      return body;
    };
    // The runtime does not take the answer: A2A refuses the message with a JSON-RPC error.
    h.runtime.refuseAnswers = 1;
    const failed = await post(
      h.url,
      runInput(h, { threadId: "t-rpc", runId: "r2", resume: allow(interrupt.id) }),
    );
    expect(rpcErrors).to.equal(1);
    expect(failed.events.map((e) => e.type)).to.deep.equal(["RUN_STARTED", "RUN_ERROR"]);
    expect(failed.events[1]).to.include({
      code: "A2A_UNAVAILABLE",
      message: "The local A2A execution service rejected the interrupt response.",
    });
    expect(Object.keys(onDisk(h, "t-rpc").execution.pending)).to.deep.equal([interrupt.id]);
    expect(h.runtime.answers).to.deep.equal([]);
    // Still answerable: the same answer in a new run goes through.
    const retried = await post(
      h.url,
      runInput(h, { threadId: "t-rpc", runId: "r3", resume: allow(interrupt.id) }),
    );
    expectSuccess(retried.events);
    expect(h.runtime.answers).to.have.length(1);
    expect(existsSync(path.join(h.workspace, "vpc.yaml"))).to.equal(true);
  });

  it("item 57: a top-level pipeline permission is answered with a streaming send (2 streaming calls in all)", async () => {
    // The answer goes as the permission data part on SendStreamingMessage, as in the reference.
    // Here every permission is answered so (DECISIONS, Parallel permissions: asked one after
    // the other, no sideband permissions), so the reference's unary sideband send (item 58) never is.
    h.runtime.scripts.set("deploy", async function* (turn) {
      const taskId = turn.input.taskId!;
      const step = { scope: "step" as const, step: { id: "deploying" } };
      yield {
        type: "pipeline",
        envelopes: [
          envelope(turn.session, taskId, { eventId: "d-1", sequence: 1, eventType: "step_started", ...step }),
        ],
      };
      const request = writePermissionRequest({ inputId: "permission-deploy", toolUseId: "tool-deploy" });
      turn.expect(request);
      yield { type: "input_required", request };
      const answer = await turn.answer(request.inputId);
      if (!answer) return;
      yield {
        type: "input_received",
        inputId: request.inputId,
        toolUseId: "tool-deploy",
        kind: "permission",
      };
      yield {
        type: "pipeline",
        envelopes: [
          envelope(turn.session, taskId, {
            eventId: "d-2",
            sequence: 2,
            eventType: "step_completed",
            ...step,
          }),
        ],
      };
    });
    const iac = { runMode: "pipeline" };
    const first = await post(
      h.url,
      runInput(h, { threadId: "t-top", runId: "r1", text: "[[script:deploy]]", iac }),
    );
    const [interrupt] = interruptsOf(first.events);
    expect(interrupt.metadata).not.to.have.property("scope");
    const taskId = onDisk(h, "t-top").execution.taskId!;
    const res = await post(
      h.url,
      runInput(h, { threadId: "t-top", runId: "r2", iac, resume: allow(interrupt.id) }),
    );
    const streaming = calls(h, "SendStreamingMessage");
    expect(streaming).to.have.length(2);
    expect(calls(h, "SendMessage")).to.deep.equal([]);
    expect(calls(h, "SubscribeToTask")).to.deep.equal([]);
    expectSuccess(res.events);
    const answer = streaming[1].params!.message as { taskId: string; parts: unknown[] };
    expect(answer.taskId).to.equal(taskId);
    expect(answer.parts).to.deep.equal([
      {
        data: {
          schemaVersion: 1,
          kind: "permission",
          requestTaskId: taskId,
          inputId: "permission-deploy",
          toolUseId: "tool-deploy",
          decision: "allow_once",
        },
        mediaType: "application/json",
      },
    ]);
  });

  /**
   * A resume whose GetTask shows the pending permission again, now among the task's
   * pendingPermissions (sideband), next to a second one nobody has seen. Our A2A server
   * shows one input at a time (DECISIONS: parallel permissions); the tap rewrites its
   * snapshot as an A2A server with concurrent sub-pipeline permissions would send it.
   */
  async function secondPermissionVisible(threadId: string) {
    const { interrupt } = await permissionInterrupt(h, threadId);
    const before = onDisk(h, threadId).execution.pending;
    h.tap!.rewrite = (call, body) => {
      if (call.method !== "GetTask") return body;
      const iac = iacOf(body)!;
      const input = iac.input as Json;
      delete iac.input;
      iac.pendingPermissions = [input, { ...input, inputId: "permission-2", toolUseId: "tool-2" }];
      return body;
    };
    const res = await post(
      h.url,
      runInput(h, { threadId, runId: `${threadId}-2`, resume: allow(interrupt.id) }),
    );
    return { interrupt, before, res };
  }

  it("item 60: a pending permission seen again as sideband is upgraded to sideband", async () => {
    const { interrupt, before, res } = await secondPermissionVisible("t-upgrade");
    expect(before[interrupt.id].sideband).to.equal(false);
    interruptsOf(res.events);
    const pending = onDisk(h, "t-upgrade").execution.pending;
    expect(pending[interrupt.id].sideband).to.equal(true);
    expect(pending["permission-2"].sideband).to.equal(true);
  });

  it("item 63: a question resume failing before A2A's first event is [RUN_STARTED, RUN_ERROR], pending kept; the retry succeeds", async () => {
    // The answer is the question's data part (DECISIONS, Question answers), not the reference's prompt text.
    const first = await post(
      h.url,
      runInput(h, { threadId: "t-q", runId: "r1", text: "[[question]] where?" }),
    );
    const [interrupt] = interruptsOf(first.events);
    let failing = true;
    h.tap!.intercept = (call, res: ServerResponse) => {
      const message = call.params?.message as { taskId?: string } | undefined;
      if (!failing || call.method !== "SendStreamingMessage" || !message?.taskId) return false;
      // The answer never reaches A2A: the service fails before any event.
      res.writeHead(503).end();
      return true;
    };
    const answer = [{ interruptId: interrupt.id, status: "resolved", payload: { selectedId: "cn-beijing" } }];
    const failed = await post(h.url, runInput(h, { threadId: "t-q", runId: "r2", resume: answer }));
    expect(failed.events.map((e) => e.type)).to.deep.equal(["RUN_STARTED", "RUN_ERROR"]);
    expect(failed.events[1]).to.include({ code: "A2A_UNAVAILABLE" });
    expect(Object.keys(onDisk(h, "t-q").execution.pending)).to.deep.equal([interrupt.id]);
    expect(h.runtime.answers).to.deep.equal([]);
    failing = false;
    const retried = await post(h.url, runInput(h, { threadId: "t-q", runId: "r3", resume: answer }));
    expectSuccess(retried.events);
    expect(named(retried.events, "TOOL_CALL_RESULT")).to.have.length(1);
    expect(onDisk(h, "t-q").execution.pending).to.deep.equal({});
    expect(h.runtime.answers).to.have.length(1);
  });

  it("item 77: the persisted permission keeps scope, subPipelineId, operation and displayParameters verbatim", async () => {
    // Our A2A server's input envelope has none of these; the tap adds them as the
    // reference's A2A server sends them for a sub-pipeline's cloud change.
    const display = {
      scope: "candidate",
      subPipelineId: "candidate-a",
      operation: {
        product: "vpc",
        action: "CreateVpc",
        region: "cn-hangzhou",
        apiCalls: [{ product: "VPC", action: "CreateVpc", effect: "change" }],
      },
      displayParameters: {
        format: "json",
        value: { CidrBlock: "10.0.0.0/16", Password: { redacted: true } },
      },
    };
    h.tap!.rewrite = (_call, body) => {
      const iac = iacOf(body);
      if (iac?.input)
        Object.assign(iac.input as Json, structuredClone(display), { toolInput: { content: "x" } });
      return body;
    };
    const { interrupt } = await permissionInterrupt(h, "t-keep");
    const value = onDisk(h, "t-keep").execution.pending[interrupt.id].value;
    for (const [k, v] of Object.entries(display)) expect(value[k], k).to.deep.equal(v);
    // Only the allowlisted projection is kept: never the tool's input or A2A's own schema.
    expect(value).not.to.have.any.keys("toolInput", "responseSchema");
    for (const [k, v] of Object.entries(display)) expect(interrupt.metadata[k], k).to.deep.equal(v);
  });

  it("item 84: an explicit empty pendingPermissions after an adapter restart does not erase the interrupt being answered", async () => {
    const { interrupt, session } = await permissionInterrupt(h, "t-empty");
    await h.agui.close();
    await h.restartAdapter();
    // A restarted A2A summary with an explicit empty list and no input.
    h.tap!.rewrite = (call, body) => {
      if (call.method !== "GetTask") return body;
      const iac = iacOf(body)!;
      delete iac.input;
      iac.pendingPermissions = [];
      return body;
    };
    const res = await post(
      h.url,
      runInput(h, { threadId: "t-empty", runId: "r2", resume: allow(interrupt.id) }),
    );
    expectSuccess(res.events);
    const sent = calls(h, "SendStreamingMessage").at(-1)!.params!.message as { parts: unknown[] };
    expect(sent.parts).to.deep.equal([
      {
        data: {
          schemaVersion: 1,
          kind: "permission",
          requestTaskId: session!.taskId,
          inputId: interrupt.id,
          toolUseId: interrupt.metadata.toolUseId,
          decision: "allow_once",
        },
        mediaType: "application/json",
      },
    ]);
    expect(h.runtime.answers).to.have.length(1);
    expect(existsSync(path.join(h.workspace, "vpc.yaml"))).to.equal(true);
  });

  it("item 87: after an adapter restart the cancel extension cancels the interrupted execution (CancelTask)", async () => {
    const { session } = await permissionInterrupt(h, "t-cancel");
    await h.agui.close();
    await h.restartAdapter();
    const res = await fetch(`${h.url}extensions/iac-code/v1/executions/${session!.executionId}/cancel`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ threadId: "t-cancel", rosInvocationId: "invocation-1" }),
    });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ executionId: session!.executionId, status: "cancelled" });
    expect(calls(h, "CancelTask").map((c) => c.params)).to.deep.equal([{ id: session!.taskId }]);
    expect(await a2aTaskState(h, session!.taskId)).to.equal("TASK_STATE_CANCELED");
    const saved = onDisk(h, "t-cancel");
    expect(saved.execution.pending).to.deep.equal({});
    expect(saved.terminalExecutionIds).to.include(session!.executionId);
  });

  it("item 88: a resume answering one of two newly visible permissions ends on an interrupt listing both, nothing sent", async () => {
    const { interrupt, res } = await secondPermissionVisible("t-two");
    const interrupts = interruptsOf(res.events);
    expect(interrupts.map((i) => i.id)).to.have.members([interrupt.id, "permission-2"]);
    // Nothing went to A2A: one streaming call (the first run's), no answer taken.
    expect(calls(h, "SendStreamingMessage")).to.have.length(1);
    expect(h.runtime.answers).to.deep.equal([]);
    expect(named(res.events, "CUSTOM", CUSTOM_SESSION)).to.deep.equal([]);
    expect(Object.keys(onDisk(h, "t-two").execution.pending)).to.have.members([interrupt.id, "permission-2"]);
  });

  it("item 90: a client that leaves while the resume waits for A2A keeps the interrupt (memory and disk), no CancelTask", async () => {
    const { interrupt, session } = await permissionInterrupt(h, "t-blocked");
    let held: ServerResponse | undefined;
    h.tap!.intercept = (call, res) => {
      const message = call.params?.message as { taskId?: string } | undefined;
      if (call.method !== "SendStreamingMessage" || !message?.taskId || held) return false;
      held = res; // never answered: A2A has not accepted the answer yet
      return true;
    };
    const controller = new AbortController();
    const response = await fetch(h.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(runInput(h, { threadId: "t-blocked", runId: "r2", resume: allow(interrupt.id) })),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let raw = "";
    while (!raw.includes("RUN_STARTED")) {
      const chunk = await reader.read();
      if (chunk.done) break;
      raw += new TextDecoder().decode(chunk.value as Uint8Array);
    }
    for (let i = 0; !held && i < 200; i++) await new Promise((r) => setTimeout(r, 25));
    expect(held, "the answer's request reached the tap").to.not.equal(undefined);
    const seen = parseSseText(raw).map((event) => JSON.parse(event.data) as WireEvent);
    expectStrictThreadRun(h.url, "t-blocked", seen, false);
    controller.abort();
    await new Promise((r) => setTimeout(r, 300));
    expect(calls(h, "CancelTask")).to.deep.equal([]);
    expect(Object.keys(onDisk(h, "t-blocked").execution.pending)).to.deep.equal([interrupt.id]);
    expect(await a2aTaskState(h, session!.taskId)).to.equal("TASK_STATE_INPUT_REQUIRED");

    // The answer's request fails; the run ends and the interrupt is still the adapter's to resume.
    held!.destroy();
    h.tap!.intercept = undefined;
    let retried = await post(
      h.url,
      runInput(h, { threadId: "t-blocked", runId: "r3", resume: allow(interrupt.id) }),
    );
    for (let i = 0; retried.status === 409 && retried.json?.error.code === "THREAD_BUSY" && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 50));
      retried = await post(
        h.url,
        runInput(h, { threadId: "t-blocked", runId: "r3", resume: allow(interrupt.id) }),
      );
    }
    expectSuccess(retried.events);
    expect(calls(h, "CancelTask")).to.deep.equal([]);
    expect(h.runtime.answers).to.have.length(1);
  });
});
