/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- tests read the envelopes' free-form data through `any` */
// The deploying step's two waits, in demo mode through the real runtime: the
// VPC selector (cloud_resource_selection: an option, a typed id, none, none
// because none was offered, and values its profile refuses) and the
// deployment confirmation (confirm, adjust with overrides, overrides naming
// no parameter refused, reselect, cancel), also answered by a plain message,
// and the selector answered after a restart of the runtime.
import { expect } from "chai";
import { InvalidInputAnswerError } from "../../src/runtime/errors.js";
import type { InputRequest, PipelineEnvelope } from "../../src/runtime/seam.js";
import { removeTempDirs, type AnswerBody } from "../runtime/helpers.js";
import { answering, demoWorld, happyAnswers, play, type DemoWorld, type PlayedTurn } from "./demo-world.js";
import { storyOf } from "./helpers.js";

const of = (list: readonly PipelineEnvelope[], type: string) => list.filter((e) => e.eventType === type);
const data = (e: PipelineEnvelope) => e.data as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- published JSON
const inputsOf = (played: PlayedTurn, kind: InputRequest["kind"]) =>
  played.inputs.filter((i) => i.kind === kind);
const resultOf = (played: PlayedTurn, tool: string) =>
  of(played.list, "tool_result")
    .filter((e) => data(e).toolName === tool)
    .map((e) => data(e));

/** Answers each input of a kind from a list, in turn (the last one again when the list is used up). */
function answersFor(kind: InputRequest["kind"], list: AnswerBody[]) {
  let n = 0;
  return answering((request) => (request.kind === kind ? list[Math.min(n++, list.length - 1)] : undefined));
}

