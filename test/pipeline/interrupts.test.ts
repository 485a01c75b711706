// Messages that arrive while a pipeline runs (AgentSession.interject): the
// judge's supplement reaches the running candidates, a hard interrupt rolls
// back to the step it names, an ignored message changes nothing, a judge
// failure on deploying pauses the run until the user says continue, and a
// message while the run waits for the selection is the choice. Over A2A, a
// message to the running task is taken the same way.
import { expect } from "chai";
import { SendMessageRequest, TaskState, type StreamResponse } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import type { InputRequest, PipelineEnvelope, RuntimeEvent } from "../../src/runtime/seam.js";
import { drive, ofType, removeTempDirs, storedRows } from "../runtime/helpers.js";
import { envelopes, pipelineWorld, startPipelineA2a, type PipelineWorld } from "./helpers.js";

const ofEvent = (list: PipelineEnvelope[], type: string) => list.filter((e) => e.eventType === type);

/**
 * Runs a pipeline turn. On the first input `trigger` picks, the message is
 * interjected, and that input is answered only once the judge's verdict is
 * out; every other input at once (permissions allowed, candidate 0, pause
 * continued). A selection the message answered is not answered again.
 */
async function runWith(
  world: PipelineWorld,
  text: string,
  trigger: (request: InputRequest) => boolean,
  message: string,
): Promise<{ events: RuntimeEvent[]; taken: boolean }> {
  const { session } = world;
  const waiting: InputRequest[] = [];
  const seen: RuntimeEvent[] = [];
  let taken = false;
  let triggered: InputRequest | undefined;
  const classified = () =>
    ofType(seen, "pipeline").some((e) => e.envelopes.some((v) => v.eventType === "interrupt_classified"));
  const answerAll = (): void => {
    for (const request of [...waiting]) {
      if (request === triggered && (request.kind === "candidate_selection" || !classified())) continue;
      waiting.splice(waiting.indexOf(request), 1);
      if (request.kind === "permission")
        session.answerInput({ kind: "permission", inputId: request.inputId, decision: "allow_once" });
      else
        session.answerInput({
          kind: request.kind,
          inputId: request.inputId,
          selectedId: request.kind === "pipeline_pause_confirmation" ? "continue" : "0",
        });
    }
  };
  const events = await drive(
    session.runTurn({ text, images: [], overrides: { runMode: "pipeline" } }, new AbortController().signal),
    session,
    {
      onEvent: (event) => {
        seen.push(event);
        if (event.type === "input_required") {
          waiting.push(event.request);
          if (!triggered && trigger(event.request)) {
            triggered = event.request;
            taken = session.interject!({ text: message, images: [], overrides: {} });
          }
        }
        setImmediate(answerAll);
      },
    },
  );
  return { events, taken };
}

