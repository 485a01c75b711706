// The pipeline engine behind the runtime seam: the whole selling pipeline
// driven by the scripted provider against the local ROS endpoint (steps,
// candidates in parallel, selection standard and rich-v1, deployment with
// stack progress, completion and handoff), the early exit, a failing
// candidate left out of the options, guards and nudges, a rollback that
// marks fields stale and deletes the failed stack, cleanupOnly.
import { expect } from "chai";
import { ofType, removeTempDirs, storedRows, turn, type AnswerBody } from "../runtime/helpers.js";
import type { InputRequest, PipelineEnvelope, RuntimeEvent } from "../../src/runtime/seam.js";
import { envelopes, pipelineWorld, storyOf, type PipelineWorld } from "./helpers.js";

const PIPELINE = { runMode: "pipeline" as const };
const TOP_STEPS = [
  "intent_parsing",
  "architecture_planning",
  "evaluate_candidates",
  "confirm_and_select",
  "deploying",
];

/** Allows every permission, picks the candidates of `choices` in turn, answers questions with "web". */
function answers(...choices: string[]) {
  return (request: InputRequest): AnswerBody | undefined => {
    if (request.kind === "permission") return { kind: "permission", decision: "allow_once" };
    if (request.kind === "candidate_selection")
      return { kind: "candidate_selection", selectedId: choices.shift() };
    if (request.kind === "ask_user_question") return { kind: "ask_user_question", selectedId: "web" };
    return undefined;
  };
}

const ofEvent = (list: PipelineEnvelope[], type: string) => list.filter((e) => e.eventType === type);
const data = (e: PipelineEnvelope | undefined): Record<string, unknown> => e?.data ?? {};

