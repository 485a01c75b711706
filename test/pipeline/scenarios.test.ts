/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- tests read the envelopes' free-form data through `any` */
// Demo mode's scenarios, through the real runtime (the bundled demo script,
// the simulated ROS endpoint): the happy path with its VPC selector,
// deployment confirmation, diagrams and details; and each scenario that fails
// on purpose ([demo:deploy-fails], [demo:cleanup-fails], [demo:candidate-fails],
// [demo:slow-deploy], [demo:long-context], [demo:compaction-fails]), a hard
// interrupt that restarts the candidates, and a ledger that cannot be read.
// Each checks the events in order, the data fields the reference lists, the
// texts the user reads and the outcome. Last, a table: every type of the
// AG-UI allowlist is produced by one of these runs, except those this
// implementation (like the reference) never emits.
import { expect } from "chai";
import { schemaIndex, violations } from "../../src/contract/index.js";
import { PIPELINE_CUSTOM_TYPES } from "../../src/agui/run/pipeline-steps.js";
import type { InputRequest, PipelineEnvelope, RuntimeEvent } from "../../src/runtime/seam.js";
import { ofType, removeTempDirs, seedStore, storedRows } from "../runtime/helpers.js";
import { answering, demoWorld, happyAnswers, play, type DemoWorld, type PlayedTurn } from "./demo-world.js";
import { envelopes, storyOf } from "./helpers.js";

const of = (list: readonly PipelineEnvelope[], type: string) => list.filter((e) => e.eventType === type);
function first(list: readonly PipelineEnvelope[], type: string): PipelineEnvelope {
  const found = list.find((e) => e.eventType === type);
  expect(found, `a ${type} envelope`).to.not.equal(undefined);
  return found as PipelineEnvelope;
}
const data = (e: PipelineEnvelope) => e.data as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test reads of published JSON
const inputsOf = (played: PlayedTurn, kind: InputRequest["kind"]) =>
  played.inputs.filter((i) => i.kind === kind);

/** Every envelope fits a2a/pipeline-envelope (with the data schemas of its type). */
function expectValidEnvelopes(list: readonly PipelineEnvelope[]): void {
  const validate = schemaIndex["a2a/pipeline-envelope"].validate;
  for (const e of list)
    expect(validate(e), `${e.eventType}: ${JSON.stringify(violations(validate))}`).to.equal(true);
}

/** An input request as A2A projects it fits a2a/input-request. */
function expectValidRequest(request: InputRequest): void {
  const validate = schemaIndex["a2a/input-request"].validate;
  const projected = {
    schemaVersion: 1,
    requestTaskId: "task-1",
    contextId: "ctx-1",
    required: true,
    ...request,
  };
  expect(validate(projected), `${request.kind}: ${JSON.stringify(violations(validate))}`).to.equal(true);
}

/** The story from the first envelope of `type` on. */
function storyFrom(list: readonly PipelineEnvelope[], type: string): string[] {
  const story = storyOf(list);
  return story.slice(story.indexOf(type));
}

/** `subsequence` appears in `story` in this order (other events may come between). */
function expectInOrder(story: readonly string[], subsequence: readonly string[]): void {
  let at = 0;
  for (const type of subsequence) {
    const found = story.indexOf(type, at);
    expect(found, `${type} after position ${at} in ${story.join(" ")}`).to.be.greaterThan(-1);
    at = found + 1;
  }
}

/** Which candidate the first and the later selections choose. */
const choosing = (...ids: string[]) => {
  let n = 0;
  return answering((request) =>
    request.kind === "candidate_selection"
      ? { kind: "candidate_selection", selectedId: ids[Math.min(n++, ids.length - 1)] }
      : undefined,
  );
};

// The scenario runs are shared by the tests that read them and by the coverage table.
const worlds: DemoWorld[] = [];
const runs = new Map<string, Promise<Record<string, unknown>>>();
function once<T extends Record<string, unknown>>(name: string, run: () => Promise<T>): Promise<T> {
  let promise = runs.get(name);
  if (!promise) {
    promise = run();
    runs.set(name, promise);
  }
  return promise as Promise<T>;
}
async function world(options: Parameters<typeof demoWorld>[0] = {}): Promise<DemoWorld> {
  const w = await demoWorld(options);
  worlds.push(w);
  return w;
}

const happy = () =>
  once("happy", async () => {
    const w = await world();
    return { w, played: await play(w.session, "I need a website") };
  });

const deployFails = () =>
  once("deploy-fails", async () => {
    const w = await world();
    return { w, played: await play(w.session, "I need a website [demo:deploy-fails]", choosing("1", "0")) };
  });

