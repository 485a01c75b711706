// Who may call the adapter's POST /, the cancel extension and /metrics: the
// static bearer token (auth-token) and/or a bearer JWT of an identity provider
// (auth-jwks-url, server/jwt-auth.ts); either passes. A JWT's identity
// (`jwt:<iss>|<sub>`) is the run's user: the thread binding compares it
// (agui-iaccode.md §2.5 step 8), so another user's thread is refused.
import { bearerMatches, credentialsOf } from "../../server/bearer.js";
import { bearerChallenge, JwtVerifier, looksLikeJwt, type JwtSettings } from "../../server/jwt-auth.js";
import { AguiError, MSG } from "../errors.js";

/** 401 UNAUTHORIZED with the WWW-Authenticate value to send. */
export class UnauthorizedError extends AguiError {
  constructor(readonly challenge: string) {
    super("UNAUTHORIZED", MSG.unauthorized);
  }
}

/** The caller of a request that passed: `user` is a JWT's identity (none for the static token). */
export interface AguiCaller {
  user?: string;
}

export class AguiAuth {
  private readonly jwt?: JwtVerifier;

  constructor(
    private readonly token: string | undefined,
    jwt?: JwtSettings,
    onKeySetError?: (error: unknown) => void,
  ) {
    if (jwt) this.jwt = new JwtVerifier(jwt, onKeySetError);
  }

  get enabled(): boolean {
    return Boolean(this.token) || this.jwt !== undefined;
  }

  /**
   * The caller of an Authorization header, or throws UnauthorizedError.
   * `exactScheme`: the scheme must be spelled `Bearer` (the observer extension's rule).
   */
  async require(
    authorization: string | undefined,
    options: { exactScheme?: boolean } = {},
  ): Promise<AguiCaller> {
    if (!this.enabled) return {};
    const anyCase = !options.exactScheme;
    if (this.token && bearerMatches(authorization, this.token, anyCase)) return {};
    const presented = credentialsOf(authorization, "Bearer", anyCase);
    if (this.jwt && presented !== undefined && looksLikeJwt(presented)) {
      const verified = await this.jwt.verify(presented);
      if (verified.ok) return { user: verified.owner };
      throw new UnauthorizedError(bearerChallenge(verified.reason));
    }
    throw new UnauthorizedError(bearerChallenge());
  }
}
