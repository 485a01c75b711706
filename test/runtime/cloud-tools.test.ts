// The Alibaba Cloud tools: aliyun_api against the local endpoint (which
// verifies every ACS3 signature), its permission model (reads allowed, writes
// asked, refused, or allowed by the exact aliyun_api(product:Action) rule),
// cloud errors as tool errors without credentials, credential-gated
// registration, and ros_get_template_parameter_constraints over HTTP and
// against the simulated endpoint.
import { expect } from "chai";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { SimulatedRos, simulatedCloud } from "../../src/runtime/cloud/simulated-ros.js";
import { RosClient } from "../../src/runtime/cloud/ros-client.js";
import { AliyunApiClient } from "../../src/runtime/cloud/aliyun-api-client.js";
import { aliyunProduct, isReadOnlyAction } from "../../src/runtime/cloud/aliyun-products.js";
import { ConfigError } from "../../src/runtime/errors.js";
import { createAgentRuntime, type RuntimeOptions } from "../../src/runtime/index.js";
import { parseRule, ruleApplies } from "../../src/runtime/permissions/rules.js";
import { aliyunApiTool } from "../../src/runtime/tools/aliyun-api.js";
import { turnTools } from "../../src/runtime/tools/registry.js";
import { rosParameterConstraintsTool } from "../../src/runtime/tools/ros-constraints.js";
import type { ToolContext } from "../../src/runtime/tools/types.js";
import { Workspace } from "../../src/runtime/tools/workspace.js";
import type { AgentRuntime, AgentSession } from "../../src/runtime/seam.js";
import { RosEndpointFixture } from "../fixtures/ros-endpoint.js";
import {
  allowAlways,
  allowOnce,
  deny,
  ofType,
  removeTempDirs,
  silentLogger,
  tempDir,
  TOOLS_SCRIPT,
  turn,
} from "./helpers.js";

const AK = "LTAI5tCloudToolsKey01";
const SECRET = "cloud-tools-secret-0123456789";
const ECS_TEMPLATE = `ROSTemplateFormatVersion: '2015-09-01'
Parameters:
  ZoneInfo:
    Type: String
  InstanceType:
    Type: String
  Name:
    Type: String
Resources:
  Server:
    Type: ALIYUN::ECS::Instance
    Properties:
      ZoneId:
        Ref: ZoneInfo
      InstanceType:
        Ref: InstanceType
      InstanceName:
        Ref: Name
      ImageId: aliyun_3_x64_20G_alibase_20240819.vhd
`;

