// HTTP authentication: bearer token, Basic, API key, and JWTs of an identity
// provider (server/jwt-auth.ts). Any configured scheme may satisfy a request;
// comparisons are constant-time (server/bearer.ts). The matched principal is
// the owner scope of the caller's tasks and contexts (`jwt:<iss>|<sub>` for a JWT).
import { isStrictBase64 } from "../../../server/base64.js";
import { bearerMatches, credentialsOf, safeEqual } from "../../../server/bearer.js";
import { bearerChallenge, JwtVerifier, looksLikeJwt, type JwtSettings } from "../../../server/jwt-auth.js";

export interface AuthSettings {
  token?: string;
  basicUsername?: string;
  basicPassword?: string;
  apiKey?: string;
  apiKeyHeader: string;
  /** Bearer JWTs verified against an identity provider's key set. */
  jwt?: JwtSettings;
}

export interface AuthResult {
  owner: string;
  authenticated: boolean;
}

/** The outcome of a request's check: its caller, or the WWW-Authenticate challenge of the 401. */
export type AuthCheck = { ok: true; caller: AuthResult } | { ok: false; challenge?: string };

export class Authenticator {
  private readonly jwt?: JwtVerifier;

  /** `onKeySetError`: told when the identity provider's key set cannot be fetched. */
  constructor(
    private readonly settings: AuthSettings,
    onKeySetError?: (error: unknown) => void,
  ) {
    if (settings.jwt) this.jwt = new JwtVerifier(settings.jwt, onKeySetError);
  }

  /** The JWT settings (the card declares them), when JWT sign-in is on. */
  get jwtSettings(): JwtSettings | undefined {
    return this.jwt?.settings;
  }

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
    return this.bearerEnabled || this.basicEnabled || this.apiKeyEnabled || this.jwt !== undefined;
  }
  get apiKeyHeader(): string {
    return this.settings.apiKeyHeader;
  }

  /**
   * Checks the request headers (lower-case names) against every configured
   * scheme, a bearer JWT last. A refusal carries the 401's WWW-Authenticate
   * value when a bearer scheme is on (with the reason a presented JWT failed).
   */
  async check(header: (name: string) => string | undefined): Promise<AuthCheck> {
    const caller = this.authenticate(header);
    if (caller) return { ok: true, caller };
    const token = this.jwt && credentialsOf(header("authorization"), "Bearer");
    if (this.jwt && token !== undefined && looksLikeJwt(token)) {
      const verified = await this.jwt.verify(token);
      if (verified.ok) return { ok: true, caller: { owner: verified.owner, authenticated: true } };
      return { ok: false, challenge: bearerChallenge(verified.reason) };
    }
    return { ok: false, challenge: this.jwt || this.bearerEnabled ? bearerChallenge() : undefined };
  }

  /**
   * The static schemes only (token, Basic, API key): the caller, or
   * undefined when auth is on and none matched.
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
