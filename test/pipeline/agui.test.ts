// The selling pipeline through the AG-UI adapter, driven by the official
// @ag-ui/client HttpAgent (every event also passes our contract and the
// client's verifier): forwardedProps.iacCode.runMode pipeline; STEP_* per step
// and per candidate (closed before each interrupt, reopened on resume);
// iac-code.pipeline.v1 custom events, never twice the same eventId; permission
// interrupts of the parallel candidates one at a time; the candidate selection
// interrupt whose response schema lists the options (standard and rich);
// ACTIVITY_SNAPSHOT on each resume; the early exit; an unknown pipeline refused.
import { expect } from "chai";
import path from "node:path";
import { mkdirSync } from "node:fs";
import { HttpAgent, type Interrupt } from "@ag-ui/client";
import { adapterSettings } from "../e2e/helpers.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { agentRun, post } from "../agui/harness.js";
import type { WireEvent } from "../agui/helpers.js";
import { removeTempDirs } from "../runtime/helpers.js";
import { startPipelineA2a, type PipelineA2a } from "./helpers.js";

type Outcome = { type: string; interrupts?: Interrupt[] };

const outcomeOf = (events: WireEvent[]): Outcome => {
  const last = events.at(-1)!;
  expect(last.type, JSON.stringify(last)).to.equal("RUN_FINISHED");
  return last.outcome as Outcome;
};

const customs = (events: WireEvent[]) =>
  events
    .filter((e) => e.type === "CUSTOM" && e.name === "iac-code.pipeline.v1")
    .map((e) => e.value as { eventId: string; eventType: string; data: Record<string, unknown> });

const stepNames = (events: WireEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.stepName as string);

/** The answer a test gives an interrupt: allow permissions, pick `choice` as candidate. */
function resumeFor(interrupt: Interrupt, choice: string) {
  const kind = (interrupt.metadata as { kind?: string } | undefined)?.kind;
  const payload = kind === "permission" ? { decision: "allow_once" } : { selectedId: choice };
  return { interruptId: interrupt.id, status: "resolved" as const, payload };
}