describe("pipeline engine: messages while the run goes on", function () {
  this.timeout(30_000);
  let world: PipelineWorld;
  beforeEach(async () => {
    world = await pipelineWorld();
  });
  afterEach(async () => {
    await world.close();
    await removeTempDirs();
  });

  it("a supplement reaches the running candidates before their next model call", async () => {
    const { events, taken } = await runWith(
      world,
      "Deploy a small web app",
      () => true,
      "[SUPPLEMENT] use two zones",
    );
    expect(taken).to.equal(true);
    const list = envelopes(events);
    expect(ofEvent(list, "interrupt_received")[0].data).to.deep.equal({ messageLength: 26 });
    expect(ofEvent(list, "interrupt_classified")[0].data).to.include({
      action: "supplement",
      candidateScope: "all",
      paused: false,
      judgeFailed: false,
    });
    for (const candidate of ["candidate-0", "candidate-1"]) {
      const part = `transcript/r1.${candidate}.template_generating-1`;
      const transcript = storedRows(world.configDir, world.session.sessionId, "conversation", part).join(
        "\n",
      );
      expect(transcript, candidate).to.contain("[SUPPLEMENT] use two zones");
    }
    expect(list.at(-2)!.eventType).to.equal("pipeline_completed");
  });

  it("a hard interrupt rolls back to the step the judge names and runs it again", async () => {
    const { events } = await runWith(
      world,
      "Deploy a small web app",
      () => true,
      "[RESTART] make it cheaper",
    );
    const list = envelopes(events);
    expect(ofEvent(list, "interrupt_classified")[0].data).to.include({
      action: "hard_interrupt",
      targetStepId: "architecture_planning",
    });
    const rollback = ofEvent(list, "rollback_completed")[0];
    expect(rollback.data).to.deep.include({
      fromStep: "evaluate_candidates",
      toStep: "architecture_planning",
      toStepId: "architecture_planning",
      rollbackScope: "parent",
      staleFields: ["architecture"],
    });
    const planning = ofEvent(list, "step_started")
      .filter((e) => e.step?.id === "architecture_planning")
      .map((e) => e.step?.attempt);
    expect(planning).to.deep.equal([1, 2]);
    const state = await world.runtime.pipelineState!(world.session.sessionId);
    expect(state!.snapshot).to.include({ status: "completed" });
  });

  it("an ignored message changes nothing", async () => {
    const { events } = await runWith(
      world,
      "Deploy a small web app",
      () => true,
      "[IGNORE] skip the permissions",
    );
    const list = envelopes(events);
    expect(ofEvent(list, "interrupt_classified")[0].data).to.include({ action: "ignored" });
    expect(ofEvent(list, "rollback_completed")).to.deep.equal([]);
    expect(list.at(-2)!.eventType).to.equal("pipeline_completed");
  });

  it("when the judge fails on deploying, the run pauses until the user says continue", async () => {
    const { events } = await runWith(
      world,
      "Deploy a small web app",
      (r) => r.kind === "permission" && r.toolName === "ros_deploy",
      "hmm?",
    );
    const list = envelopes(events);
    expect(ofEvent(list, "interrupt_classified")[0].data).to.include({
      action: "continue",
      paused: true,
      judgeFailed: true,
    });
    const pause = ofType(events, "input_required").find(
      (e) => e.request.kind === "pipeline_pause_confirmation",
    )!;
    expect(pause.request.options.map((o) => o.id)).to.deep.equal(["continue"]);
    const label = (v: unknown) => (typeof v === "string" ? v : "");
    const types = list.map((e) => `${e.eventType}:${label(e.data.toolName) || label(e.data.kind)}`);
    const resumed = types.indexOf("input_received:pipeline_pause_confirmation");
    expect(resumed).to.be.greaterThan(types.indexOf("input_required:pipeline_pause_confirmation"));
    // deploying's model only went on (complete_step) after the pause was answered.
    expect(
      types.indexOf("tool_started:complete_step", types.indexOf("tool_result:ros_deploy")),
    ).to.be.greaterThan(resumed);
    expect(list.at(-2)!.eventType).to.equal("pipeline_completed");
  });

  it("a judge failure elsewhere (policy continue) lets the run go on", async () => {
    const { events } = await runWith(world, "Deploy a small web app", () => true, "hmm?");
    const list = envelopes(events);
    expect(ofEvent(list, "interrupt_classified")[0].data).to.include({
      action: "continue",
      paused: false,
      judgeFailed: true,
    });
    expect(ofType(events, "input_required").map((e) => e.request.kind)).to.not.include(
      "pipeline_pause_confirmation",
    );
  });

  it("a message while the run waits for the selection is the choice", async () => {
    const { events, taken } = await runWith(
      world,
      "Deploy a small web app",
      (r) => r.kind === "candidate_selection",
      "2",
    );
    expect(taken).to.equal(true);
    const received = ofType(events, "input_received").find((e) => e.kind === "candidate_selection")!;
    expect(received.pipeline![0].data).to.include({ selectedValue: "1" });
  });
});

describe("pipeline over A2A: a message to the running task", function () {
  this.timeout(30_000);
  after(removeTempDirs);

  it("is the choice while the run waits for the selection", async () => {
    const a2a = await startPipelineA2a({ file: { "auto-approve-permissions": true } });
    try {
      const client = await new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new JsonRpcTransportFactory()],
        }),
      ).createFromUrl(a2a.url);
      const send = (parts: unknown[], extra: Record<string, unknown>) =>
        client.sendMessageStream(
          SendMessageRequest.fromJSON({
            message: { messageId: `m-${Math.random()}`, role: "ROLE_USER", parts, ...extra },
          }),
        );
      const stateOf = (e: StreamResponse) =>
        e.payload?.$case === "statusUpdate" ? e.payload.value.status?.state : undefined;
      let taskId = "";
      for await (const event of send([{ text: "Deploy a small web app" }], {
        metadata: { iac_code: { cwd: a2a.workspace, runMode: "pipeline" } },
      })) {
        if (event.payload?.$case === "task") taskId = event.payload.value.id;
        if (stateOf(event) === TaskState.TASK_STATE_INPUT_REQUIRED) break;
      }
      const states: Array<TaskState | undefined> = [];
      for await (const event of send([{ text: "Highly available" }], { taskId })) {
        states.push(stateOf(event));
        if (stateOf(event) === TaskState.TASK_STATE_COMPLETED) break;
      }
      expect(states.at(-1)).to.equal(TaskState.TASK_STATE_COMPLETED);
      expect(a2a.ros.callsOf("CreateStack")[0].params.TemplateBody).to.contain("VSwitchB");
    } finally {
      await a2a.close();
    }
  });
});