describe("pipeline: the VPC selector and the deployment confirmation (demo mode)", function () {
  this.timeout(60_000);
  let w: DemoWorld;
  beforeEach(async () => {
    w = await demoWorld();
  });
  afterEach(async () => {
    await w.close();
    await removeTempDirs();
  });

  describe("cloud_resource_selection", () => {
    it("an offered VPC: the tool result names it and the stack goes into it", async () => {
      const played = await play(
        w.session,
        "I need a website",
        answersFor("cloud_resource_selection", [
          { kind: "cloud_resource_selection", value: "vpc-sim1demo0002", label: "staging-vpc (10.0.0.0/16)" },
        ]),
      );
      const [result] = resultOf(played, "select_cloud_resource");
      expect(result.isError).to.equal(false);
      expect(result.result).to.deep.equal({
        status: "selected",
        selectorId: "vpc.vpc",
        parameter: "VpcId",
        value: "vpc-sim1demo0002",
        label: "staging-vpc (10.0.0.0/16)",
        source: {
          provider: "aliyun",
          product: "vpc",
          action: "DescribeVpcs",
          regionId: "cn-hangzhou",
          simulated: true,
        },
      });
      const received = of(played.list, "input_received").find(
        (e) => data(e).kind === "cloud_resource_selection",
      )!;
      expect(data(received)).to.include({ decision: "selected" });
      const [confirmation] = inputsOf(played, "deployment_confirmation");
      expect(confirmation.displayParameters).to.deep.include({ name: "VpcId", value: "vpc-sim1demo0002" });
      expect(resultOf(played, "ros_deploy")[0].result.parameters).to.deep.equal({
        VpcId: "vpc-sim1demo0002",
      });
    });

    it("a VPC id typed by hand is taken when the profile accepts it; values it refuses leave the wait open", async () => {
      const played = await play(
        w.session,
        "I need a website",
        answersFor("cloud_resource_selection", [
          { kind: "cloud_resource_selection", value: "sg-bp1notavpc" },
          { kind: "cloud_resource_selection", selectedId: "vpc-nosuchoption" },
          { kind: "cloud_resource_selection", freeText: "  " },
          { kind: "cloud_resource_selection", freeText: "vpc-typed0by0hand" },
        ]),
      );
      expect(played.refused.map((e) => e.constructor)).to.deep.equal([
        InvalidInputAnswerError,
        InvalidInputAnswerError,
        InvalidInputAnswerError,
      ]);
      const inputId = inputsOf(played, "cloud_resource_selection")[0].inputId;
      expect(played.refused.map((e) => e.message)).to.deep.equal([
        'value: "sg-bp1notavpc" is not a VPC id: a VPC id is "vpc-" followed by 6 to 40 lower-case letters and digits.',
        `selectedId: vpc-nosuchoption is not one of the options of input ${inputId}.`,
        `Input ${inputId} needs value (the chosen resource's id), or cancelled to choose none.`,
      ]);
      // Asked once: the refused answers did not end the wait.
      expect(inputsOf(played, "cloud_resource_selection")).to.have.length(1);
      const [result] = resultOf(played, "select_cloud_resource");
      expect(result.result).to.include({
        status: "selected",
        value: "vpc-typed0by0hand",
        label: "vpc-typed0by0hand",
      });
      expect(resultOf(played, "ros_deploy")[0].result.parameters).to.deep.equal({
        VpcId: "vpc-typed0by0hand",
      });
    });

    it("none chosen: the tool result says so and the template creates a new VPC", async () => {
      const played = await play(
        w.session,
        "I need a website",
        answersFor("cloud_resource_selection", [{ kind: "cloud_resource_selection", cancelled: true }]),
      );
      const [result] = resultOf(played, "select_cloud_resource");
      expect(result.result).to.deep.equal({ status: "canceled", selectorId: "vpc.vpc", parameter: "VpcId" });
      const received = of(played.list, "input_received").find(
        (e) => data(e).kind === "cloud_resource_selection",
      )!;
      expect(data(received)).to.include({ decision: "cancelled" });
      const text = of(played.list, "tool_result").find((e) => data(e).toolName === "select_cloud_resource")!;
      expect(data(text).result).to.not.have.property("value");
      const [confirmation] = inputsOf(played, "deployment_confirmation");
      expect(confirmation.displayParameters).to.deep.include({ name: "VpcId", value: "" });
      const deployed = resultOf(played, "ros_deploy")[0].result;
      expect(deployed.resources.map((r: { logicalId: string }) => r.logicalId)).to.include("Vpc");
      expect(played.list.at(-2)).to.include({ eventType: "pipeline_completed", status: "completed" });
    });

    it("none because none was offered (optionsEmpty): said in the tool result", async () => {
      const played = await play(
        w.session,
        "I need a website",
        answersFor("cloud_resource_selection", [
          { kind: "cloud_resource_selection", cancelled: true, optionsEmpty: true },
        ]),
      );
      const [result] = resultOf(played, "select_cloud_resource");
      expect(result.result).to.deep.equal({
        status: "canceled",
        selectorId: "vpc.vpc",
        parameter: "VpcId",
        optionsEmpty: true,
      });
      expect(played.list.at(-2)).to.include({ eventType: "pipeline_completed", status: "completed" });
    });

    it("a plain message with an offered VPC's id answers it", async () => {
      let taken: boolean | undefined;
      const played = await play(
        w.session,
        "I need a website",
        (request, seen) =>
          request.kind === "cloud_resource_selection" ? undefined : happyAnswers(request, seen),
        {
          onEvent: (event) => {
            if (event.type === "input_required" && event.request.kind === "cloud_resource_selection")
              setImmediate(
                () => (taken = w.session.interject!({ text: "vpc-sim1demo0002", images: [], overrides: {} })),
              );
          },
        },
      );
      expect(taken).to.equal(true);
      expect(resultOf(played, "select_cloud_resource")[0].result).to.include({
        value: "vpc-sim1demo0002",
        label: "staging-vpc (10.0.0.0/16)",
      });
    });
  });

  describe("deployment_confirmation", () => {
    it("confirm: the input is received as confirm, then ros_deploy's permission is asked and the stack created", async () => {
      const played = await play(w.session, "I need a website");
      const received = of(played.list, "input_received").find(
        (e) => data(e).kind === "deployment_confirmation",
      )!;
      expect(data(received)).to.include({ decision: "confirm" });
      const kinds = played.inputs.map((i) => `${i.kind}:${i.toolName}`);
      expect(kinds.indexOf("permission:ros_deploy")).to.equal(
        kinds.indexOf("deployment_confirmation:confirm_deployment") + 1,
      );
      expect(resultOf(played, "confirm_deployment")[0].result).to.deep.include({
        decision: "confirm",
        stackName: "iac-demo-web",
        templatePath: "demo-pipeline/pair/template.yaml",
        parameters: { ZoneId: "cn-hangzhou-h", VpcId: "vpc-sim1demo0001" },
      });
      expect(resultOf(played, "ros_deploy")).to.have.length(1);
    });

    it("adjust with parameter overrides asks again (a new input) with the new values, and deploys them", async () => {
      const played = await play(
        w.session,
        "I need a website",
        answersFor("deployment_confirmation", [
          {
            kind: "deployment_confirmation",
            action: "adjust",
            parameterOverrides: { ZoneId: "cn-hangzhou-i" },
          },
          { kind: "deployment_confirmation", selectedId: "confirm" },
        ]),
      );
      const [firstAsk, secondAsk] = inputsOf(played, "deployment_confirmation");
      expect(secondAsk.inputId).to.equal(firstAsk.inputId.replace(/-1$/, "-2"));
      expect(secondAsk.displayParameters).to.deep.equal([
        { name: "ZoneId", value: "cn-hangzhou-i" },
        { name: "VpcId", value: "vpc-sim1demo0001" },
      ]);
      expect(secondAsk.prompt).to.match(/^Changed: ZoneId\.\n\nCreate the stack iac-demo-web/);
      expect(
        of(played.list, "input_received")
          .filter((e) => data(e).kind === "deployment_confirmation")
          .map((e) => data(e).decision),
      ).to.deep.equal(["adjust", "confirm"]);
      expect(resultOf(played, "ros_deploy")[0].result.parameters).to.deep.equal({
        VpcId: "vpc-sim1demo0001",
        ZoneId: "cn-hangzhou-i",
      });
    });

    it("overrides naming no parameter, an adjust without overrides and an action not offered are refused; the wait stays open", async () => {
      const played = await play(
        w.session,
        "I need a website",
        answersFor("deployment_confirmation", [
          {
            kind: "deployment_confirmation",
            action: "adjust",
            parameterOverrides: { Zone: "cn-hangzhou-i" },
          },
          { kind: "deployment_confirmation", action: "adjust" },
          { kind: "deployment_confirmation", freeText: "maybe" },
          { kind: "deployment_confirmation", action: "confirm" },
        ]),
      );
      const inputId = inputsOf(played, "deployment_confirmation")[0].inputId;
      expect(played.refused.map((e) => e.message)).to.deep.equal([
        "parameterOverrides.Zone: the template has no parameter Zone (its parameters: ZoneId, VpcId).",
        "action adjust needs parameterOverrides naming at least one parameter to change.",
        `Input ${inputId} needs action (one of confirm, adjust, reselect, cancel).`,
      ]);
      expect(played.refused.every((e) => e instanceof InvalidInputAnswerError)).to.equal(true);
      expect(inputsOf(played, "deployment_confirmation")).to.have.length(1);
      expect(played.list.at(-2)).to.include({ eventType: "pipeline_completed", status: "completed" });
    });

    it("reselect rolls back to the selection, which asks again, and the other candidate is deployed", async () => {
      let selections = 0;
      const played = await play(
        w.session,
        "I need a website",
        answering((request) => {
          if (request.kind === "candidate_selection")
            return { kind: "candidate_selection", selectedId: selections++ === 0 ? "1" : "0" };
          if (request.kind === "deployment_confirmation")
            return { kind: "deployment_confirmation", action: selections === 1 ? "reselect" : "confirm" };
          return undefined;
        }),
      );
      const rollback = of(played.list, "rollback_completed");
      expect(rollback).to.have.length(1);
      expect(data(rollback[0])).to.include({
        fromStep: "deploying",
        toStep: "confirm_and_select",
        reason: "The user chose not to deploy Load-balanced pair and wants to choose another candidate.",
      });
      expect(of(played.list, "cleanup_started")).to.deep.equal([]);
      const asked = inputsOf(played, "candidate_selection");
      expect(asked).to.have.length(2);
      expect(asked[1].prompt).to.match(/^Choose again: The user chose not to deploy Load-balanced pair/);
      const deployed = resultOf(played, "ros_deploy");
      expect(deployed).to.have.length(1);
      expect(deployed[0].result.resources.map((r: { logicalId: string }) => r.logicalId)).to.deep.equal([
        "VSwitch",
        "Server",
      ]);
      expect(played.list.at(-2)).to.include({ eventType: "pipeline_completed", status: "completed" });
    });

    it("cancel ends the run without creating anything, saying what happens next", async () => {
      const played = await play(
        w.session,
        "I need a website",
        answersFor("deployment_confirmation", [{ kind: "deployment_confirmation", action: "cancel" }]),
      );
      expect(resultOf(played, "ros_deploy")).to.deep.equal([]);
      expect(played.inputs.map((i) => i.toolName)).to.not.include("ros_deploy");
      expect(storyOf(played.list).slice(-5)).to.deep.equal([
        "input_received",
        "tool_result",
        "step_completed",
        "pipeline_completed",
        "pipeline_handoff_ready",
      ]);
      const message =
        "You cancelled the deployment of iac-demo-web: nothing was created in Alibaba Cloud. The pipeline has ended and the conversation continues as normal chat; to deploy later, send a new pipeline request.";
      const step = of(played.list, "step_completed").at(-1)!;
      expect(step.step).to.include({ id: "deploying" });
      expect(data(step).conclusion).to.deep.equal({ status: "cancelled", message });
      const completed = of(played.list, "pipeline_completed")[0];
      expect(completed).to.include({ status: "completed" });
      expect(data(completed)).to.include({ earlyExit: true, reason: message });
      expect(data(played.list.at(-1)!)).to.include({ outcome: "early_exit" });
      expect(data(played.list.at(-1)!).summary).to.match(
        new RegExp(`^${message.replace(/[.;()]/g, "\\$&")}`),
      );
    });

    it("a plain message answers it: an action's name, or JSON with overrides", async () => {
      const messages = [
        '{"action": "adjust", "parameter_overrides": {"ZoneId": "cn-hangzhou-j"}}',
        "confirm",
      ];
      const taken: boolean[] = [];
      const played = await play(
        w.session,
        "I need a website",
        (request, seen) =>
          request.kind === "deployment_confirmation" ? undefined : happyAnswers(request, seen),
        {
          onEvent: (event) => {
            if (event.type === "input_required" && event.request.kind === "deployment_confirmation") {
              const text = messages.shift()!;
              setImmediate(() => taken.push(w.session.interject!({ text, images: [], overrides: {} })));
            }
          },
        },
      );
      expect(taken).to.deep.equal([true, true]);
      expect(inputsOf(played, "deployment_confirmation")).to.have.length(2);
      expect(resultOf(played, "ros_deploy")[0].result.parameters).to.include({ ZoneId: "cn-hangzhou-j" });
    });
  });

  it("the selector survives a restart: listed by pendingInputs, asked again with the same input, and its answer goes on", async () => {
    const before = await play(
      w.session,
      "I need a website",
      (request, seen) =>
        request.kind === "cloud_resource_selection" ? undefined : happyAnswers(request, seen),
      {
        onEvent: (event) => {
          if (event.type === "input_required" && event.request.kind === "cloud_resource_selection")
            void w.runtime.close();
        },
      },
    );
    const [waiting] = inputsOf(before, "cloud_resource_selection");
    w = await demoWorld({ dir: w.dir, sessionId: w.session.sessionId });
    const pending = w.session.pendingInputs();
    expect(pending).to.have.length(1);
    expect(pending[0]).to.deep.equal(waiting);
    const after = await play(
      w.session,
      "",
      answersFor("cloud_resource_selection", [
        { kind: "cloud_resource_selection", value: "vpc-sim1demo0002" },
      ]),
      { resume: true },
    );
    expect(after.inputs.map((i) => [i.kind, i.inputId])).to.deep.equal([
      ["cloud_resource_selection", waiting.inputId],
      ["deployment_confirmation", after.inputs[1].inputId],
      ["permission", after.inputs[2].inputId],
    ]);
    expect(after.inputs[0].options).to.deep.equal(waiting.options);
    expect(resultOf(after, "select_cloud_resource")).to.have.length(1);
    expect(resultOf(after, "ros_deploy")[0].result.parameters).to.deep.equal({ VpcId: "vpc-sim1demo0002" });
    expect(after.list.at(-2)).to.include({ eventType: "pipeline_completed", status: "completed" });
  });
});
