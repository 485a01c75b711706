// Demo mode (nothing configured): a pipeline request runs the bundled demo
// script through the whole selling pipeline, the cloud side answered by the
// clearly labelled simulated ROS endpoint; normal requests keep the old demo.
import { expect } from "chai";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { mkdir } from "node:fs/promises";
import { createAgentRuntime } from "../../src/runtime/index.js";
import type { AgentRuntime } from "../../src/runtime/seam.js";
import { ofType, removeTempDirs, silentLogger, tempDir, turn } from "../runtime/helpers.js";
import { happyAnswers } from "./demo-world.js";
import { envelopes, storyOf } from "./helpers.js";

/** "I need a website" as a pipeline, every permission allowed once and candidate 1 chosen. */
async function websitePipeline(runtime: AgentRuntime, contextId: string, cwd: string) {
  const session = await runtime.openSession({ contextId, cwd });
  const asked: string[] = [];
  const events = await turn(session, "I need a website", {
    overrides: { runMode: "pipeline" },
    answer: (request) => {
      asked.push(request.kind === "permission" ? `${request.kind}:${request.toolName}` : request.kind);
      return happyAnswers(request, []);
    },
  });
  return { asked, events };
}

describe("pipeline: demo mode with the simulated ROS endpoint", function () {
  this.timeout(30_000);
  let runtime: AgentRuntime;
  let cwd: string;
  beforeEach(async () => {
    const dir = await tempDir("iac-pipeline-demo-");
    cwd = path.join(dir, "workspace");
    await mkdir(cwd, { recursive: true });
    runtime = await createAgentRuntime({
      configDir: path.join(dir, "config"),
      env: { HOME: dir },
      homeDir: dir,
      logger: silentLogger(),
    });
  });
  afterEach(async () => {
    await runtime.close();
    await removeTempDirs();
  });

  it("runs the selling pipeline to the selection, then deploys the choice to the simulated endpoint", async () => {
    expect(runtime.info()).to.include({ demo: true });
    const { asked, events } = await websitePipeline(runtime, "demo-ctx", cwd);
    expect(ofType(events, "error")).to.deep.equal([]);
    expect(asked).to.deep.equal([
      "permission:write_file",
      "permission:write_file",
      "candidate_selection",
      "cloud_resource_selection",
      "deployment_confirmation",
      "permission:ros_deploy",
    ]);
    const list = envelopes(events);
    expect(storyOf(list).slice(-2)).to.deep.equal(["pipeline_completed", "pipeline_handoff_ready"]);
    expect(list.at(-2)!.status).to.equal("completed");
    const selection = ofType(events, "input_required").find((e) => e.request.kind === "candidate_selection")!;
    expect(selection.request.prompt).to.contain("simulated ROS endpoint");
    const changed = list.find((e) => e.eventType === "stack_current_changed")!;
    expect(changed.data).to.include({ stackStatus: "CREATE_COMPLETE", stackName: "iac-demo-web" });
    expect(String(changed.data.stackId)).to.match(/^sim-/);
    const progress = list.filter((e) => e.eventType === "stack_progress").map((e) => e.data.status);
    expect(progress).to.include("CREATE_IN_PROGRESS");
    const estimate = list.find(
      (e) => e.eventType === "tool_result" && e.data.toolName === "ros_estimate_template_cost",
    )!;
    expect(JSON.stringify(estimate.data.result)).to.match(/simulated-/);
    const text = list
      .filter((e) => e.eventType === "text_delta")
      .map((e) => e.data.text)
      .join("");
    expect(text).to.contain("nothing exists in Alibaba Cloud");
    expect(await readFile(path.join(cwd, "demo-pipeline/pair/template.yaml"), "utf8")).to.contain(
      "ALIYUN::SLB::LoadBalancer",
    );
  });

  it("in safe mode a pipeline keeps its step tools (writes asked as usual) and completes", async () => {
    const dir = await tempDir("iac-pipeline-safe-");
    const safe = await createAgentRuntime({
      configDir: path.join(dir, "config"),
      env: { HOME: dir },
      homeDir: dir,
      logger: silentLogger(),
      safeMode: true,
    });
    try {
      const { asked, events } = await websitePipeline(safe, "safe-ctx", cwd);
      expect(asked).to.include("permission:write_file");
      expect(storyOf(envelopes(events)).slice(-2)).to.deep.equal([
        "pipeline_completed",
        "pipeline_handoff_ready",
      ]);
    } finally {
      await safe.close();
    }
  });

  it("a normal request still gets the plain demo (no pipeline, no cloud)", async () => {
    const session = await runtime.openSession({ contextId: "demo-normal", cwd });
    const events = await turn(session, "Create a VPC template", {
      answer: () => ({ kind: "permission", decision: "deny" }),
    });
    expect(ofType(events, "pipeline")).to.deep.equal([]);
    expect(ofType(events, "message_end").at(-1)?.text).to.contain("I did not write vpc.yaml");
  });
});
