// A pipeline that fails reaches every client whole: the deployment fails
// ([FAIL-DEPLOY], the ROS fixture's stack ends CREATE_FAILED), the run journals
// step_failed and then pipeline_completed(failed). Over each A2A binding's
// streaming call (JSON-RPC, HTTP+JSON, gRPC, through @a2a-js/sdk) every
// journal envelope arrives exactly once, step_failed with its reason; over
// AG-UI the failed step is finished and shown (STEP_FINISHED and a CUSTOM
// step_failed) before the run ends A2A_EXECUTION_FAILED.
import { expect } from "chai";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { TaskState, type SendMessageRequest, type StreamResponse } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { HttpAgent, type Interrupt } from "@ag-ui/client";
import type { PipelineEnvelope } from "../../src/runtime/seam.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { BINDINGS, sdkClient } from "../a2a-bindings/fixtures/server.js";
import { agentRun } from "../agui/harness.js";
import type { WireEvent } from "../agui/helpers.js";
import { adapterSettings } from "../e2e/helpers.js";
import { envelopesOf, iacOf, request, stateOf, type Meta } from "./sdk-stream.js";
import { removeTempDirs } from "../runtime/helpers.js";
import { startPipelineA2a, type PipelineA2a } from "./helpers.js";

/** A streaming call until the turn ends or waits. */
async function stream(client: Client, req: SendMessageRequest): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of client.sendMessageStream(req)) {
    events.push(event);
    const state = stateOf(event);
    if (state !== undefined && state !== TaskState.TASK_STATE_WORKING) break;
  }
  return events;
}

async function journal(a2a: PipelineA2a, taskId: string): Promise<PipelineEnvelope[]> {
  const res = await fetch(new URL(`iac-code/pipeline/state?taskId=${taskId}&afterSequence=0`, a2a.url));
  expect(res.status).to.equal(200);
  return ((await res.json()) as { events: PipelineEnvelope[] }).events;
}

describe("a failed pipeline reaches every client whole", function () {
  this.timeout(90_000);
  let a2a: PipelineA2a;
  let agui: AguiServer;
  let n = 0;
  const workspace = () => {
    const dir = path.join(a2a.dir, `ws-${++n}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  };

  before(async () => {
    a2a = await startPipelineA2a({
      file: { "auto-approve-permissions": true, "thinking-exposure": ["raw-thinking"] },
    });
    a2a.ros.timeline = ["CREATE_IN_PROGRESS", "CREATE_FAILED"];
    agui = await startAguiServer(adapterSettings(a2a));
  });
  after(async () => {
    await agui?.close();
    await a2a?.close();
    await removeTempDirs();
  });

  for (const binding of BINDINGS) {
    it(`${binding}: every journal envelope once, step_failed with its reason, then FAILED`, async () => {
      const client = await sdkClient(a2a.url, binding);
      const meta = { metadata: { iac_code: { cwd: workspace(), runMode: "pipeline" } } };
      const first = await stream(client, request([{ text: "[FAIL-DEPLOY] deploy a small web app" }], meta));
      const task = first[0].payload?.$case === "task" ? first[0].payload.value : undefined;
      expect(stateOf(first.at(-1)!)).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
      const input = iacOf(first.at(-1)!).input as Meta;
      const answer = {
        mediaType: "application/json",
        data: {
          schemaVersion: 1,
          kind: "candidate_selection",
          requestTaskId: task!.id,
          inputId: input.inputId,
          toolUseId: input.toolUseId,
          selectedId: "0",
        },
      };
      const rest = await stream(client, request([answer], { taskId: task!.id, contextId: task!.contextId }));
      const last = rest.at(-1)!;
      expect(stateOf(last)).to.equal(TaskState.TASK_STATE_FAILED);

      const received = [...first, ...rest].flatMap(envelopesOf);
      const ids = received.map((e) => e.eventId);
      expect(new Set(ids).size, "no envelope twice").to.equal(ids.length);
      expect(ids).to.deep.equal((await journal(a2a, task!.id)).map((e) => e.eventId));
      const types = envelopesOf(last).map((e) => e.eventType);
      expect(types).to.deep.equal(["step_failed", "pipeline_completed", "pipeline_handoff_ready"]);
      const failed = envelopesOf(last)[0];
      expect(failed).to.deep.include({ status: "failed", scope: "step" });
      expect(failed.data).to.deep.include({ error: "The stack could not be created." });
    });
  }

  it("AG-UI: the failed step is finished and shown once, then the run ends A2A_EXECUTION_FAILED", async () => {
    const props = {
      iacCode: { schemaVersion: 1, rosInvocationId: "inv-fail", cwd: workspace(), runMode: "pipeline" },
    };
    const agent = new HttpAgent({
      url: agui.url,
      threadId: "thread-fail",
      initialMessages: [{ id: "u1", role: "user", content: "[FAIL-DEPLOY] deploy a small web app" }],
    });
    const runs: WireEvent[][] = [];
    let resume: Array<{ interruptId: string; status: "resolved"; payload: unknown }> | undefined;
    for (let i = 1; i <= 6; i++) {
      const run = await agentRun(agent, {
        runId: `run-${i}`,
        forwardedProps: props,
        ...(resume ? { resume } : {}),
      });
      runs.push(run.events);
      const end = run.events.at(-1)!;
      if (end.type !== "RUN_FINISHED") break;
      const [interrupt] = (end.outcome as { interrupts: Interrupt[] }).interrupts;
      resume = [{ interruptId: interrupt.id, status: "resolved", payload: { selectedId: "0" } }];
    }
    const last = runs.at(-1)!;
    expect(last.at(-1)).to.deep.include({ type: "RUN_ERROR", code: "A2A_EXECUTION_FAILED" });
    const customs = runs
      .flat()
      .filter((e) => e.type === "CUSTOM" && e.name === "iac-code.pipeline.v1")
      .map((e) => e.value as PipelineEnvelope);
    const failed = customs.filter((c) => c.eventType === "step_failed");
    expect(failed).to.have.length(1);
    expect(failed[0].data).to.deep.include({ error: "The stack could not be created." });
    expect(customs.filter((c) => c.eventType === "pipeline_completed")).to.have.length(1);
    const finished = last.filter((e) => e.type === "STEP_FINISHED").map((e) => e.stepName);
    expect(finished).to.include("deploying");
    // The failed step is shown before the run's end, and the step is finished before its CUSTOM.
    const order = last.map((e) =>
      e.type === "CUSTOM"
        ? (e.value as PipelineEnvelope).eventType
        : e.type === "STEP_FINISHED"
          ? `finish:${String(e.stepName)}`
          : e.type,
    );
    expect(order.indexOf("finish:deploying")).to.be.below(order.indexOf("step_failed"));
    expect(order.indexOf("step_failed")).to.be.below(order.indexOf("RUN_ERROR"));
  });
});