const cleanupFails = () =>
  once("cleanup-fails", async () => {
    const w = await world();
    const played = await play(w.session, "I need a website [demo:cleanup-fails]", choosing("1"));
    // A cleanupOnly request in the same process: the endpoint still has the stack, still protected.
    const again = await play(w.session, "", undefined, { overrides: { cleanupOnly: true } });
    // The process stops; the next one's endpoint no longer knows the sim- stack.
    await w.close();
    const restarted = await world({ dir: w.dir, sessionId: w.session.sessionId });
    const afterRestart = await play(restarted.session, "", undefined, { overrides: { cleanupOnly: true } });
    await restarted.close();
    return { w, played, again, afterRestart };
  });

const candidateFails = () =>
  once("candidate-fails", async () => {
    const w = await world();
    return { w, played: await play(w.session, "I need a website [demo:candidate-fails]") };
  });

const slowDeploy = () =>
  once("slow-deploy", async () => {
    const w = await world();
    let taken: boolean | undefined;
    const played = await play(w.session, "I need a website [demo:slow-deploy]", undefined, {
      onEvent: (event) => {
        if (taken !== undefined || event.type !== "pipeline") return;
        if (event.envelopes.some((e) => e.eventType === "stack_instances_progress"))
          taken = w.session.interject!({ text: "stop", images: [], overrides: {} });
      },
    });
    return { w, played, taken };
  });

const longContext = () =>
  once("long-context", async () => {
    const w = await world();
    return { w, played: await play(w.session, "I need a website [demo:long-context]") };
  });

const compactionFails = () =>
  once("compaction-fails", async () => {
    const w = await world();
    return { w, played: await play(w.session, "I need a website [demo:compaction-fails]") };
  });

const REDO = "Please redo the templates with two zones";
const candidateRestart = () =>
  once("candidate-restart", async () => {
    const w = await world();
    let trigger: string | undefined;
    let taken: boolean | undefined;
    const classified = (seen: readonly RuntimeEvent[]) =>
      envelopes(seen).some((e) => e.eventType === "interrupt_classified");
    const played = await play(
      w.session,
      "I need a website",
      // The write the message arrives during is answered only once the judge has spoken.
      (request, seen) =>
        request.inputId === trigger && !classified(seen) ? undefined : happyAnswers(request, seen),
      {
        onEvent: (event) => {
          if (trigger || event.type !== "input_required" || event.request.toolName !== "write_file") return;
          trigger = event.request.inputId;
          taken = w.session.interject!({ text: REDO, images: [], overrides: {} });
        },
      },
    );
    return { w, played, taken };
  });

const ledgerLost = () =>
  once("ledger-lost", async () => {
    // The context of [demo:cleanup-fails], its processes stopped; its ledger document is then unreadable.
    const { w } = await cleanupFails();
    seedStore(w.configDir, w.session.sessionId, { docs: { ledger: "not a ledger" } }, "pipeline");
    const next = await world({ dir: w.dir, sessionId: w.session.sessionId });
    const cleanup = await play(next.session, "", undefined, { overrides: { cleanupOnly: true } });
    return { w: next, cleanup };
  });

const restartedAtConfirmation = () =>
  once("restarted", async () => {
    const w = await world();
    // The process stops while the deployment confirmation waits.
    const before = await play(
      w.session,
      "I need a website",
      (request, seen) =>
        request.kind === "deployment_confirmation" ? undefined : happyAnswers(request, seen),
      {
        onEvent: (event) => {
          if (event.type === "input_required" && event.request.kind === "deployment_confirmation")
            void w.runtime.close();
        },
      },
    );
    const next = await world({ dir: w.dir, sessionId: w.session.sessionId });
    const pending = next.session.pendingInputs();
    const after = await play(next.session, "", happyAnswers, { resume: true });
    return { w: next, before, pending, after };
  });

const restartedWhileDeploying = () =>
  once("restarted-deploying", async () => {
    const w = await world();
    // The process stops while the stack group is being created.
    const before = await play(w.session, "I need a website [demo:slow-deploy]", happyAnswers, {
      onEvent: (event) => {
        if (
          event.type === "pipeline" &&
          event.envelopes.some((e) => e.eventType === "stack_instances_progress")
        )
          void w.runtime.close();
      },
    });
    const next = await world({ dir: w.dir, sessionId: w.session.sessionId });
    const after = await play(next.session, "", happyAnswers, { resume: true });
    return { w: next, before, after };
  });

