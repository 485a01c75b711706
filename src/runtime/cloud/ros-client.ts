// A small ROS (2019-09-10) OpenAPI client: RPC-style POST requests with the
// parameters form-encoded in the body, signed with ACS3-HMAC-SHA256.
import { randomUUID } from "node:crypto";
import { abortError } from "../abort.js";
import { percentEncode, sha256Hex, authorization } from "./acs3-signer.js";
import type { AlibabaCloudCredentials } from "./credentials.js";

export const ROS_API_VERSION = "2019-09-10";
export const DEFAULT_ROS_ENDPOINT = "https://ros.aliyuncs.com";

/** An error answered by ROS (Code/Message/RequestId) or a transport failure (code NetworkError). */
export class RosApiError extends Error {
  override name = "RosApiError";
  constructor(
    readonly code: string,
    message: string,
    readonly httpStatus?: number,
    readonly requestId?: string,
  ) {
    super(message);
  }
}

/** Flattens nested parameters the RPC way: Parameters.1.ParameterKey=... */
export function flattenParams(
  params: Record<string, unknown>,
  prefix = "",
  out: Record<string, string> = {},
) {
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    const name = prefix ? `${prefix}.${key}` : key;
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        if (item !== null && typeof item === "object") {
          flattenParams(item as Record<string, unknown>, `${name}.${i + 1}`, out);
        } else if (item !== undefined && item !== null) {
          out[`${name}.${i + 1}`] = String(item);
        }
      });
    } else if (typeof value === "object") {
      flattenParams(value as Record<string, unknown>, name, out);
    } else if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      out[name] = String(value);
    }
  }
  return out;
}

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

  async call(
    action: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const { credentials } = this.options;
    const flat = flattenParams(params);
    const body = Object.keys(flat)
      .sort()
      .map((k) => `${percentEncode(k)}=${percentEncode(flat[k])}`)
      .join("&");
    const headers: Record<string, string> = {
      host: this.endpoint.host,
      "content-type": "application/x-www-form-urlencoded",
      "x-acs-action": action,
      "x-acs-version": ROS_API_VERSION,
      "x-acs-date": new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
      "x-acs-signature-nonce": randomUUID(),
      "x-acs-content-sha256": sha256Hex(body),
      ...(credentials.securityToken ? { "x-acs-security-token": credentials.securityToken } : {}),
    };
    headers.authorization = authorization(
      { method: "POST", path: "/", query: {}, headers, body },
      credentials.accessKeyId,
      credentials.accessKeySecret,
    );
    const { host: _host, ...sent } = headers;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    try {
      response = await fetch(new URL("/", this.endpoint), {
        method: "POST",
        headers: sent,
        body,
        signal: AbortSignal.any([signal, timeout]),
      });
    } catch {
      if (signal.aborted) throw abortError();
      const reason = timeout.aborted ? "request timed out" : "connection failed";
      throw new RosApiError("NetworkError", `ROS ${action}: ${reason}`);
    }
    const text = await response.text();
    let data: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
        data = parsed as Record<string, unknown>;
    } catch {
      data = undefined;
    }
    if (!response.ok || !data || typeof data.Code === "string") {
      const code = typeof data?.Code === "string" ? data.Code : `HTTP${response.status}`;
      const message =
        typeof data?.Message === "string" ? data.Message : `unexpected response (${response.status})`;
      throw new RosApiError(
        code,
        message,
        response.status,
        typeof data?.RequestId === "string" ? data.RequestId : undefined,
      );
    }
    return data;
  }
}
