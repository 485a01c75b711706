// Request headers for auth and versioning. Bearer beats Basic (which needs
// both username and password); an API key header is added in addition.
// Every call says A2A-Version: 1.0.

export interface AuthSettings {
  token?: string;
  basicUsername?: string;
  basicPassword?: string;
  apiKey?: string;
  /** Default X-API-Key. */
  apiKeyHeader?: string;
}

export const A2A_VERSION = "1.0";
export const DEFAULT_API_KEY_HEADER = "X-API-Key";

export function authHeaders(auth: AuthSettings): Record<string, string> {
  const headers: Record<string, string> = {};
  if (auth.token) headers.Authorization = `Bearer ${auth.token}`;
  else if (auth.basicUsername && auth.basicPassword) {
    const pair = Buffer.from(`${auth.basicUsername}:${auth.basicPassword}`, "utf8").toString("base64");
    headers.Authorization = `Basic ${pair}`;
  }
  if (auth.apiKey) headers[auth.apiKeyHeader || DEFAULT_API_KEY_HEADER] = auth.apiKey;
  return headers;
}

export function requestHeaders(auth: AuthSettings): Record<string, string> {
  return { ...authHeaders(auth), "A2A-Version": A2A_VERSION };
}
