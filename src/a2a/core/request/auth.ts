// HTTP authentication: bearer token, Basic, API key. Any configured scheme may
// satisfy a request; comparisons are constant-time (server/bearer.ts). The matched principal is
// the owner scope of the caller's tasks and contexts.
import { isStrictBase64 } from "../../../server/base64.js";
import { bearerMatches, credentialsOf, safeEqual } from "../../../server/bearer.js";

export interface AuthSettings {
  token?: string;
  basicUsername?: string;
  basicPassword?: string;
  apiKey?: string;
  apiKeyHeader: string;
}

export interface AuthResult {
  owner: string;
  authenticated: boolean;
}

export class Authenticator {
  constructor(private readonly settings: AuthSettings) {}

  get bearerEnabled(): boolean {
    return Boolean(this.settings.token);
  }
  get basicEnabled(): boolean {
    return Boolean(this.settings.basicUsername) && Boolean(this.settings.basicPassword);
  }
  get apiKeyEnabled(): boolean {
    return Boolean(this.settings.apiKey);
  }
  get enabled(): boolean {
    return this.bearerEnabled || this.basicEnabled || this.apiKeyEnabled;
  }
  get apiKeyHeader(): string {
    return this.settings.apiKeyHeader;
  }

  /**
   * Checks the request headers (lower-case names). Returns the caller, or
   * undefined when auth is on and no scheme matched.
   */
  authenticate(header: (name: string) => string | undefined): AuthResult | undefined {
    if (!this.enabled) return { owner: "", authenticated: false };
    const authorization = header("authorization") ?? "";
    if (this.bearerEnabled && bearerMatches(authorization, this.settings.token ?? ""))
      return { owner: "bearer", authenticated: true };
    const basic = this.basicEnabled ? credentialsOf(authorization, "Basic") : undefined;
    if (basic !== undefined) {
      const user = this.checkBasic(basic);
      if (user !== undefined) return { owner: `basic:${user}`, authenticated: true };
    }
    if (this.apiKeyEnabled) {
      const presented = header(this.settings.apiKeyHeader.toLowerCase());
      if (presented !== undefined && safeEqual(presented, this.settings.apiKey ?? "")) {
        return { owner: `api-key:${this.settings.apiKeyHeader}`, authenticated: true };
      }
    }
    return undefined;
  }

  private checkBasic(encoded: string): string | undefined {
    const trimmed = encoded.trim();
    if (!isStrictBase64(trimmed)) return undefined;
    const decoded = Buffer.from(trimmed, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon <= 0 || colon === decoded.length - 1) return undefined;
    const user = decoded.slice(0, colon);
    const pass = decoded.slice(colon + 1);
    // Both comparisons always run, so timing does not tell which half was wrong.
    const userOk = safeEqual(user, this.settings.basicUsername ?? "");
    const passOk = safeEqual(pass, this.settings.basicPassword ?? "");
    return userOk && passOk ? user : undefined;
  }
}
