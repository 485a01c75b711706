// One signed RPC-style Alibaba Cloud OpenAPI call (ACS3-HMAC-SHA256): POST
// "/", parameters form-encoded in the body, action and version in x-acs-*
// headers. Shared by the ROS client and the generic aliyun_api caller.
import { randomUUID } from "node:crypto";
import { abortError } from "../abort.js";
import { authorization, percentEncode, sha256Hex } from "./acs3-signer.js";
import type { AlibabaCloudCredentials } from "./credentials.js";

/** An error answered by the cloud (Code/Message/RequestId) or a transport failure (code NetworkError). */
export class AliyunApiError extends Error {
  override name = "AliyunApiError";
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

export interface RpcCall {
  endpoint: URL;
  version: string;
  action: string;
  params: Record<string, unknown>;
  credentials: AlibabaCloudCredentials;
  signal: AbortSignal;
  timeoutMs: number;
  /** Names the API in transport errors, e.g. "ROS" or "ecs". */
  label: string;
}

export async function signedRpcCall(call: RpcCall): Promise<Record<string, unknown>> {
  const { credentials, endpoint, action, signal } = call;
  const flat = flattenParams(call.params);
  const body = Object.keys(flat)
    .sort()
    .map((k) => `${percentEncode(k)}=${percentEncode(flat[k])}`)
    .join("&");
  const headers: Record<string, string> = {
    host: endpoint.host,
    "content-type": "application/x-www-form-urlencoded",
    "x-acs-action": action,
    "x-acs-version": call.version,
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
  const timeout = AbortSignal.timeout(call.timeoutMs);
  let response: Response;
  try {
    response = await fetch(new URL("/", endpoint), {
      method: "POST",
      headers: sent,
      body,
      signal: AbortSignal.any([signal, timeout]),
    });
  } catch {
    if (signal.aborted) throw abortError();
    const reason = timeout.aborted ? "request timed out" : "connection failed";
    throw new AliyunApiError("NetworkError", `${call.label} ${action}: ${reason}`);
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
    throw new AliyunApiError(
      code,
      message,
      response.status,
      typeof data?.RequestId === "string" ? data.RequestId : undefined,
    );
  }
  return data;
}
