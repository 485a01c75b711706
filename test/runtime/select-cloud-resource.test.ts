// select_cloud_resource against Alibaba Cloud (the local endpoint fixture,
// which checks every signature): the VPCs come from a signed VPC
// DescribeVpcs in the region, the question is a cloud_resource_selection with
// the vpc.vpc selector (not marked simulated), its answer becomes the result,
// and a tool run again after a restart asks the same question without listing again.
import { expect } from "chai";
import { AliyunApiClient } from "../../src/runtime/cloud/aliyun-api-client.js";
import { RosClient } from "../../src/runtime/cloud/ros-client.js";
import type { InputAnswer, InputRequest } from "../../src/runtime/seam.js";
import { selectCloudResourceTool } from "../../src/runtime/tools/select-cloud-resource.js";
import type { ToolContext } from "../../src/runtime/tools/types.js";
import { Workspace } from "../../src/runtime/tools/workspace.js";
import { RosEndpointFixture } from "../fixtures/ros-endpoint.js";
import { removeTempDirs, tempDir } from "./helpers.js";

const AK = "LTAI5tSelectorKeyId01";
const SECRET = "selector-fixture-secret-0123456789";

describe("runtime: select_cloud_resource against Alibaba Cloud", () => {
  let endpoint: RosEndpointFixture;
  beforeEach(async () => {
    endpoint = await RosEndpointFixture.start({ [AK]: SECRET });
  });
  afterEach(async () => {
    await endpoint.close();
    await removeTempDirs();
  });

  async function context(
    answer: (request: InputRequest) => InputAnswer,
    asked?: InputRequest,
  ): Promise<{
    ctx: ToolContext;
    questions: InputRequest[];
  }> {
    const credentials = {
      accessKeyId: AK,
      accessKeySecret: SECRET,
      regionId: "cn-shanghai",
      source: "env" as const,
    };
    const questions: InputRequest[] = [];
    const ctx: ToolContext = {
      workspace: await Workspace.open(await tempDir("iac-ws-")),
      signal: new AbortController().signal,
      toolUseId: "toolu_vpc",
      language: "en",
      progress: () => undefined,
      askUser: (request) => {
        questions.push(request);
        return Promise.resolve(answer(request));
      },
      asked: (inputId) => (asked?.inputId === inputId ? asked : undefined),
      cloud: {
        credentials,
        ros: new RosClient({ endpoint: endpoint.url, credentials }),
        api: new AliyunApiClient({ credentials, endpoints: { vpc: endpoint.url } }),
        pollIntervalMs: 1,
        maxPollMs: 1000,
      },
    };
    return { ctx, questions };
  }

  it("lists the region's VPCs with a signed DescribeVpcs and asks which one", async () => {
    const { ctx, questions } = await context((request) => ({
      kind: "cloud_resource_selection",
      inputId: request.inputId,
      value: "vpc-fixture0001",
      label: "fixture-vpc (172.16.0.0/12)",
    }));
    const result = await selectCloudResourceTool.run({ selector: "vpc.vpc", parameter: "VpcId" }, ctx);
    const [call] = endpoint.callsOf("DescribeVpcs");
    expect(call.params).to.include({ RegionId: "cn-shanghai" });
    expect(questions).to.have.length(1);
    expect(questions[0]).to.deep.include({
      inputId: "select-toolu_vpc",
      kind: "cloud_resource_selection",
      options: [{ id: "vpc-fixture0001", label: "fixture-vpc (172.16.0.0/12)" }],
      selector: {
        id: "vpc.vpc",
        parameter: "VpcId",
        resourceType: "ALIYUN::ECS::VPC",
        source: { provider: "aliyun", product: "vpc", action: "DescribeVpcs", regionId: "cn-shanghai" },
      },
    });
    expect(questions[0].prompt).to.equal(
      "Which VPC in cn-shanghai should the stack use? Choose none to let the template create a new one.",
    );
    expect(result.data).to.deep.include({ status: "selected", value: "vpc-fixture0001" });
    expect(result.content).to.equal(
      "The user chose vpc-fixture0001 (fixture-vpc (172.16.0.0/12)) for VpcId. Use VpcId=vpc-fixture0001.",
    );
  });

  it("run again after a restart, it asks the question it asked before without listing again", async () => {
    const first = await context((request) => ({
      kind: "cloud_resource_selection",
      inputId: request.inputId,
      cancelled: true,
    }));
    await selectCloudResourceTool.run({ selector: "vpc.vpc" }, first.ctx);
    const before = first.questions[0];
    const again = await context(
      (request) => ({
        kind: "cloud_resource_selection",
        inputId: request.inputId,
        cancelled: true,
        optionsEmpty: false,
      }),
      before,
    );
    const result = await selectCloudResourceTool.run({ selector: "vpc.vpc" }, again.ctx);
    expect(endpoint.callsOf("DescribeVpcs")).to.have.length(1);
    expect(again.questions).to.deep.equal([before]);
    expect(result.data).to.deep.equal({ status: "canceled", selectorId: "vpc.vpc", parameter: "VpcId" });
  });

  it("a cloud error while listing is the tool's error, with the cloud's code", async () => {
    endpoint.failNext("DescribeVpcs", 403, "Forbidden.RAM", "The user is not authorized to list VPCs.");
    const { ctx, questions } = await context(() => {
      throw new Error("not asked");
    });
    const failed = await selectCloudResourceTool.run({ selector: "vpc.vpc" }, ctx).catch((e: unknown) => e);
    expect((failed as Error).message).to.match(
      /^vpc:DescribeVpcs failed: Forbidden\.RAM: The user is not authorized to list VPCs\./,
    );
    expect(questions).to.deep.equal([]);
  });
});
