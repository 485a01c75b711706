// The few Alibaba Cloud API answers demo mode needs besides ROS, from a fixed
// catalogue: DescribeVpcs (the VPCs a resource selector offers; two regions
// have some, the others none) and GetCallerIdentity (the account a stack
// group deploys to). Like the simulated ROS endpoint, every answer is marked
// (RequestId "simulated-…", Simulated: true) and anything else is refused.
import { randomUUID } from "node:crypto";
import { sleep } from "../abort.js";
import type { AliyunApi, AliyunApiRequest } from "./aliyun-api-client.js";
import { AliyunApiError } from "./rpc-call.js";
import { SIMULATED_ACCOUNT_ID } from "./simulated-stack-groups.js";

/** Region -> its simulated VPCs. */
const VPCS: Record<
  string,
  Array<{ VpcId: string; VpcName: string; CidrBlock: string; IsDefault: boolean }>
> = {
  "cn-hangzhou": [
    { VpcId: "vpc-sim1demo0001", VpcName: "demo-vpc", CidrBlock: "192.168.0.0/16", IsDefault: true },
    { VpcId: "vpc-sim1demo0002", VpcName: "staging-vpc", CidrBlock: "10.0.0.0/16", IsDefault: false },
  ],
  "cn-beijing": [
    { VpcId: "vpc-sim2demo0001", VpcName: "demo-vpc", CidrBlock: "172.16.0.0/12", IsDefault: true },
  ],
};

export class SimulatedAliyunApi implements AliyunApi {
  async call(request: AliyunApiRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
    await sleep(20, signal);
    const base = { RequestId: `simulated-${randomUUID()}`, Simulated: true };
    const key = `${request.product}:${request.action}`;
    switch (key) {
      case "vpc:DescribeVpcs": {
        const vpcs = (VPCS[request.regionId] ?? []).map((v) => ({
          ...v,
          RegionId: request.regionId,
          Status: "Available",
        }));
        return {
          ...base,
          TotalCount: vpcs.length,
          PageNumber: 1,
          PageSize: 50,
          Vpcs: { Vpc: vpcs },
        };
      }
      case "sts:GetCallerIdentity":
        return {
          ...base,
          AccountId: SIMULATED_ACCOUNT_ID,
          IdentityType: "Account",
          Arn: `acs:ram::${SIMULATED_ACCOUNT_ID}:root`,
        };
      default:
        throw new AliyunApiError(
          "InvalidAction.NotFound",
          `The simulated Alibaba Cloud endpoint does not offer ${request.product} ${request.action} (demo mode).`,
          400,
        );
    }
  }
}
