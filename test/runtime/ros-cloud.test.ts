// Signed ROS calls against the local ROS endpoint (which verifies every
// ACS3-HMAC-SHA256 signature), error mapping, stack polling with progress
// events, the credential chain and credential-gated tool registration.
import { expect } from "chai";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { resolveCloudCredentials } from "../../src/runtime/cloud/credentials.js";
import { flattenParams, RosApiError, RosClient } from "../../src/runtime/cloud/ros-client.js";
import { percentEncode } from "../../src/runtime/cloud/acs3-signer.js";
import { createAgentRuntime, type RuntimeOptions } from "../../src/runtime/index.js";
import {
  rosEstimateCostTool,
  rosPreviewTemplateTool,
  rosValidateTemplateTool,
} from "../../src/runtime/tools/ros.js";
import { rosStackTool } from "../../src/runtime/tools/ros-stack.js";
import type { ToolContext } from "../../src/runtime/tools/types.js";
import { Workspace } from "../../src/runtime/tools/workspace.js";
import type { AgentRuntime, AgentSession } from "../../src/runtime/seam.js";
import { RosEndpointFixture } from "../fixtures/ros-endpoint.js";
import { allowOnce, ofType, removeTempDirs, silentLogger, tempDir, TOOLS_SCRIPT, turn } from "./helpers.js";

const AK = "LTAI5tFixtureKeyId01";
const SECRET = "fixture-secret-value-0123456789";
const TEMPLATE = "ROSTemplateFormatVersion: '2015-09-01'\nResources:\n  Vpc:\n    Type: ALIYUN::ECS::VPC\n";

async function toolContext(
  cwd: string,
  ros: RosEndpointFixture,
  progress: Array<Record<string, unknown>> = [],
): Promise<ToolContext> {
  const credentials = {
    accessKeyId: AK,
    accessKeySecret: SECRET,
    regionId: "cn-hangzhou",
    source: "env" as const,
  };
  return {
    workspace: await Workspace.open(cwd),
    signal: new AbortController().signal,
    toolUseId: "t",
    language: "en",
    progress: (p) => progress.push(p),
    askUser: () => Promise.reject(new Error("no questions")),
    cloud: {
      credentials,
      ros: new RosClient({ endpoint: ros.url, credentials }),
      pollIntervalMs: 1,
      maxPollMs: 60_000,
    },
  };
}