describe("pipeline demo scenarios (demo mode, simulated ROS endpoint)", function () {
  this.timeout(60_000);
  after(async () => {
    for (const w of worlds.splice(0)) await w.close().catch(() => undefined);
    await removeTempDirs();
  });

  describe("the happy path", () => {
    it("shows the candidates' diagrams and details before the selection", async () => {
      const { played } = await happy();
      const { list } = played;
      expectValidEnvelopes(list);
      const diagrams = of(list, "diagram_shown");
      expect(diagrams.map((e) => data(e).candidateName)).to.have.members([
        "Single server",
        "Load-balanced pair",
      ]);
      const pair = diagrams.find((e) => data(e).candidateIndex === 1)!;
      expect(pair.step).to.include({ id: "confirm_and_select" });
      expect(data(pair)).to.include({ format: "mermaid", diagramStage: "optimized" });
      expect(data(pair).views).to.deep.equal(["architecture"]);
      expect(data(pair).mermaidSource).to.match(/^graph TD\n {2}slb\[SLB\]/);
      expect(data(pair).templateContent).to.contain("ALIYUN::SLB::LoadBalancer");
      expect(data(pair).architectureContext).to.contain("Two ECS instances behind an SLB");
      const details = of(list, "candidate_detail_shown");
      const single = details.find((e) => data(e).candidateIndex === 0)!;
      expect(data(single).detailId).to.equal(`detail-${data(single).toolUseId}`);
      expect(data(single).detail).to.deep.equal({
        candidateName: "Single server",
        candidateIndex: 0,
        summary: "One ECS instance in a VPC. Cheapest; no redundancy.",
        costItems: [
          { name: "ECS instance", spec: "ecs.g7.large", monthlyCost: 180 },
          { name: "VPC and VSwitch", monthlyCost: 0 },
        ],
        totalMonthlyCost: 180,
        currency: "CNY",
      });
      const story = storyOf(list);
      const selection = story.indexOf("input_required");
      expect(story.lastIndexOf("diagram_shown")).to.be.lessThan(selection);
      expect(story.lastIndexOf("candidate_detail_shown")).to.be.lessThan(selection);
    });

    it("chooses the VPC with a selector, confirms the deployment, then asks permission and deploys it", async () => {
      const { played } = await happy();
      expect(played.inputs.map((i) => `${i.kind}:${i.toolName}`).slice(-3)).to.deep.equal([
        "cloud_resource_selection:select_cloud_resource",
        "deployment_confirmation:confirm_deployment",
        "permission:ros_deploy",
      ]);
      const [selector] = inputsOf(played, "cloud_resource_selection");
      expectValidRequest(selector);
      expect(selector.inputId).to.equal(`select-${selector.toolUseId}`);
      expect(selector).to.include({ allowFreeText: true, isReadOnly: true });
      expect(selector.options).to.deep.equal([
        { id: "vpc-sim1demo0001", label: "demo-vpc (192.168.0.0/16)" },
        { id: "vpc-sim1demo0002", label: "staging-vpc (10.0.0.0/16)" },
      ]);
      expect(selector.selector).to.deep.equal({
        id: "vpc.vpc",
        parameter: "VpcId",
        resourceType: "ALIYUN::ECS::VPC",
        source: {
          provider: "aliyun",
          product: "vpc",
          action: "DescribeVpcs",
          regionId: "cn-hangzhou",
          simulated: true,
        },
      });
      expect(selector.responseSchema).to.deep.equal({
        oneOf: [
          {
            type: "object",
            properties: { value: { type: "string", minLength: 1 }, label: { type: "string" } },
            required: ["value"],
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
      const [confirmation] = inputsOf(played, "deployment_confirmation");
      expectValidRequest(confirmation);
      expect(confirmation.inputId).to.equal(`confirm-${confirmation.toolUseId}-1`);
      expect(confirmation.options.map((o) => [o.id, o.action])).to.deep.equal([
        ["confirm", "confirm"],
        ["adjust", "adjust"],
        ["reselect", "reselect"],
        ["cancel", "cancel"],
      ]);
      expect(confirmation.operation).to.equal("create");
      expect(confirmation.displayParameters).to.deep.equal([
        { name: "ZoneId", value: "cn-hangzhou-h" },
        { name: "VpcId", value: "vpc-sim1demo0001" },
      ]);
      expect(confirmation.deploymentSummary).to.deep.equal({
        candidateName: "Load-balanced pair",
        action: "create",
        region: "cn-hangzhou",
        stackName: "iac-demo-web",
        template: "demo-pipeline/pair/template.yaml",
        totalMonthlyCost: 420,
      });
      expect(confirmation.prompt).to.equal(
        "Create the stack iac-demo-web (Load-balanced pair) in cn-hangzhou with these parameters?",
      );
      const asked = first(played.list, "input_required");
      expect(asked).to.not.equal(undefined);
      const confirmEnvelope = of(played.list, "input_required").find(
        (e) => data(e).kind === "deployment_confirmation",
      )!;
      expect(data(confirmEnvelope)).to.deep.include({
        operation: "create",
        displayParameters: confirmation.displayParameters,
      });
      // The stack was created in the chosen VPC (no VPC of its own) with the confirmed parameters.
      const deployed = of(played.list, "tool_result").find((e) => data(e).toolName === "ros_deploy")!;
      expect(data(deployed).result.parameters).to.deep.equal({ VpcId: "vpc-sim1demo0001" });
      expect(data(deployed).result.resources.map((r: { logicalId: string }) => r.logicalId)).to.deep.equal([
        "VSwitch",
        "Balancer",
        "Servers",
      ]);
      expect(played.list.at(-2)).to.include({ eventType: "pipeline_completed", status: "completed" });
    });
  });

  describe("[demo:deploy-fails]", () => {
    it("the stack ends CREATE_FAILED with the resource's reason, in the progress and in the tool result", async () => {
      const { played } = await deployFails();
      const { list } = played;
      expectValidEnvelopes(list);
      const failed = of(list, "tool_result").find(
        (e) => data(e).toolName === "ros_deploy" && data(e).isError,
      )!;
      const result = data(failed).result;
      expect(result.status).to.equal("CREATE_FAILED");
      expect(result.statusReason).to.match(
        /^Resource Servers \(ALIYUN::ECS::InstanceGroup\) CREATE_FAILED: QuotaExceeded\.Instance: Servers asks for 12 ECS instances/,
      );
      const servers = result.resources.find((r: { logicalId: string }) => r.logicalId === "Servers");
      expect(servers.status).to.equal("CREATE_FAILED");
      expect(servers.statusReason).to.contain(
        "exceeds the ECS instance quota of cn-hangzhou (10 instances) (simulated)",
      );
      const progress = of(list, "stack_progress").filter((e) => data(e).stackId === result.stackId);
      const last = data(progress.at(-1)!);
      expect(last.status).to.equal("CREATE_FAILED");
      expect(
        last.resources.find((r: { logicalId: string }) => r.logicalId === "Servers").statusReason,
      ).to.contain("QuotaExceeded.Instance");
    });

    it("rolls back to the selection, cleans the failed stack up, asks again saying why, and deploys the other candidate", async () => {
      const { played } = await deployFails();
      const { list } = played;
      const failedStack = data(
        of(list, "tool_result").find((e) => data(e).toolName === "ros_deploy" && data(e).isError)!,
      ).result.stackId;
      expectInOrder(storyFrom(list, "rollback_completed"), [
        "rollback_completed",
        "cleanup_started",
        "cleanup_progress",
        "cleanup_completed",
        "step_started",
        "input_required",
        "candidate_selected",
        "stack_current_changed",
        "pipeline_completed",
        "pipeline_handoff_ready",
      ]);
      const rollback = first(list, "rollback_completed");
      expect(data(rollback)).to.include({
        fromStep: "deploying",
        toStep: "confirm_and_select",
        rollbackScope: "parent",
      });
      expect(data(rollback).reason).to.match(
        new RegExp(`^The stack ${failedStack} ended CREATE_FAILED: Resource Servers`),
      );
      expect(data(rollback).staleFields).to.include("selected_plan");
      const started = first(list, "cleanup_started");
      expect(started.scope).to.equal("cleanup");
      expect(data(started)).to.deep.include({
        status: "started",
        resourceCount: 1,
        provider: "ros",
        resourceType: "ALIYUN::ROS::Stack",
        resourceId: failedStack,
        resourceName: "iac-demo-web",
        regionId: "cn-hangzhou",
        sourceStepId: "deploying",
        cleanupStatus: "started",
      });
      expect(of(list, "cleanup_progress").map((e) => data(e).progressStatus)).to.deep.equal([
        "DELETE_IN_PROGRESS",
        "DELETE_COMPLETE",
      ]);
      expect(data(first(list, "cleanup_progress"))).to.include({
        cleanupStatus: "in_progress",
        stackStatus: "DELETE_IN_PROGRESS",
      });
      expect(data(first(list, "cleanup_completed"))).to.include({
        cleanupStatus: "completed",
        stackStatus: "DELETE_COMPLETE",
        resourceId: failedStack,
      });
      const selections = inputsOf(played, "candidate_selection");
      expect(selections).to.have.length(2);
      expect(selections[1].inputId).to.not.equal(selections[0].inputId);
      expect(selections[1].prompt).to.match(
        new RegExp(`^Choose again: The stack ${failedStack} ended CREATE_FAILED: .*QuotaExceeded`),
      );
      const changed = of(list, "stack_current_changed").map((e) => data(e));
      expect(changed.map((c) => c.stackStatus)).to.deep.equal(["CREATE_FAILED", "CREATE_COMPLETE"]);
      expect(changed[1].stackId).to.not.equal(failedStack);
      expect(first(list, "pipeline_completed")).to.include({ status: "completed" });
      expect(data(list.at(-1)!)).to.not.have.property("cleanup");
    });
  });

  describe("[demo:cleanup-fails]", () => {
    it("the deletion fails: cleanup_failed with its lastError, the deploying step fails, the run ends failed saying what is left", async () => {
      const { played } = await cleanupFails();
      const { list } = played;
      expectValidEnvelopes(list);
      expect(storyFrom(list, "rollback_completed")).to.deep.equal([
        "rollback_completed",
        "cleanup_started",
        "cleanup_progress",
        "cleanup_progress",
        "cleanup_failed",
        "step_failed",
        "pipeline_completed",
        "pipeline_handoff_ready",
      ]);
      const cleanup = data(first(list, "cleanup_failed"));
      const stack = cleanup.resourceId as string;
      expect(cleanup).to.include({ cleanupStatus: "failed", status: "failed", sourceStepId: "deploying" });
      expect(cleanup.lastError).to.contain(`Stack ${stack} (iac-demo-web) is DELETE_FAILED`);
      expect(cleanup.lastError).to.contain("Balancer has deletion protection on");
      const stepFailed = first(list, "step_failed");
      expect(stepFailed).to.include({ status: "failed" });
      expect(stepFailed.step).to.include({ id: "deploying" });
      expect(data(stepFailed).error).to.match(
        new RegExp(
          `^The rollback to confirm_and_select stopped: 1 stack\\(s\\) that deploying created could not be deleted \\(${stack} \\(iac-demo-web\\): `,
        ),
      );
      expect(data(stepFailed).errorDetails.type).to.equal("cleanup_failed");
      const completed = first(list, "pipeline_completed");
      expect(completed).to.include({ status: "failed" });
      const reason = data(completed).reason as string;
      expect(reason).to.contain("The selling pipeline failed.");
      expect(reason).to.contain(`- stack ${stack} (iac-demo-web) in cn-hangzhou: `);
      expect(reason).to.contain("metadata.iac_code.cleanupOnly: true");
      expect(reason).to.contain("ROS console (https://ros.console.aliyun.com/)");
      const handoff = data(list.at(-1)!);
      expect(handoff.summary).to.contain(reason);
      expect(handoff.cleanup).to.deep.include({ status: "pending", resourceCount: 1 });
      expect(handoff.cleanup.resources[0]).to.include({ resourceId: stack, cleanupStatus: "failed" });
    });

    it("a cleanupOnly request later in the same process finds the stack (still protected) and says the cleanup failed", async () => {
      const { again } = (await cleanupFails()) as unknown as { again: PlayedTurn };
      expect(storyOf(again.list)).to.deep.equal([
        "cleanup_started",
        "cleanup_progress",
        "cleanup_progress",
        "cleanup_failed",
      ]);
      const summary = ofType(again.events, "pipeline").at(-1)!.cleanupOnly!;
      expect(summary).to.include({ requested: true, status: "failed", resourceCount: 1 });
    });

    it("after a restart the endpoint no longer knows the sim- stack: a cleanupOnly request takes it as deleted", async () => {
      const { afterRestart } = (await cleanupFails()) as unknown as { afterRestart: PlayedTurn };
      expect(storyOf(afterRestart.list)).to.deep.equal(["cleanup_started", "cleanup_completed"]);
      expect(ofType(afterRestart.events, "pipeline").at(-1)!.cleanupOnly).to.include({
        status: "completed",
        resourceCount: 1,
      });
    });
  });

  describe("[demo:candidate-fails]", () => {
    it("one candidate's template fails validation twice: candidate_step_failed, candidate_failed; the selection offers the other and says why", async () => {
      const { played } = await candidateFails();
      const { list } = played;
      expectValidEnvelopes(list);
      const validations = of(list, "tool_result").filter(
        (e) => data(e).toolName === "ros_validate_template" && e.candidate?.index === 1,
      );
      expect(validations.map((e) => data(e).isError)).to.deep.equal([true, true]);
      const stepFailed = first(list, "candidate_step_failed");
      expect(stepFailed.candidate).to.include({ index: 1, name: "Load-balanced pair" });
      expect(stepFailed.candidateStep).to.include({ id: "template_generating", attempt: 1 });
      expect(data(stepFailed)).to.include({
        stepId: "template_generating",
        candidateIndex: 1,
        subPipelineId: "candidate-1",
      });
      expect(data(stepFailed).error).to.match(
        /^ros_validate_template failed 2 times, the step's limit: .*Ref target "SecurityGroup"/,
      );
      expect(data(stepFailed).errorDetails).to.deep.equal({ type: "tool_failure_limit" });
      const candidateFailed = first(list, "candidate_failed");
      expect(data(candidateFailed)).to.include({
        failed: true,
        failedStepId: "template_generating",
        error: data(stepFailed).error,
      });
      expect(storyOf(list).indexOf("candidate_failed")).to.equal(
        storyOf(list).indexOf("candidate_step_failed") + 1,
      );
      const [selection] = inputsOf(played, "candidate_selection");
      expect(selection.options.map((o) => o.id)).to.deep.equal(["0"]);
      expect(selection.prompt).to.match(
        /^Load-balanced pair is not offered: its evaluation failed \(ros_validate_template failed 2 times/,
      );
      expect(selection.prompt).to.contain("Only one candidate could be evaluated. Deploy it?");
      expect(first(list, "pipeline_completed")).to.include({ status: "completed" });
    });
  });

  describe("[demo:slow-deploy]", () => {
    it("deploys to three regions (a stack group): stack_instances_progress and tool_progress, over a few seconds", async () => {
      const { played } = await slowDeploy();
      const { list } = played;
      expectValidEnvelopes(list);
      const instances = of(list, "stack_instances_progress");
      expect(instances.length).to.be.greaterThanOrEqual(9);
      const lastProgress = data(instances.at(-1)!);
      expect(lastProgress).to.include({
        stackGroupName: "iac-demo-web",
        status: "SUCCEEDED",
        progressPercentage: 100,
      });
      expect(lastProgress.operationId).to.match(/^sim-op-/);
      expect(lastProgress.toolUseId).to.be.a("string");
      expect(lastProgress.elapsedSeconds).to.be.a("number");
      expect(lastProgress.instances.map((i: { regionId: string }) => i.regionId)).to.deep.equal([
        "cn-hangzhou",
        "cn-shanghai",
        "cn-beijing",
      ]);
      expect(lastProgress.instances[0]).to.include({ accountId: "1000000000000001", status: "SUCCEEDED" });
      const percentages = instances.map((e) => data(e).progressPercentage as number);
      expect(percentages).to.deep.equal([...percentages].sort((a, b) => a - b));
      expect(data(instances[0])).to.include({ status: "RUNNING", progressPercentage: 0 });
      const phases = of(list, "tool_progress").map((e) => data(e));
      expect(phases.map((p) => p.progress.phase)).to.deep.equal([
        "create_stack_group",
        "create_stack_instances",
      ]);
      expect(phases[0]).to.include({
        toolName: "ros_deploy",
        message: "Creating the stack group iac-demo-web in cn-hangzhou.",
      });
      const took = Date.parse(instances.at(-1)!.createdAt) - Date.parse(instances[0].createdAt);
      expect(took).to.be.greaterThan(2000);
      const changed = data(first(list, "stack_current_changed"));
      expect(changed).to.include({ stackGroupName: "iac-demo-web", stackStatus: "CREATE_COMPLETE" });
      expect(changed.stackId).to.match(/^sim-group-/);
      expect(changed.regionIds).to.deep.equal(["cn-hangzhou", "cn-shanghai", "cn-beijing"]);
    });

    it("'stop' while it deploys is judged; the judge fails, so deploying's policy pauses the run until the user says continue", async () => {
      const { played, taken } = (await slowDeploy()) as unknown as { played: PlayedTurn; taken: boolean };
      const { list } = played;
      expect(taken).to.equal(true);
      expect(data(first(list, "interrupt_received"))).to.deep.equal({ messageLength: 4 });
      expect(data(first(list, "interrupt_classified"))).to.include({
        action: "continue",
        targetStepId: "deploying",
        paused: true,
        judgeFailed: true,
      });
      const [pause] = inputsOf(played, "pipeline_pause_confirmation");
      expect(pause.options.map((o) => o.id)).to.deep.equal(["continue"]);
      const story = list.map((e) => `${e.eventType}:${String(data(e).kind ?? data(e).toolName ?? "")}`);
      const received = story.indexOf("interrupt_received:");
      // Judged while the stack group was still deploying.
      expect(received).to.be.lessThan(story.lastIndexOf("stack_instances_progress:"));
      const resumed = story.indexOf("input_received:pipeline_pause_confirmation");
      expect(resumed).to.be.greaterThan(story.indexOf("input_required:pipeline_pause_confirmation"));
      // The step's next model call (complete_step) waited for the answer.
      expect(
        story.indexOf("tool_started:complete_step", story.indexOf("tool_result:ros_deploy")),
      ).to.be.greaterThan(resumed);
      expect(first(list, "pipeline_completed")).to.include({ status: "completed" });
    });
  });

  describe("[demo:long-context] and [demo:compaction-fails]", () => {
    it("the architecture step's transcript outgrows the window and is compacted", async () => {
      const { played } = await longContext();
      const { list } = played;
      expectValidEnvelopes(list);
      expectInOrder(storyOf(list), ["context_compaction_started", "context_compacted", "step_completed"]);
      const started = first(list, "context_compaction_started");
      expect(started.step).to.include({ id: "architecture_planning", attempt: 1 });
      expect(started.scope).to.equal("step");
      const compacted = first(list, "context_compacted");
      expect(compacted.step).to.include({ id: "architecture_planning" });
      const d = data(compacted);
      expect(d.originalTokens)
        .to.equal(data(started).originalTokens)
        .and.to.be.greaterThan(0.93 * 6000);
      expect(d.compactedTokens).to.be.lessThan(d.originalTokens);
      expect(d.summary).to.contain("(demo summary)");
      expect(of(list, "context_compaction_failed")).to.deep.equal([]);
      expect(first(list, "pipeline_completed")).to.include({ status: "completed" });
    });

    it("a compaction that fails is reported and the step goes on", async () => {
      const { played } = await compactionFails();
      const { list } = played;
      expectValidEnvelopes(list);
      const failed = first(list, "context_compaction_failed");
      expect(failed.step).to.include({ id: "architecture_planning" });
      expect(data(failed).originalTokens).to.be.greaterThan(0.93 * 6000);
      expect(of(list, "context_compacted")).to.deep.equal([]);
      expect(first(list, "pipeline_completed")).to.include({ status: "completed" });
    });
  });

  describe("a hard interrupt of the running candidates", () => {
    it("restarts them (candidate_restart_requested) with the message as feedback, without rolling back", async () => {
      const { w, played, taken } = (await candidateRestart()) as unknown as {
        w: DemoWorld;
        played: PlayedTurn;
        taken: boolean;
      };
      const { list } = played;
      expectValidEnvelopes(list);
      expect(taken).to.equal(true);
      expect(data(first(list, "interrupt_classified"))).to.include({
        action: "hard_interrupt",
        targetStepId: "evaluate_candidates",
        candidateScope: "all",
      });
      const restarts = of(list, "candidate_restart_requested");
      expect(restarts.map((e) => e.candidate?.index).sort()).to.deep.equal([0, 1]);
      for (const e of restarts) {
        expect(e.scope).to.equal("candidate");
        expect(e.candidate).to.include({ attempt: 1 });
        expect(data(e)).to.include({
          candidateScope: "all",
          targetCandidateStepId: "template_generating",
          nextCandidateAttempt: 2,
          reason: REDO,
        });
      }
      const again = of(list, "candidate_started").filter((e) => e.candidate?.attempt === 2);
      expect(again).to.have.length(2);
      expect(of(list, "rollback_completed")).to.deep.equal([]);
      expect(of(list, "step_started").filter((e) => e.step?.id === "evaluate_candidates")).to.have.length(1);
      const transcript = storedRows(
        w.configDir,
        w.session.sessionId,
        "conversation",
        "transcript/r1.candidate-0.template_generating-2",
      ).join("\n");
      expect(transcript).to.contain(`Feedback: ${REDO}`);
      expect(first(list, "pipeline_completed")).to.include({ status: "completed" });
    });
  });

  describe("a restart while the deployment confirmation waits", () => {
    it("lists the same wait, asks it again once, and its answer deploys: nothing asked twice, no tool run twice", async () => {
      const { before, pending, after } = await restartedAtConfirmation();
      const [waiting] = inputsOf(before, "deployment_confirmation");
      expect(pending.map((p) => [p.kind, p.inputId])).to.deep.equal([
        ["deployment_confirmation", waiting.inputId],
      ]);
      expect(pending[0].displayParameters).to.deep.equal(waiting.displayParameters);
      expectValidEnvelopes(after.list);
      expect(after.list[0]).to.include({
        eventType: "pipeline_resumed",
        sequence: before.list.at(-1)!.sequence + 1,
      });
      expect(data(after.list[0])).to.deep.equal({ reason: "restart" });
      // Asked again with the same id, then the permission: the selection (answered before) is not asked again.
      expect(after.inputs.map((i) => [i.kind, i.inputId])).to.deep.equal([
        ["deployment_confirmation", waiting.inputId],
        ["permission", after.inputs[1].inputId],
      ]);
      const ran = (list: readonly PipelineEnvelope[], tool: string) =>
        of(list, "tool_started").filter((e) => data(e).toolName === tool).length;
      expect(ran(before.list, "select_cloud_resource") + ran(after.list, "select_cloud_resource")).to.equal(
        1,
      );
      expect(ran(before.list, "confirm_deployment") + ran(after.list, "confirm_deployment")).to.equal(1);
      expect(of(after.list, "tool_result").filter((e) => data(e).toolName === "ros_deploy")).to.have.length(
        1,
      );
      expect(first(after.list, "pipeline_completed")).to.include({ status: "completed" });
    });
  });

  describe("a restart while the stack is being created", () => {
    it("the resumed run does not hang on the stack the new endpoint forgot: it ends failed, saying why, and runs nothing twice", async () => {
      const { before, after } = await restartedWhileDeploying();
      expect(of(before.list, "stack_instances_progress").length).to.be.greaterThan(0);
      expectValidEnvelopes(after.list);
      expect(after.list[0]).to.include({ eventType: "pipeline_resumed" });
      // ros_deploy had started: it is not run again, its result says it was interrupted.
      const deploys = of(after.list, "tool_result").filter((e) => data(e).toolName === "ros_deploy");
      expect(deploys).to.have.length(1);
      expect(data(deploys[0])).to.include({ isError: true });
      expect(data(deploys[0]).result).to.contain("interrupted before it finished");
      expect(after.inputs).to.deep.equal([]);
      const failed = first(after.list, "step_failed");
      expect(failed.step).to.include({ id: "deploying" });
      expect(data(failed).error).to.match(/^The deployment was interrupted by a restart of the server\./);
      expect(first(after.list, "pipeline_completed")).to.include({ status: "failed" });
    });
  });

  describe("a cleanup ledger that cannot be read", () => {
    it("is a pipeline_warning (cleanup_tracking_unavailable), and the cleanup says it is unavailable", async () => {
      const { cleanup } = (await ledgerLost()) as unknown as { cleanup: PlayedTurn };
      expectValidEnvelopes(cleanup.list);
      expect(storyOf(cleanup.list)).to.deep.equal(["pipeline_warning"]);
      const warning = cleanup.list[0];
      expect(warning).to.include({ scope: "pipeline", status: "working" });
      expect(data(warning)).to.include({ reason: "cleanup_tracking_unavailable", operation: "load" });
      expect(data(warning).message).to.contain("no longer tracked");
      expect(ofType(cleanup.events, "pipeline").at(-1)!.cleanupOnly).to.include({
        status: "unavailable",
        resourceCount: 0,
      });
    });
  });

  describe("every AG-UI allowlisted pipeline event type", () => {
    /** The 7 types the Python reference never emits (DECISIONS), session backups (issue 32), and MCP (needs a server). */
    const NOT_FROM_DEMO: Record<string, string> = {
      pipeline_error: "never emitted by the reference",
      fields_marked_stale: "never emitted by the reference (stale fields ride on rollback_completed)",
      candidate_interrupted: "never emitted by the reference",
      rollback_triggered: "never emitted by the reference",
      sub_pipeline_started: "never emitted by the reference (candidate_started)",
      sub_pipeline_completed: "never emitted by the reference (candidate_completed)",
      sub_step_failed: "never emitted by the reference (candidate_step_failed)",
      backup_blocked: "comes with session backups (issue 32)",
      mcp_status: "needs an MCP server configured (test/runtime/mcp.test.ts)",
    };
    const produced = new Map<string, string>();
    before(async function () {
      this.timeout(120_000);
      const all: Array<[string, () => Promise<Record<string, unknown>>]> = [
        ["happy path", happy],
        ["[demo:deploy-fails]", deployFails],
        ["[demo:cleanup-fails]", cleanupFails],
        ["[demo:candidate-fails]", candidateFails],
        ["[demo:slow-deploy]", slowDeploy],
        ["[demo:long-context]", longContext],
        ["[demo:compaction-fails]", compactionFails],
        ["candidate restart", candidateRestart],
        ["unreadable ledger", ledgerLost],
        ["restart at the confirmation", restartedAtConfirmation],
      ];
      for (const [name, run] of all) {
        const result = await run();
        for (const value of Object.values(result)) {
          const list = (value as Partial<PlayedTurn> | undefined)?.list;
          for (const e of list ?? []) if (!produced.has(e.eventType)) produced.set(e.eventType, name);
        }
      }
    });

    for (const type of [...PIPELINE_CUSTOM_TYPES].sort()) {
      if (type in NOT_FROM_DEMO) {
        it(`${type}: not produced by the demo (${NOT_FROM_DEMO[type]})`, () => {
          expect(produced.get(type), type).to.equal(undefined);
        });
      } else {
        it(`${type}: produced by a demo scenario`, () => {
          expect(produced.get(type), `${type} is produced by no demo scenario`).to.be.a("string");
        });
      }
    }

    it("the allowlist has the 34 types of agui-iaccode.md §4.6", () => {
      expect(PIPELINE_CUSTOM_TYPES.size).to.equal(34);
    });
  });
});