describe("pipeline over AG-UI (@ag-ui/client HttpAgent)", function () {
  this.timeout(60_000);
  let a2a: PipelineA2a;
  let agui: AguiServer;
  let n = 0;
  let workspace: string;

  before(async () => {
    a2a = await startPipelineA2a({ file: { token: "pipeline-token", "thinking-exposure": ["tool-trace"] } });
    agui = await startAguiServer(adapterSettings(a2a, "pipeline-token"));
  });
  after(async () => {
    await agui?.close();
    await a2a?.close();
    await removeTempDirs();
  });
  beforeEach(() => {
    workspace = path.join(a2a.dir, `ws-${++n}`);
    mkdirSync(workspace, { recursive: true });
  });

  const props = (extra: Record<string, unknown> = {}) => ({
    iacCode: {
      schemaVersion: 1,
      rosInvocationId: `inv-${n}`,
      cwd: workspace,
      runMode: "pipeline",
      pipelineName: "selling",
      ...extra,
    },
  });

  /** Runs the thread to its end, answering every interrupt; returns each run's events. */
  async function runToEnd(
    agent: HttpAgent,
    extra: Record<string, unknown>,
    choice: string,
  ): Promise<WireEvent[][]> {
    const runs: WireEvent[][] = [];
    let resume: ReturnType<typeof resumeFor>[] | undefined;
    for (let i = 1; i <= 12; i++) {
      const { events, warnings } = await agentRun(agent, {
        runId: `run-${n}-${i}`,
        forwardedProps: props(extra),
        ...(resume ? { resume } : {}),
      });
      expect(warnings).to.deep.equal([]);
      runs.push(events);
      const outcome = outcomeOf(events);
      if (outcome.type === "success") return runs;
      resume = outcome.interrupts!.map((it) => resumeFor(it, choice));
    }
    throw new Error("the pipeline did not end");
  }

  it("runs the whole pipeline over several runs, each ending in an interrupt until pipeline_completed", async () => {
    const agent = new HttpAgent({
      url: agui.url,
      threadId: `thread-${n}`,
      initialMessages: [{ id: "u1", role: "user", content: "Deploy a small web app" }],
    });
    const runs = await runToEnd(agent, {}, "1");
    const interrupts = runs.slice(0, -1).map((events) => outcomeOf(events).interrupts!);
    const kinds = interrupts.map((list) =>
      list.map((it) => (it.metadata as { kind: string }).kind).join(","),
    );
    // Two template writes (one candidate after the other), the selection, the deployment.
    expect(kinds).to.deep.equal(["permission", "permission", "candidate_selection", "permission"]);
    const selection = interrupts[2][0];
    expect(selection.reason).to.equal("input_required");
    expect(selection.responseSchema).to.deep.equal({
      oneOf: [
        {
          type: "object",
          properties: { selectedId: { type: "string", const: "0", title: "Basic" } },
          required: ["selectedId"],
          additionalProperties: false,
        },
        {
          type: "object",
          properties: { selectedId: { type: "string", const: "1", title: "Highly available" } },
          required: ["selectedId"],
          additionalProperties: false,
        },
        {
          type: "object",
          properties: { freeText: { type: "string", minLength: 1 } },
          required: ["freeText"],
          additionalProperties: false,
        },
      ],
    });
    expect(selection.message).to.equal(
      "Which architecture should I deploy?\n- 0: Basic\n- 1: Highly available",
    );

    // Steps: every top-level step and every candidate step appear; candidates have their own names.
    const started = new Set(runs.flatMap((events) => stepNames(events, "STEP_STARTED")));
    for (const name of [
      "intent_parsing",
      "architecture_planning",
      "evaluate_candidates",
      "confirm_and_select",
      "deploying",
      "candidate:candidate-0:template_generating",
      "candidate:candidate-1:cost_estimating",
    ]) {
      expect(started.has(name), name).to.equal(true);
    }
    // A step open at an interrupt is closed in that run and reopened in the next one.
    const [first, second] = runs;
    expect(stepNames(first, "STEP_FINISHED")).to.include("evaluate_candidates");
    expect(stepNames(second, "STEP_STARTED")).to.include("evaluate_candidates");

    // Each resume run starts with the pipeline snapshot.
    for (const events of runs.slice(1)) {
      const activity = events.filter((e) => e.type === "ACTIVITY_SNAPSHOT");
      expect(activity).to.have.length(1);
      expect(activity[0]).to.deep.include({ activityType: "iac-code.pipeline.v1", replace: true });
    }

    // Custom events: allowlisted types only, never the same event twice.
    const all = runs.flatMap(customs);
    const ids = all.map((v) => v.eventId);
    expect(new Set(ids).size).to.equal(ids.length);
    const types = all.map((v) => v.eventType);
    expect(types[0]).to.equal("pipeline_started");
    expect(types).to.include.members([
      "candidate_started",
      "candidate_completed",
      "candidate_selected",
      "stack_progress",
      "stack_current_changed",
      "pipeline_completed",
    ]);
    // None of them, not merely not all of them (not.include.members passes once one is absent).
    const internal = ["step_started", "text_delta", "tool_started", "input_required"];
    expect(types.filter((t) => internal.includes(t))).to.deep.equal([]);
    expect(customs(runs.at(-1)!).at(-1)!.eventType).to.equal("pipeline_completed");
    expect(a2a.ros.callsOf("CreateStack")).to.have.length(1);
    expect(
      runs
        .flat()
        .filter((e) => e.type === "TOOL_CALL_START")
        .map((e) => e.toolCallName),
    ).to.include.members(["write_file", "ros_validate_template", "complete_step", "ros_deploy"]);
  });

  it("rich candidate presentation: the selection's options carry cost items and diagrams", async () => {
    const agent = new HttpAgent({
      url: agui.url,
      threadId: `thread-${n}`,
      initialMessages: [{ id: "u1", role: "user", content: "Deploy a small web app" }],
    });
    const runs = await runToEnd(agent, { candidatePresentation: "rich" }, "0");
    const selection = runs
      .map((events) => outcomeOf(events))
      .flatMap((o) => o.interrupts ?? [])
      .find((it) => (it.metadata as { kind: string }).kind === "candidate_selection")!;
    const options = (selection.metadata as { options: Array<Record<string, unknown>> }).options;
    expect(options[1]).to.deep.include({ id: "1", totalMonthlyCost: 12.5 });
    expect(options[1].costItems).to.deep.equal([
      { name: "VPC", monthlyCost: 0 },
      { name: "VSwitch x2", spec: "two zones", monthlyCost: 12.5 },
    ]);
    expect(options[0].architectureDiagram).to.equal("graph TD\n  vpc[VPC] --> vsw[VSwitch]");
  });

  it("ends early in one run when the request is not about infrastructure", async () => {
    const agent = new HttpAgent({
      url: agui.url,
      threadId: `thread-${n}`,
      initialMessages: [{ id: "u1", role: "user", content: "[CHAT] sort a list?" }],
    });
    const runs = await runToEnd(agent, {}, "0");
    expect(runs).to.have.length(1);
    const done = customs(runs[0]).find((v) => v.eventType === "pipeline_completed")!;
    expect(done.data).to.include({ earlyExit: true });
    expect(stepNames(runs[0], "STEP_STARTED")).to.deep.equal(["intent_parsing"]);
  });

  it("refuses an unknown pipeline name with 400 INVALID_INPUT, never a normal turn", async () => {
    const res = await post(agui.url, {
      threadId: `thread-${n}`,
      runId: "run-unknown",
      state: {},
      messages: [{ id: "m1", role: "user", content: "hello" }],
      tools: [],
      context: [],
      forwardedProps: { iacCode: { ...props().iacCode, pipelineName: "buying" } },
    });
    expect(res.status).to.equal(400);
    expect(res.json).to.deep.equal({
      error: {
        code: "INVALID_INPUT",
        message: "The pipeline named in forwardedProps.iacCode.pipelineName does not exist.",
      },
    });
  });

  it("refuses an unknown pipeline name in normal run mode too", async () => {
    const res = await post(agui.url, {
      threadId: `thread-${n}`,
      runId: "run-unknown-normal",
      state: {},
      messages: [{ id: "m1", role: "user", content: "hello" }],
      tools: [],
      context: [],
      forwardedProps: props({ runMode: "normal", pipelineName: "buying" }),
    });
    expect(res.status).to.equal(400);
    expect(res.json?.error.code).to.equal("INVALID_INPUT");
  });

  it("cleanupOnly runs the pipeline's cleanup, never a model turn", async () => {
    const res = await post(agui.url, {
      threadId: `thread-${n}`,
      runId: "run-cleanup",
      state: {},
      messages: [{ id: "m1", role: "user", content: "clean up" }],
      tools: [],
      context: [],
      forwardedProps: props({ runMode: "normal", cleanupOnly: true }),
    });
    expect(res.status).to.equal(200);
    const types = res.events.map((e) => e.type);
    expect(types[0]).to.equal("RUN_STARTED");
    expect(types.at(-1)).to.equal("RUN_FINISHED");
    expect(types.filter((t) => t.startsWith("TEXT_MESSAGE"))).to.deep.equal([]);
    // The A2A task behind it ended with the cleanup summary.
    const listed = await fetch(a2a.url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "A2A-Version": "1.0",
        Authorization: "Bearer pipeline-token",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "ListTasks",
        params: { status: "TASK_STATE_COMPLETED" },
      }),
    });
    const { result } = (await listed.json()) as {
      result: { tasks: Array<{ history?: Array<{ parts: Array<{ text?: string }> }> }> };
    };
    expect(result.tasks.some((t) => t.history?.[0]?.parts[0]?.text === "clean up")).to.equal(true);
  });
});