describe("pipeline engine: the selling pipeline", function () {
  this.timeout(30_000);
  let world: PipelineWorld;
  beforeEach(async () => {
    world = await pipelineWorld();
  });
  afterEach(async () => {
    await world.close();
    await removeTempDirs();
  });

  it("runs every step, the candidates in parallel, the selection and the deployment, then hands off", async () => {
    const events = await turn(world.session, "Deploy a small web app", {
      overrides: PIPELINE,
      answer: answers("1"),
    });
    expect(ofType(events, "error")).to.deep.equal([]);
    const list = envelopes(events);
    const story = storyOf(list);
    expect(story[0]).to.equal("pipeline_started");
    expect(story.slice(-2)).to.deep.equal(["pipeline_completed", "pipeline_handoff_ready"]);
    expect(ofEvent(list, "step_started").map((e) => e.step?.id)).to.deep.equal(TOP_STEPS);
    expect(list.map((e) => e.sequence)).to.deep.equal(list.map((_e, i) => list[0].sequence + i));
    for (const e of list) {
      expect(e).to.include({
        schemaVersion: "1.0",
        extensionUri: "urn:iac-code:a2a:pipeline-events:v1",
        pipelineName: "selling",
        contextId: "ctx-pipeline",
        pipelineRunId: "ctx-pipeline",
      });
      expect(e.iacCodeSessionId).to.equal(world.session.sessionId);
    }

    // Both candidates run at the same time: their events interleave.
    const candidateEvents = list.filter((e) => e.candidate).map((e) => e.candidate?.id);
    const firstOfOne = candidateEvents.indexOf("candidate-1");
    expect(firstOfOne).to.be.greaterThan(-1);
    expect(candidateEvents.lastIndexOf("candidate-0")).to.be.greaterThan(firstOfOne);
    expect(
      ofEvent(list, "candidate_completed")
        .map((e) => e.candidate?.id)
        .sort(),
    ).to.deep.equal(["candidate-0", "candidate-1"]);
    const artifacts = ofEvent(list, "artifact_created")
      .map((e) => e.artifact?.filename)
      .sort();
    expect(artifacts).to.deep.equal(["candidates/basic/template.yaml", "candidates/ha/template.yaml"]);

    // The selection offers both candidates (standard options: no rich fields).
    const selection = ofType(events, "input_required").find((e) => e.request.kind === "candidate_selection")!;
    expect(selection.request.options.map((o) => [o.id, o.label])).to.deep.equal([
      ["0", "Basic"],
      ["1", "Highly available"],
    ]);
    expect(selection.request.options[1]).to.not.have.property("costItems");
    expect(selection.pipeline?.map((e) => [e.eventType, e.status])).to.deep.equal([
      ["input_required", "input_required"],
    ]);
    expect(data(ofEvent(list, "input_received")[0])).to.include({
      kind: "candidate_selection",
      selectedValue: "1",
      selectedIndex: 1,
    });

    // The deployment created one stack, reported its progress, and concluded with it.
    const [create] = world.ros.callsOf("CreateStack");
    expect(create.params.StackName).to.equal("iac-selling-web");
    expect(create.params.TemplateBody).to.contain("VSwitchB");
    const progress = ofEvent(list, "stack_progress").map((e) => data(e).status);
    expect(progress[0]).to.equal("CREATE_IN_PROGRESS");
    expect(progress.at(-1)).to.equal("CREATE_COMPLETE");
    const stackId = data(ofEvent(list, "stack_progress")[0]).stackId as string;
    expect(data(ofEvent(list, "stack_current_changed")[0])).to.include({
      stackId,
      stackStatus: "CREATE_COMPLETE",
      isSuccess: true,
    });
    const deployed = ofEvent(list, "step_completed").find((e) => e.step?.id === "deploying")!;
    expect(data(deployed).conclusion).to.include({ status: "success", stack_id: stackId });

    const [completed, handoff] = list.slice(-2);
    expect(completed.status).to.equal("completed");
    expect(data(handoff)).to.include({
      action: "switch_to_normal",
      targetMode: "normal",
      outcome: "completed",
    });
    expect(data(handoff)).to.not.have.property("cleanup");

    // The journal holds exactly what was published; the state reduces it.
    const state = await world.runtime.pipelineState!(world.session.sessionId, 0);
    expect(state!.events.map((e) => e.eventId)).to.deep.equal(list.map((e) => e.eventId));
    expect(state!.snapshot).to.include({
      status: "completed",
      lastSequence: list.at(-1)!.sequence,
      outcome: "completed",
    });

    // Back to normal chat: the next message is an ordinary turn, after the handoff summary.
    const next = await turn(world.session, "thanks");
    expect(ofType(next, "pipeline")).to.deep.equal([]);
    expect(ofType(next, "message_end").at(-1)?.text).to.equal("No scripted reply for this request.");
    expect(world.session.pendingInputs()).to.deep.equal([]);
  });

  it("rich-v1 options carry the diagram and the cost step's figures, unchanged", async () => {
    const events = await turn(world.session, "Deploy a small web app", {
      overrides: { ...PIPELINE, candidatePresentation: "rich-v1" },
      answer: answers("0"),
    });
    const selection = ofType(events, "input_required").find((e) => e.request.kind === "candidate_selection")!;
    const [basic, ha] = selection.request.options;
    expect(basic).to.include({
      id: "0",
      architectureDiagram: "graph TD\n  vpc[VPC] --> vsw[VSwitch]",
      totalMonthlyCost: 0,
      currency: "CNY",
    });
    expect(ha.totalMonthlyCost).to.equal(12.5);
    expect(ha.costItems).to.deep.equal([
      { name: "VPC", monthlyCost: 0 },
      { name: "VSwitch x2", spec: "two zones", monthlyCost: 12.5 },
    ]);
    expect(ha.architectureDiagram).to.match(/^graph TD\n/);
    expect(storyOf(envelopes(events)).at(-2)).to.equal("pipeline_completed");
  });

  it("ends early, as normal chat, when the request is not about infrastructure", async () => {
    const events = await turn(world.session, "[CHAT] how do I sort a list in Python?", {
      overrides: PIPELINE,
    });
    const list = envelopes(events);
    expect(storyOf(list)).to.deep.equal([
      "pipeline_started",
      "step_started",
      "tool_started",
      "tool_result",
      "step_completed",
      "pipeline_completed",
      "pipeline_handoff_ready",
    ]);
    expect(data(list.at(-2))).to.include({ earlyExit: true, totalSteps: 5 });
    expect(list.at(-2)!.status).to.equal("completed");
    expect(world.ros.calls).to.deep.equal([]);
  });

  it("a second run on the same context starts afresh (its own transcripts), numbering on", async () => {
    const first = envelopes(
      await turn(world.session, "[CHAT] how do I sort a list?", { overrides: PIPELINE }),
    );
    const events = await turn(world.session, "Deploy a small web app", {
      overrides: PIPELINE,
      answer: answers("0"),
    });
    const list = envelopes(events);
    expect(list[0]).to.include({ eventType: "pipeline_started", sequence: first.at(-1)!.sequence + 1 });
    expect(ofEvent(list, "step_started").map((e) => e.step?.id)).to.deep.equal(TOP_STEPS);
    expect(data(ofEvent(list, "step_started")[0]).activeAttemptId).to.equal("r2.intent_parsing-1");
    const state = await world.runtime.pipelineState!(world.session.sessionId, 0);
    expect(state!.snapshot).to.include({
      runNumber: 2,
      status: "completed",
      firstSequence: list[0].sequence,
    });
    expect(state!.events[0].eventId).to.equal(list[0].eventId);
  });

  it("leaves a candidate that fails its evaluation out of the options (after nudging it twice)", async () => {
    world.ros.validateTemplate = (body) =>
      body.includes("(ha)") ? "The resource VSwitchB is not valid here." : undefined;
    const events = await turn(world.session, "Deploy a small web app", {
      overrides: PIPELINE,
      answer: answers("0"),
    });
    const list = envelopes(events);
    const failed = ofEvent(list, "candidate_failed");
    expect(failed.map((e) => e.candidate?.id)).to.deep.equal(["candidate-1"]);
    expect(data(ofEvent(list, "candidate_step_failed")[0]).errorDetails).to.deep.equal({
      type: "no_conclusion",
    });
    const selection = ofType(events, "input_required").find((e) => e.request.kind === "candidate_selection")!;
    expect(selection.request.options.map((o) => o.id)).to.deep.equal(["0"]);
    const evaluated = data(ofEvent(list, "step_completed").find((e) => e.step?.id === "evaluate_candidates"))
      .conclusion as Array<{ failed: boolean }>;
    expect(evaluated.map((c) => c.failed)).to.deep.equal([false, true]);
    const transcript = storedRows(
      world.configDir,
      world.session.sessionId,
      "conversation",
      "transcript/r1.candidate-1.template_generating-1",
    ).join("\n");
    expect(transcript.match(/You have not called complete_step/g)).to.have.length(2);
    expect(storyOf(list).at(-2)).to.equal("pipeline_completed");
  });

  it("makes complete_step follow the guards: a vague intent must ask the user first", async () => {
    const events = await turn(world.session, "[GUARD] deploy my app", {
      overrides: PIPELINE,
      answer: answers("0"),
    });
    const list = envelopes(events);
    const refused = ofEvent(list, "tool_result").find(
      (e) => data(e).toolName === "complete_step" && data(e).isError === true,
    );
    expect(String(data(refused).result)).to.contain("ask the user what to build");
    expect(ofType(events, "input_required").map((e) => e.request.kind)).to.include("ask_user_question");
    const intent = ofEvent(list, "step_completed").find((e) => e.step?.id === "intent_parsing");
    expect(data(intent).conclusion).to.include({ clarity: "clear" });
  });

  it("rolls back from a failed deployment: stale fields, the failed stack deleted, a new selection", async () => {
    world.ros.timeline = ["CREATE_IN_PROGRESS", "CREATE_FAILED"];
    const onEvent = (event: RuntimeEvent) => {
      if (event.type === "pipeline" && event.envelopes.some((e) => e.eventType === "rollback_completed")) {
        world.ros.timeline = ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"];
      }
    };
    const events = await turn(world.session, "[ROLLBACK] deploy a small web app", {
      overrides: PIPELINE,
      answer: answers("0", "1"),
      onEvent,
    });
    const list = envelopes(events);
    const rollback = ofEvent(list, "rollback_completed")[0];
    expect(data(rollback)).to.deep.include({
      fromStep: "deploying",
      toStep: "confirm_and_select",
      staleFields: ["selected_plan"],
    });
    const [failedStack, goodStack] = ofEvent(list, "stack_current_changed").map(
      (e) => data(e).stackId as string,
    );
    expect(failedStack).to.be.a("string").and.not.equal(goodStack);
    expect(world.ros.callsOf("DeleteStack").map((c) => c.params.StackId)).to.deep.equal([failedStack]);
    expect(ofEvent(list, "cleanup_completed").map((e) => data(e).resourceId)).to.deep.equal([failedStack]);
    const selections = ofType(events, "input_required").filter(
      (e) => e.request.kind === "candidate_selection",
    );
    expect(selections).to.have.length(2);
    expect(selections[0].request.inputId).to.not.equal(selections[1].request.inputId);
    const deploying = ofEvent(list, "step_started")
      .filter((e) => e.step?.id === "deploying")
      .map((e) => e.step?.attempt);
    expect(deploying).to.deep.equal([1, 2]);
    expect(data(ofEvent(list, "step_completed").at(-1)).conclusion).to.include({
      status: "success",
      stack_id: goodStack,
    });
    const state = await world.runtime.pipelineState!(world.session.sessionId);
    expect(state!.snapshot.staleFields).to.deep.equal(["selected_plan"]);
  });

  it("ends failed when the deployment fails, and a cleanupOnly request deletes exactly its stack", async () => {
    world.ros.timeline = ["CREATE_IN_PROGRESS", "CREATE_FAILED"];
    const events = await turn(world.session, "[FAIL-DEPLOY] deploy a small web app", {
      overrides: PIPELINE,
      answer: answers("0"),
    });
    const list = envelopes(events);
    const stackId = data(ofEvent(list, "stack_current_changed")[0]).stackId as string;
    expect(storyOf(list).slice(-3)).to.deep.equal([
      "step_failed",
      "pipeline_completed",
      "pipeline_handoff_ready",
    ]);
    expect(list.at(-2)!.status).to.equal("failed");
    const handoff = data(list.at(-1));
    expect(handoff).to.include({ outcome: "failed" });
    expect(handoff.cleanup).to.deep.include({ status: "pending", resourceCount: 1 });
    expect(world.ros.callsOf("DeleteStack")).to.deep.equal([]);

    const cleanup = await turn(world.session, "clean up", { overrides: { cleanupOnly: true } });
    const cleaned = envelopes(cleanup);
    expect(storyOf(cleaned)).to.include.members(["cleanup_started", "cleanup_completed"]);
    expect(world.ros.callsOf("DeleteStack").map((c) => c.params.StackId)).to.deep.equal([stackId]);
    const summary = ofType(cleanup, "pipeline").at(-1)!.cleanupOnly;
    expect(summary).to.deep.include({ requested: true, status: "completed", resourceCount: 1 });
    expect(cleaned[0].sequence).to.equal(list.at(-1)!.sequence + 1);

    const again = await turn(world.session, "clean up", { overrides: { cleanupOnly: true } });
    expect(ofType(again, "pipeline").at(-1)!.cleanupOnly).to.deep.include({
      status: "completed",
      resourceCount: 0,
    });
    expect(world.ros.callsOf("DeleteStack")).to.have.length(1);
  });
});
