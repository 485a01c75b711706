// Alibaba Cloud OpenAPI signature V3 (ACS3-HMAC-SHA256).
// CanonicalRequest = method \n uri \n sorted query \n canonical headers \n
// signed header names \n hex(sha256(body)); the string to sign is
// "ACS3-HMAC-SHA256\n" + hex(sha256(CanonicalRequest)); the signature is
// hex(HMAC-SHA256(AccessKeySecret, StringToSign)).
import { createHash, createHmac } from "node:crypto";

export const ACS3_ALGORITHM = "ACS3-HMAC-SHA256";

/** RFC 3986 encoding as Alibaba Cloud expects it (space %20, * %2A, ~ kept). */
export function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

export function canonicalQuery(query: Record<string, string>): string {
  return Object.keys(query)
    .sort()
    .map((k) => `${percentEncode(k)}=${percentEncode(query[k])}`)
    .join("&");
}

export interface SignableRequest {
  method: string;
  /** Canonical URI, "/" for RPC-style APIs. */
  path: string;
  query: Record<string, string>;
  /** Header names in any case; host, content-type and x-acs-* are signed. */
  headers: Record<string, string>;
  body: string;
}

function signedHeaderMap(headers: Record<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === "host" || lower === "content-type" || lower.startsWith("x-acs-"))
      out.set(lower, value.trim());
  }
  return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function canonicalRequest(request: SignableRequest): { text: string; signedHeaders: string } {
  const headers = signedHeaderMap(request.headers);
  const canonicalHeaders = [...headers.entries()].map(([k, v]) => `${k}:${v}\n`).join("");
  const signedHeaders = [...headers.keys()].join(";");
  const text = [
    request.method.toUpperCase(),
    request.path,
    canonicalQuery(request.query),
    canonicalHeaders,
    signedHeaders,
    sha256Hex(request.body),
  ].join("\n");
  return { text, signedHeaders };
}

/** The Authorization header value for a request whose x-acs-* headers are already set. */
export function authorization(
  request: SignableRequest,
  accessKeyId: string,
  accessKeySecret: string,
): string {
  const { text, signedHeaders } = canonicalRequest(request);
  const stringToSign = `${ACS3_ALGORITHM}\n${sha256Hex(text)}`;
  const signature = createHmac("sha256", accessKeySecret).update(stringToSign).digest("hex");
  return `${ACS3_ALGORITHM} Credential=${accessKeyId},SignedHeaders=${signedHeaders},Signature=${signature}`;
}