describe("runtime: Alibaba Cloud tools", () => {
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
    withCredentials = true,
  ): Promise<AgentSession> {
    runtime = await createAgentRuntime({
      configDir: await tempDir(),
      env: withCredentials
        ? { ALIBABA_CLOUD_ACCESS_KEY_ID: AK, ALIBABA_CLOUD_ACCESS_KEY_SECRET: SECRET }
        : {},
      scriptFile: TOOLS_SCRIPT,
      rosEndpoint: ros.url,
      cloudEndpoints: { ecs: ros.url },
      logger: silentLogger(),
      ...options,
    });
    return runtime.openSession({ contextId: "cloud", cwd: await tempDir("iac-ws-") });
  }

  async function context(cwd: string): Promise<ToolContext> {
    const credentials = {
      accessKeyId: AK,
      accessKeySecret: SECRET,
      regionId: "cn-shanghai",
      source: "env" as const,
    };
    return {
      workspace: await Workspace.open(cwd),
      signal: new AbortController().signal,
      toolUseId: "t",
      language: "en",
      progress: () => undefined,
      askUser: () => Promise.reject(new Error("no questions")),
      cloud: {
        credentials,
        ros: new RosClient({ endpoint: ros.url, credentials }),
        api: new AliyunApiClient({ credentials, endpoints: { ecs: ros.url } }),
        pollIntervalMs: 1,
        maxPollMs: 1000,
      },
    };
  }

  it("runs a read (ECS DescribeRegions) in a scripted turn without asking, signed as ECS", async () => {
    const s = await session();
    const events = await turn(s, "[ALIYUN-READ]");
    expect(ofType(events, "input_required")).to.have.length(0);
    expect(ofType(events, "permission_decided").map((d) => d.reason)).to.deep.equal(["read_only"]);
    const result = ofType(events, "tool_result").find((e) => e.name === "aliyun_api");
    expect(result?.isError).to.equal(false);
    expect(result?.result).to.deep.nested.include({ "Regions.Region[1].RegionId": "cn-shanghai" });
    expect(ofType(events, "message_end").at(-1)?.text).to.equal("Regions listed.");
    // The endpoint verified the signature (a rejected call is not counted) and saw ECS's version.
    const [call] = ros.callsOf("DescribeRegions");
    expect(call).to.deep.include({ version: "2014-05-26", accessKeyId: AK });
    expect(call.params).to.deep.equal({ RegionId: "cn-hangzhou" });
  });

  it("asks before a write; a denial sends nothing to the cloud", async () => {
    const s = await session();
    const events = await turn(s, "[ALIYUN-WRITE]", { answer: deny });
    const [request] = ofType(events, "input_required");
    expect(request.request).to.include({
      toolName: "aliyun_api",
      title: "Call ecs:DeleteInstance on Alibaba Cloud.",
      effect: "cloud_change",
      target: "ecs:DeleteInstance",
    });
    expect(ofType(events, "tool_result")[0].isError).to.equal(true);
    expect(ofType(events, "message_end").at(-1)?.text).to.equal("The instance was not deleted.");
    expect(ros.callsOf("DeleteInstance")).to.have.length(0);

    const approved = await turn(s, "[ALIYUN-WRITE]", { answer: allowOnce });
    expect(ofType(approved, "message_end").at(-1)?.text).to.equal("Instance deleted.");
    expect(ros.callsOf("DeleteInstance")[0].params).to.deep.equal({
      InstanceId: "i-fixture01",
      RegionId: "cn-hangzhou",
    });

    // "Allow for this session" remembers the exact operation, nothing wider.
    await turn(s, "[ALIYUN-WRITE]", { answer: allowAlways });
    const remembered = await turn(s, "[ALIYUN-WRITE]");
    expect(ofType(remembered, "input_required")).to.have.length(0);
    expect(ofType(remembered, "permission_decided")[0]).to.include({
      allowed: true,
      reason: "session_rule:aliyun_api(ecs:DeleteInstance)",
    });
    expect(ros.callsOf("DeleteInstance")).to.have.length(3);
  });

  it("refuses a write where nobody can be asked, unless the exact rule allows it", async () => {
    // Auto-approve never covers cloud writes; dont_ask denies what would be asked.
    for (const options of [{ autoApprovePermissions: true }, { permissionMode: "dont_ask" }]) {
      const s = await session({
        ...options,
        // A rule for another operation of the same product does not apply.
        permissionRules: { allow: ["aliyun_api(ecs:StopInstance)"] },
      });
      const events = await turn(s, "[ALIYUN-WRITE]");
      expect(ofType(events, "input_required"), JSON.stringify(options)).to.have.length(0);
      expect(ofType(events, "permission_decided")[0]).to.include({ allowed: false, toolName: "aliyun_api" });
      expect(ofType(events, "message_end").at(-1)?.text).to.equal("The instance was not deleted.");
      await runtime?.close();
      runtime = undefined;
    }
    // bypass does not cover cloud writes either: it still asks.
    const bypass = await session({ permissionMode: "bypass" });
    expect(ofType(await turn(bypass, "[ALIYUN-WRITE]", { answer: deny }), "input_required")).to.have.length(
      1,
    );
    await runtime?.close();
    runtime = undefined;
    expect(ros.callsOf("DeleteInstance")).to.have.length(0);

    const s = await session({
      autoApprovePermissions: true,
      permissionRules: { allow: ["aliyun_api(ECS:DeleteInstance)"] },
    });
    const events = await turn(s, "[ALIYUN-WRITE]");
    expect(ofType(events, "input_required")).to.have.length(0);
    expect(ofType(events, "permission_decided")[0]).to.include({
      allowed: true,
      reason: "allow_rule:aliyun_api(ECS:DeleteInstance)",
    });
    expect(ofType(events, "message_end").at(-1)?.text).to.equal("Instance deleted.");
    expect(ros.callsOf("DeleteInstance")).to.have.length(1);
  });

  it("rejects aliyun_api allow rules that do not name one operation exactly", async () => {
    for (const bad of [
      "aliyun_api",
      "aliyun_api(ecs:*)",
      "aliyun_api(ecs:Delete*)",
      "aliyun_api(DeleteInstance)",
    ]) {
      const error = await createAgentRuntime({
        configDir: await tempDir(),
        env: {},
        scriptFile: TOOLS_SCRIPT,
        permissionRules: { allow: [bad] },
        logger: silentLogger(),
      }).catch((e: unknown) => e);
      expect(error, bad).to.be.instanceOf(ConfigError);
      expect((error as Error).message).to.include("aliyun_api(<product>:<Action>)");
    }
    // Deny rules may use wildcards; the product is compared in lower case.
    const denyAll = parseRule("aliyun_api(ECS:Delete*)", "deny");
    expect(denyAll.pattern).to.equal("ecs:Delete*");
    expect(ruleApplies(denyAll, "aliyun_api", "ecs:DeleteInstance")).to.equal(true);
    const exact = parseRule("aliyun_api(Ecs:DeleteInstance)", "allow");
    expect(ruleApplies(exact, "aliyun_api", "ecs:DeleteInstance", true)).to.equal(true);
    expect(ruleApplies(exact, "aliyun_api", "ecs:DeleteInstances", true)).to.equal(false);
  });

  it("refuses endpoint overrides for unknown products or non-HTTP URLs", async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [
        { oss: "http://127.0.0.1:1" },
        "cloudEndpoints.oss: unknown product (ros, ecs, vpc, slb, rds, ram, sts).",
      ],
      [{ ecs: "file:///etc/passwd" }, "cloudEndpoints.ecs: expected an http(s) URL."],
      [{ vpc: "not a url" }, "cloudEndpoints.vpc: expected an http(s) URL."],
    ];
    for (const [cloudEndpoints, message] of cases) {
      const error = await createAgentRuntime({
        configDir: await tempDir(),
        env: {},
        scriptFile: TOOLS_SCRIPT,
        cloudEndpoints,
        logger: silentLogger(),
      }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(ConfigError);
      expect(error).to.have.property("message", message);
    }
  });

  it("classifies reads by prefix, and ROS PreviewStack as a read", () => {
    expect(isReadOnlyAction("ecs", "DescribeInstances")).to.equal(true);
    expect(isReadOnlyAction("ram", "ListUsers")).to.equal(true);
    expect(isReadOnlyAction("ros", "GetStack")).to.equal(true);
    expect(isReadOnlyAction("ros", "PreviewStack")).to.equal(true);
    expect(isReadOnlyAction("ecs", "PreviewStack")).to.equal(false);
    expect(isReadOnlyAction("ecs", "DeleteInstance")).to.equal(false);
    expect(isReadOnlyAction("ecs", "Getaway")).to.equal(false);
    expect(isReadOnlyAction("sts", "AssumeRole")).to.equal(false);
  });

  it("returns the cloud's error code and message as a tool error, never the credentials", async () => {
    const ctx = await context(await tempDir("iac-ws-"));
    ros.failNext(
      "DescribeInstances",
      403,
      "Forbidden.RAM",
      `User not authorized to operate on the specified resource (key secret ${SECRET}).`,
    );
    const error = await aliyunApiTool
      .run({ product: "ecs", action: "DescribeInstances", params: { PageSize: 10 } }, ctx)
      .catch((e: unknown) => e);
    expect((error as Error).message).to.match(
      /^ecs:DescribeInstances failed: Forbidden\.RAM: User not authorized to operate on the specified resource \(key secret \[REDACTED\]\)\. \(RequestId [0-9A-F-]+\)$/,
    );
    expect((error as Error).message).not.to.include(SECRET);

    // ROS actions go through the ROS client (version 2019-09-10) with the caller's region.
    const regions = await aliyunApiTool.run({ product: "ros", action: "DescribeRegions" }, ctx);
    expect(regions.data).to.deep.nested.include({ "Regions[0].RegionId": "cn-hangzhou" });
    expect(ros.callsOf("DescribeRegions")[0]).to.deep.include({
      version: "2019-09-10",
      params: { RegionId: "cn-shanghai" },
    });

    // A wrong secret: the endpoint rejects the signature, and the tool says so.
    const wrong = await context(ctx.workspace.cwd);
    const creds = { ...wrong.cloud!.credentials, accessKeySecret: "not-the-secret" };
    wrong.cloud = {
      ...wrong.cloud!,
      api: new AliyunApiClient({ credentials: creds, endpoints: { ecs: ros.url } }),
    };
    const mismatch = await aliyunApiTool
      .run({ product: "ecs", action: "DescribeRegions" }, wrong)
      .catch((e: unknown) => e);
    expect((mismatch as Error).message).to.match(/^ecs:DescribeRegions failed: SignatureDoesNotMatch: /);
    expect(ros.calls.at(-1)?.rejected).to.equal("signature mismatch");
  });

  it("resolves table endpoints by region, and never builds a host from a region that is not one", async () => {
    const credentials = {
      accessKeyId: AK,
      accessKeySecret: SECRET,
      regionId: "cn-hangzhou",
      source: "env" as const,
    };
    expect(aliyunProduct("ECS")?.host("cn-shanghai")).to.equal("ecs.cn-shanghai.aliyuncs.com");
    expect(aliyunProduct("ram")?.host("cn-shanghai")).to.equal("ram.aliyuncs.com");
    expect(aliyunProduct("oss")).to.equal(undefined);
    // No endpoint override: the request would leave for *.aliyuncs.com, so a hostile region stops it first.
    const client = new AliyunApiClient({ credentials });
    const error = await client
      .call(
        { product: "ecs", action: "DescribeRegions", params: {}, regionId: "evil.example#" },
        new AbortController().signal,
      )
      .catch((e: unknown) => e);
    expect(error).to.include({
      code: "InvalidRegionId",
      message: 'Region "evil.example#" is not a region id.',
    });
    // A per-request region applies to the server's credentials, and is checked the same way.
    const ctx = await context(await tempDir("iac-ws-"));
    ctx.cloud!.credentials = { ...ctx.cloud!.credentials, regionId: "x.evil.example/" };
    ctx.cloud!.api = new AliyunApiClient({ credentials: ctx.cloud!.credentials });
    const viaTool = await aliyunApiTool
      .run({ product: "vpc", action: "DescribeVpcs" }, ctx)
      .catch((e: unknown) => e);
    expect(viaTool).to.have.property(
      "message",
      'vpc:DescribeVpcs failed: InvalidRegionId: Region "x.evil.example/" is not a region id.',
    );
  });

  it("keeps credentials in cloud answers out of the tool result", async () => {
    const ctx = await context(await tempDir("iac-ws-"));
    ctx.cloud!.api = {
      call: () =>
        Promise.resolve({
          RequestId: "r-1",
          Credentials: {
            AccessKeyId: "STS.NTestAssumedKey01",
            AccessKeySecret: "assumed-secret-value",
            SecurityToken: "tok-value",
          },
        }),
    };
    const result = await aliyunApiTool.run(
      {
        product: "sts",
        action: "AssumeRole",
        params: { RoleArn: "acs:ram::1:role/x", RoleSessionName: "s" },
      },
      ctx,
    );
    expect(result.content).not.to.match(/assumed-secret-value|tok-value|NTestAssumedKey01/);
    expect(result.content).to.include("[REDACTED]");
    // A redacted number leaves text that is no longer JSON: the result is that text.
    ctx.cloud!.api = { call: () => Promise.resolve({ Token: 12345678, Other: 1 }) };
    const numeric = await aliyunApiTool.run({ product: "sts", action: "GetCallerIdentity" }, ctx);
    expect(numeric.content).not.to.include("12345678");
    expect(numeric.data).to.equal(numeric.content);
  });

  it("registers aliyun_api and ros_get_template_parameter_constraints only with a credential", async () => {
    const names = (withCloud: boolean) => turnTools(withCloud, new Map()).map((t) => t.name);
    expect(names(false)).to.include("terraform_package_ros_template");
    expect(names(false)).not.to.include.members(["aliyun_api"]);
    expect(names(false)).not.to.include("ros_get_template_parameter_constraints");
    expect(names(true)).to.include.members([
      "aliyun_api",
      "ros_get_template_parameter_constraints",
      "terraform_package_ros_template",
    ]);

    const s = await session({}, false);
    const without = await turn(s, "[ALIYUN-READ]");
    expect(String(ofType(without, "tool_result")[0].result)).to.match(
      /^Unknown tool aliyun_api\. Available tools: .*terraform_package_ros_template\.$/,
    );
    expect(ros.calls).to.have.length(0);
    // Per-request credentials register it for that turn.
    const withCreds = await turn(s, "[ALIYUN-READ]", {
      overrides: { alibabaCloud: { accessKeyId: AK, accessKeySecret: SECRET, regionId: "cn-beijing" } },
    });
    expect(ofType(withCreds, "message_end").at(-1)?.text).to.equal("Regions listed.");
    expect(ros.callsOf("DescribeRegions")[0].params).to.deep.equal({ RegionId: "cn-beijing" });
  });

  it("ros_get_template_parameter_constraints returns the allowed values ROS reports", async () => {
    const cwd = await tempDir("iac-ws-");
    await writeFile(path.join(cwd, "ecs.yaml"), ECS_TEMPLATE);
    const ctx = await context(cwd);
    const result = await rosParameterConstraintsTool.run(
      {
        path: "ecs.yaml",
        parameters_key_filter: ["ZoneInfo", "InstanceType"],
        parameters: { ZoneInfo: "cn-shanghai-h" },
      },
      ctx,
    );
    const data = result.data as { template: string; constraints: Array<Record<string, unknown>> };
    expect(data.template).to.equal("ecs.yaml");
    expect(data.constraints).to.have.length(2);
    expect(data.constraints[0]).to.deep.equal({
      parameterKey: "ZoneInfo",
      type: "String",
      allowedValues: ["cn-shanghai-h", "cn-shanghai-i", "cn-shanghai-j", "cn-shanghai-k"],
    });
    expect(data.constraints[1]).to.deep.include({
      parameterKey: "InstanceType",
      associationParameterNames: ["ZoneInfo"],
    });
    expect(data.constraints[1].allowedValues).to.include("ecs.g7.large");
    expect(ros.callsOf("GetTemplateParameterConstraints")[0].params).to.include({
      RegionId: "cn-shanghai",
      "ParametersKeyFilter.1": "ZoneInfo",
      "ParametersKeyFilter.2": "InstanceType",
      "Parameters.1.ParameterKey": "ZoneInfo",
      "Parameters.1.ParameterValue": "cn-shanghai-h",
      TemplateBody: ECS_TEMPLATE,
    });

    ros.failNext("GetTemplateParameterConstraints", 400, "InvalidTemplate", "Template format error.");
    const failed = await rosParameterConstraintsTool.run({ path: "ecs.yaml" }, ctx).catch((e: unknown) => e);
    expect((failed as Error).message).to.match(
      /^ROS GetTemplateParameterConstraints failed: InvalidTemplate: Template format error\./,
    );
  });

  it("the simulated endpoint answers GetTemplateParameterConstraints and refuses what it does not simulate", async () => {
    const cwd = await tempDir("iac-ws-");
    const ctx: ToolContext = { ...(await context(cwd)), cloud: simulatedCloud(new SimulatedRos()) };
    const result = await rosParameterConstraintsTool.run({ template_body: ECS_TEMPLATE }, ctx);
    const constraints = (result.data as { constraints: Array<Record<string, unknown>> }).constraints;
    expect(constraints.map((c) => c.parameterKey)).to.deep.equal(["ZoneInfo", "InstanceType", "Name"]);
    expect(constraints[0].allowedValues).to.deep.equal([
      "cn-hangzhou-h",
      "cn-hangzhou-i",
      "cn-hangzhou-j",
      "cn-hangzhou-k",
    ]);
    // InstanceName has no catalogue of values: ROS says it does not support the query.
    expect(constraints[2]).to.include({ parameterKey: "Name", behavior: "NotSupport" });

    const ecs = await aliyunApiTool
      .run({ product: "ecs", action: "DescribeRegions" }, ctx)
      .catch((e: unknown) => e);
    expect((ecs as Error).message).to.equal(
      "ecs:DescribeRegions failed: InvalidAction.NotFound: The simulated Alibaba Cloud endpoint does not offer ecs DescribeRegions (demo mode).",
    );
  });
});
