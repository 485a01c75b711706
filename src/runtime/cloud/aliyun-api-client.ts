// The generic Alibaba Cloud caller behind `aliyun_api` for the products of
// the table (aliyun-products.ts) other than ROS, which goes through the ROS
// client of the turn (so the demo's simulated endpoint answers it too).
import { aliyunProduct, REGION_ID } from "./aliyun-products.js";
import type { AlibabaCloudCredentials } from "./credentials.js";
import { AliyunApiError, signedRpcCall } from "./rpc-call.js";

export interface AliyunApiRequest {
  /** Product code of the table, lower case. */
  product: string;
  action: string;
  params: Record<string, unknown>;
  regionId: string;
}

export interface AliyunApi {
  call(request: AliyunApiRequest, signal: AbortSignal): Promise<Record<string, unknown>>;
}

export interface AliyunApiClientOptions {
  credentials: AlibabaCloudCredentials;
  /** Product code → base URL, replacing the table's host (tests, private gateways). */
  endpoints?: Readonly<Record<string, string | undefined>>;
  timeoutMs?: number;
}

export class AliyunApiClient implements AliyunApi {
  constructor(private readonly options: AliyunApiClientOptions) {}

  call(request: AliyunApiRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
    const product = aliyunProduct(request.product);
    if (!product) {
      return Promise.reject(
        new AliyunApiError("InvalidProduct", `Product ${request.product} is not in the aliyun_api table.`),
      );
    }
    // The region becomes part of a host name: anything but a plain region id could send the
    // signed request (and an STS token) elsewhere, e.g. a per-request region "evil.example#".
    if (!REGION_ID.test(request.regionId)) {
      return Promise.reject(
        new AliyunApiError(
          "InvalidRegionId",
          `Region ${JSON.stringify(request.regionId)} is not a region id.`,
        ),
      );
    }
    const override = this.options.endpoints?.[product.code];
    const endpoint = new URL(override ?? `https://${product.host(request.regionId)}`);
    return signedRpcCall({
      endpoint,
      version: product.version,
      action: request.action,
      params: request.params,
      credentials: this.options.credentials,
      signal,
      timeoutMs: this.options.timeoutMs ?? 30_000,
      label: product.code,
    });
  }
}