describe("runtime: Alibaba Cloud ROS", () => {
  let ros: RosEndpointFixture;
  let runtime: AgentRuntime | undefined;
  beforeEach(async () => {
    ros = await RosEndpointFixture.start({ [AK]: SECRET });
  });
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
    await ros.close();
    await removeTempDirs();
  });

  async function session(
    options: Partial<RuntimeOptions> = {},
    env: NodeJS.ProcessEnv = {},
  ): Promise<{ s: AgentSession; cwd: string }> {
    const cwd = await tempDir("iac-ws-");
    await writeFile(path.join(cwd, "vpc.yaml"), TEMPLATE);
    runtime = await createAgentRuntime({
      configDir: await tempDir(),
      env: { ALIBABA_CLOUD_ACCESS_KEY_ID: AK, ALIBABA_CLOUD_ACCESS_KEY_SECRET: SECRET, ...env },
      scriptFile: TOOLS_SCRIPT,
      rosEndpoint: ros.url,
      stackPollIntervalMs: 1,
      logger: silentLogger(),
      ...options,
    });
    return { s: await runtime.openSession({ contextId: "ros", cwd }), cwd };
  }

  it("signs calls the endpoint verifies, and maps ROS error bodies", async () => {
    const client = new RosClient({
      endpoint: ros.url,
      credentials: { accessKeyId: AK, accessKeySecret: SECRET, regionId: "cn-beijing", source: "env" },
    });
    const signal = new AbortController().signal;
    const answer = await client.call(
      "ValidateTemplate",
      { TemplateBody: TEMPLATE, RegionId: "cn-beijing" },
      signal,
    );
    expect(answer.RequestId).to.be.a("string");
    expect(ros.callsOf("ValidateTemplate")[0].params).to.deep.equal({
      TemplateBody: TEMPLATE,
      RegionId: "cn-beijing",
    });

    ros.failNext("GetStack", 404, "StackNotFound", "The Stack (s-1) could not be found.");
    const notFound = await client.call("GetStack", { StackId: "s-1" }, signal).catch((e: unknown) => e);
    expect(notFound).to.be.instanceOf(RosApiError);
    expect(notFound).to.include({
      code: "StackNotFound",
      httpStatus: 404,
      message: "The Stack (s-1) could not be found.",
    });
    expect((notFound as RosApiError).requestId).to.be.a("string");

    const wrong = new RosClient({
      endpoint: ros.url,
      credentials: {
        accessKeyId: AK,
        accessKeySecret: "not-the-secret",
        regionId: "cn-hangzhou",
        source: "env",
      },
    });
    const mismatch = await wrong
      .call("ValidateTemplate", { TemplateBody: TEMPLATE }, signal)
      .catch((e: unknown) => e);
    expect(mismatch).to.include({ code: "SignatureDoesNotMatch", httpStatus: 400 });
    expect(ros.calls.at(-1)?.rejected).to.equal("signature mismatch");

    const unknown = new RosClient({
      endpoint: ros.url,
      credentials: {
        accessKeyId: "LTAIunknown",
        accessKeySecret: SECRET,
        regionId: "cn-hangzhou",
        source: "env",
      },
    });
    expect(await unknown.call("GetStack", {}, signal).catch((e: unknown) => e)).to.include({
      code: "InvalidAccessKeyId.NotFound",
    });
  });

  it("signs the STS token and flattens list parameters", async () => {
    const client = new RosClient({
      endpoint: ros.url,
      credentials: {
        accessKeyId: AK,
        accessKeySecret: SECRET,
        securityToken: "sts-token-xyz",
        regionId: "cn-hangzhou",
        source: "request",
      },
    });
    await client.call(
      "PreviewStack",
      {
        StackName: "s",
        TemplateBody: TEMPLATE,
        Parameters: [{ ParameterKey: "Zone Id", ParameterValue: "cn-hangzhou-h*~" }],
      },
      new AbortController().signal,
    );
    const [call] = ros.callsOf("PreviewStack");
    expect(call.securityToken).to.equal("sts-token-xyz");
    expect(call.params).to.deep.include({
      "Parameters.1.ParameterKey": "Zone Id",
      "Parameters.1.ParameterValue": "cn-hangzhou-h*~",
    });
    expect(flattenParams({ A: [1, { B: true }], C: { D: "x" }, E: undefined })).to.deep.equal({
      "A.1": "1",
      "A.2.B": "true",
      "C.D": "x",
    });
    expect(percentEncode("a b*c~d/é")).to.equal("a%20b%2Ac~d%2F%C3%A9");
  });

  it("turns a network failure into a ROS error, not a crash", async () => {
    const client = new RosClient({
      endpoint: "http://127.0.0.1:1",
      credentials: { accessKeyId: AK, accessKeySecret: SECRET, regionId: "cn-hangzhou", source: "env" },
    });
    const error = await client.call("GetStack", {}, new AbortController().signal).catch((e: unknown) => e);
    expect(error).to.include({ code: "NetworkError", message: "ROS GetStack: connection failed" });
  });

  it("ros_validate_template skips the remote call for a template with local errors", async () => {
    const { s } = await session();
    const events = await turn(s, "[BROKEN-REF]", { answer: allowOnce });
    const result = ofType(events, "tool_result").find((e) => e.name === "ros_validate_template");
    expect(result?.isError).to.equal(true);
    expect(ros.callsOf("ValidateTemplate")).to.have.length(0);
    const data = result?.result as { findings: Array<{ path: string; message: string }> };
    expect(data.findings[0]).to.include({ path: "Resources/VSwitch/Properties/VpcId/Ref" });
  });

  it("ros_validate_template asks ROS about a locally valid template and reports its answer", async () => {
    const cwd = await tempDir("iac-ws-");
    await writeFile(path.join(cwd, "vpc.yaml"), TEMPLATE);
    const ctx = await toolContext(cwd, ros);
    const ok = await rosValidateTemplateTool.run({ path: "vpc.yaml" }, ctx);
    expect(ok.isError).to.equal(false);
    expect(ok.content).to.equal(
      "vpc.yaml: The template is valid (1 resources, 0 parameters, 0 outputs).\nROS ValidateTemplate accepted the template.",
    );
    expect(ros.callsOf("ValidateTemplate")[0].params).to.deep.equal({
      TemplateBody: TEMPLATE,
      RegionId: "cn-hangzhou",
    });

    ros.validateTemplate = () => "Resource Vpc: property CidrBlock is required.";
    const rejected = await rosValidateTemplateTool.run({ path: "vpc.yaml" }, ctx);
    expect(rejected.isError).to.equal(true);
    expect(rejected.content).to.match(
      /ROS ValidateTemplate failed: InvalidTemplate: Resource Vpc: property CidrBlock is required\. \(RequestId /,
    );

    const noCloud = await rosValidateTemplateTool.run(
      { template_body: TEMPLATE },
      { ...ctx, cloud: undefined },
    );
    expect(noCloud.content).to.include("(Remote ValidateTemplate skipped: no Alibaba Cloud credentials.)");
    const both = await rosValidateTemplateTool
      .run({ template_body: TEMPLATE, path: "vpc.yaml" }, ctx)
      .catch((e: unknown) => e);
    expect(both).to.have.property("message", "Give exactly one of path or template_body.");
  });

  it("estimates cost and previews a stack", async () => {
    const cwd = await tempDir("iac-ws-");
    await writeFile(path.join(cwd, "vpc.yaml"), TEMPLATE);
    const ctx = await toolContext(cwd, ros);
    const cost = await rosEstimateCostTool.run({ path: "vpc.yaml", parameters: { Size: 2 } }, ctx);
    expect(cost.data).to.deep.include({
      resources: {
        Vpc: { Type: "ALIYUN::ECS::VPC", Result: { Order: { TradeAmount: 0, Currency: "CNY" } } },
      },
    });
    expect(ros.callsOf("GetTemplateEstimateCost")[0].params).to.include({
      "Parameters.1.ParameterKey": "Size",
      "Parameters.1.ParameterValue": "2",
    });
    const preview = await rosPreviewTemplateTool.run({ path: "vpc.yaml", stack_name: "p" }, ctx);
    expect(preview.data).to.deep.include({
      resources: [{ LogicalResourceId: "Vpc", ResourceType: "ALIYUN::ECS::VPC", Action: "Add" }],
    });
  });

  it("creates a stack after permission and polls it to CREATE_COMPLETE with progress events", async () => {
    const { s } = await session();
    const events = await turn(s, "[STACK]", { answer: allowOnce, overrides: { language: "en" } });
    const request = ofType(events, "input_required")[0].request;
    expect(request).to.include({
      toolName: "ros_stack",
      title: "Create the ROS stack demo-stack.",
      effect: "cloud_change",
      target: "demo-stack",
    });
    const progress = ofType(events, "tool_progress").map((p) => p.progress);
    expect(progress.map((p) => p.status)).to.deep.equal([
      "CREATE_IN_PROGRESS",
      "CREATE_IN_PROGRESS",
      "CREATE_COMPLETE",
    ]);
    expect(progress[0]).to.include({
      stackName: "demo-stack",
      regionId: "cn-hangzhou",
      progressPercentage: 50,
    });
    expect(progress[2].progressPercentage).to.equal(100);
    const result = ofType(events, "tool_result").find((e) => e.name === "ros_stack");
    expect(result?.isError).to.equal(false);
    expect(result?.result).to.deep.include({ status: "CREATE_COMPLETE", stackName: "demo-stack" });
    const [create] = ros.callsOf("CreateStack");
    expect(create.params).to.include({
      StackName: "demo-stack",
      TemplateBody: TEMPLATE,
      RegionId: "cn-hangzhou",
      TimeoutInMinutes: "60",
    });
    expect(ros.callsOf("GetStack")).to.have.length(3);
  });

  it("reports a failed stack as a tool error", async () => {
    ros.timeline = ["CREATE_IN_PROGRESS", "CREATE_FAILED"];
    const { s } = await session();
    const events = await turn(s, "[STACK]", { answer: allowOnce });
    const result = ofType(events, "tool_result").find((e) => e.name === "ros_stack");
    expect(result?.isError).to.equal(true);
    expect(result?.result).to.deep.include({
      status: "CREATE_FAILED",
      statusReason: "Resource creation failed.",
    });
  });

  it("maps a ROS error answer of CreateStack into the tool result", async () => {
    ros.failNext("CreateStack", 400, "StackExists", "The Stack (demo-stack) already exists.");
    const { s } = await session();
    const events = await turn(s, "[STACK]", { answer: allowOnce });
    const result = ofType(events, "tool_result").find((e) => e.name === "ros_stack");
    expect(result?.isError).to.equal(true);
    expect(String(result?.result)).to.match(
      /^ROS CreateStack failed: StackExists: The Stack \(demo-stack\) already exists\. \(RequestId [0-9A-F-]+\)$/,
    );
  });

  it("auto-approve never creates cloud resources; an exact allow rule does", async () => {
    let { s } = await session({ autoApprovePermissions: true });
    let events = await turn(s, "[STACK]");
    expect(ofType(events, "permission_decided")[0]).to.include({
      allowed: false,
      reason: "auto_approve:cloud_mutation",
    });
    expect(ros.callsOf("CreateStack")).to.have.length(0);
    await runtime?.close();

    ({ s } = await session({ permissionRules: { allow: ["ros_stack"] } }));
    events = await turn(s, "[STACK]", { answer: () => ({ kind: "permission", decision: "deny" }) });
    expect(ofType(events, "input_required")).to.have.length(1);
    await runtime?.close();

    ({ s } = await session({ permissionRules: { allow: ["ros_stack(create:demo-stack)"] } }));
    events = await turn(s, "[STACK]");
    expect(ofType(events, "permission_decided")[0]).to.include({
      allowed: true,
      reason: "allow_rule:ros_stack(create:demo-stack)",
    });
    expect(ros.callsOf("CreateStack")).to.have.length(1);
  });

  it("deletes a stack and waits until it is gone; reads one without asking", async () => {
    const { s } = await session();
    await turn(s, "[STACK]", { answer: allowOnce });
    const stackId = ros.callsOf("GetStack")[0].params.StackId;
    const progress: Array<Record<string, unknown>> = [];
    const ctx = await toolContext(s.cwd, ros, progress);
    expect(rosStackTool.isReadOnly({ action: "get", stack_id: stackId })).to.equal(true);
    const got = await rosStackTool.run({ action: "get", stack_id: stackId }, ctx);
    expect(got.data).to.deep.include({ status: "CREATE_COMPLETE" });
    const deleted = await rosStackTool.run({ action: "delete", stack_id: stackId }, ctx);
    expect(deleted.isError).to.equal(false);
    expect(progress.map((p) => p.status)).to.deep.equal(["DELETE_IN_PROGRESS", "DELETE_COMPLETE"]);
    expect(ros.callsOf("DeleteStack")[0].params).to.deep.equal({ StackId: stackId, RegionId: "cn-hangzhou" });
  });

  it("cancelling while a stack is polled stops the tool and records the cancellation", async () => {
    ros.timeline = ["CREATE_IN_PROGRESS"];
    const { s } = await session();
    const controller = new AbortController();
    const events = await turn(s, "[STACK]", {
      answer: allowOnce,
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "tool_progress") controller.abort();
      },
    });
    expect(ofType(events, "tool_progress").length).to.be.greaterThan(0);
    expect(ofType(events, "tool_result")).to.have.length(0);
    expect(ofType(events, "error")).to.have.length(0);
    const polls = ros.callsOf("GetStack").length;
    // The session is still usable, and the cancelled call has its result in the conversation.
    const next = await turn(s, "status?");
    expect(ofType(next, "message_end")[0].text).to.equal("Plain answer.");
    expect(ros.callsOf("GetStack").length).to.equal(polls);
    const conversation = (
      s as unknown as { conversation(): Array<{ content: Array<{ type: string; content?: string }> }> }
    ).conversation();
    const results = conversation.flatMap((m) =>
      m.content.filter((b) => b.type === "tool_result").map((b) => b.content),
    );
    expect(results).to.deep.equal(["Cancelled by the user before the tool finished."]);
  });

  it("times out a slow ROS call with a tool error", async () => {
    ros.delays.set("GetTemplateEstimateCost", 5_000);
    const { s } = await session({ toolTimeoutMs: 50 });
    const events = await turn(s, "[COST]");
    expect(ofType(events, "tool_result")[0]).to.include({
      name: "ros_estimate_template_cost",
      isError: true,
      result: "ros_estimate_template_cost timed out after 50 ms.",
    });
    expect(ofType(events, "message_end").at(-1)?.text).to.equal("Cost estimated.");
  });

  it("registers cloud tools only when a credential resolves", async () => {
    const cwd = await tempDir("iac-ws-");
    runtime = await createAgentRuntime({
      configDir: await tempDir(),
      env: {},
      scriptFile: TOOLS_SCRIPT,
      logger: silentLogger(),
    });
    const s = await runtime.openSession({ contextId: "x", cwd });
    const events = await turn(s, "[STACK]");
    expect(String(ofType(events, "tool_result")[0].result)).to.match(
      /^Unknown tool ros_stack\. Available tools: read_file, write_file, edit_file, list_files, glob, grep, ask_user_question, ros_validate_template, skill, terraform_package_ros_template\.$/,
    );
    // Per-turn credentials register them for that turn only.
    const withCreds = await turn(s, "[STACK]", {
      overrides: { alibabaCloud: { accessKeyId: AK, accessKeySecret: SECRET, regionId: "cn-shanghai" } },
      answer: () => ({ kind: "permission", decision: "deny" }),
    });
    expect(ofType(withCreds, "input_required")).to.have.length(1);
  });

  it("resolves credentials: request, then environment, then config file, then aliyun CLI profile", async () => {
    const configDir = await tempDir();
    const home = await tempDir("iac-home-");
    const logger = silentLogger();
    const env = {
      ALIBABA_CLOUD_ACCESS_KEY_ID: "env-id",
      ALIBABA_CLOUD_ACCESS_KEY_SECRET: "env-secret",
      ALIBABA_CLOUD_REGION_ID: "cn-beijing",
    };
    await writeFile(
      path.join(configDir, ".cloud-credentials.yml"),
      "aliyun:\n  mode: StsToken\n  access_key_id: file-id\n  access_key_secret: file-secret\n  sts_token: file-token\n",
    );
    await mkdir(path.join(home, ".aliyun"));
    await writeFile(
      path.join(home, ".aliyun", "config.json"),
      JSON.stringify({
        current: "p2",
        profiles: [
          { name: "p1", mode: "AK", access_key_id: "cli-1", access_key_secret: "s1" },
          {
            name: "p2",
            mode: "AK",
            access_key_id: "cli-2",
            access_key_secret: "s2",
            region_id: "cn-shenzhen",
          },
        ],
      }),
    );
    const request = { accessKeyId: "req-id", accessKeySecret: "req-secret", securityToken: "req-token" };
    expect(
      resolveCloudCredentials({ override: request, env, configDir, homeDir: home, logger }),
    ).to.deep.equal({
      accessKeyId: "req-id",
      accessKeySecret: "req-secret",
      securityToken: "req-token",
      regionId: "cn-beijing",
      source: "request",
    });
    expect(
      resolveCloudCredentials({
        override: { accessKeyId: "only-id" },
        env,
        configDir,
        homeDir: home,
        logger,
      }),
    ).to.include({ source: "env", accessKeyId: "env-id" });
    expect(resolveCloudCredentials({ env: {}, configDir, homeDir: home, logger })).to.deep.equal({
      accessKeyId: "file-id",
      accessKeySecret: "file-secret",
      securityToken: "file-token",
      regionId: "cn-hangzhou",
      source: "config_file",
    });
    const emptyConfig = await tempDir();
    expect(resolveCloudCredentials({ env: {}, configDir: emptyConfig, homeDir: home, logger })).to.include({
      accessKeyId: "cli-2",
      regionId: "cn-shenzhen",
      source: "aliyun_cli",
    });
    expect(
      resolveCloudCredentials({ env: {}, configDir: emptyConfig, homeDir: await tempDir(), logger }),
    ).to.equal(undefined);
  });
});
