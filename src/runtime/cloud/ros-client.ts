// A small ROS (2019-09-10) OpenAPI client: RPC-style POST requests with the
// parameters form-encoded in the body, signed with ACS3-HMAC-SHA256.
import type { AlibabaCloudCredentials } from "./credentials.js";
import { signedRpcCall } from "./rpc-call.js";

export { AliyunApiError as RosApiError, flattenParams } from "./rpc-call.js";

export const ROS_API_VERSION = "2019-09-10";
export const DEFAULT_ROS_ENDPOINT = "https://ros.aliyuncs.com";

/** What the ROS tools call: the signed client, or the demo's simulated endpoint. */
export interface RosApi {
  call(
    action: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>;
}

export interface RosClientOptions {
  credentials: AlibabaCloudCredentials;
  endpoint?: string;
  timeoutMs?: number;
}

export class RosClient implements RosApi {
  readonly endpoint: URL;
  private readonly timeoutMs: number;

  constructor(private readonly options: RosClientOptions) {
    this.endpoint = new URL(options.endpoint ?? DEFAULT_ROS_ENDPOINT);
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  get regionId(): string {
    return this.options.credentials.regionId;
  }

  call(
    action: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    return signedRpcCall({
      endpoint: this.endpoint,
      version: ROS_API_VERSION,
      action,
      params,
      credentials: this.options.credentials,
      signal,
      timeoutMs: this.timeoutMs,
      label: "ROS",
    });
  }
}
