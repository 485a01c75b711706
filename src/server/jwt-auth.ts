// OIDC / JWT bearer sign-in, shared by the A2A server and the AG-UI adapter:
// a bearer token that is a JWT is verified with jose against the identity
// provider's key set (auth-jwks-url), its issuer (auth-issuer), its audience
// (auth-audience) and its expiry, with a bounded clock skew and only RS256 or
// ES256 signatures (never `none`, never an HMAC with a public key set). The key
// set is cached; a token whose `kid` is not in it makes jose fetch the set again
// (at most once per cooldown), so the provider can rotate its keys. The caller's
// identity is the subject scoped by its issuer: `jwt:<iss>|<sub>`.
import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from "jose";
import { isLoopbackHost } from "./exposure.js";
import { ConfigError } from "./settings.js";

export interface JwtSettings {
  /** The provider's JSON Web Key Set (https, or http on a loopback host). */
  jwksUrl: string;
  /** The `iss` a token must carry (also the OpenID Connect discovery base of the agent card). */
  issuer?: string;
  /** The `aud` a token must carry. */
  audience: string;
  /** Least time between two fetches of the key set for an unknown `kid` (default 30 s). */
  cooldownMs?: number;
}

/** The signature algorithms accepted: asymmetric only, as a public key set implies. */
export const JWT_ALGORITHMS: readonly string[] = ["RS256", "ES256"];
/** How far `exp`, `nbf` and `iat` may be off the server's clock. */
export const JWT_CLOCK_SKEW_SECONDS = 60;
const DEFAULT_COOLDOWN_MS = 30_000;
const CACHE_MAX_AGE_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 5_000;

export type JwtCheck = { ok: true; owner: string } | { ok: false; reason: string };

/** The three settings as the tables name them, from either server's merged config. */
export interface JwtConfig {
  "auth-jwks-url"?: string;
  "auth-issuer"?: string;
  "auth-audience"?: string;
}

/**
 * The JWT settings of a server's config, or undefined when none is set. Throws a
 * ConfigError naming the setting when the URL is not https (http only on
 * loopback) or when a setting is given without the others it needs.
 */
export function jwtSettingsOf(config: JwtConfig): JwtSettings | undefined {
  const jwksUrl = config["auth-jwks-url"] || undefined;
  const issuer = config["auth-issuer"] || undefined;
  const audience = config["auth-audience"] || undefined;
  if (!jwksUrl) {
    const given = (["auth-issuer", "auth-audience"] as const).filter((k) => config[k]);
    if (given.length > 0)
      throw new ConfigError(
        `${given.join(" and ")} ${given.length > 1 ? "need" : "needs"} auth-jwks-url, the identity provider's key set (JWKS) that signs the tokens.`,
      );
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(jwksUrl);
  } catch {
    throw new ConfigError(`auth-jwks-url '${jwksUrl}' is not a URL.`);
  }
  const loopback = isLoopbackHost(url.hostname);
  if (!(url.protocol === "https:" || (url.protocol === "http:" && loopback)))
    throw new ConfigError(
      `auth-jwks-url must be an https:// URL (http:// only on a loopback host): '${jwksUrl}'.`,
    );
  if (!audience)
    throw new ConfigError(
      "auth-jwks-url needs auth-audience: without it a token the provider issued for any other application would be accepted.",
    );
  return { jwksUrl: url.href, issuer, audience };
}

/** The WWW-Authenticate value of a 401: the reason when a token was presented and refused. */
export function bearerChallenge(reason?: string): string {
  if (!reason) return 'Bearer realm="iac-code"';
  const quoted = reason.replace(/["\\]/g, "'");
  return `Bearer realm="iac-code", error="invalid_token", error_description="${quoted}"`;
}

/** Whether a bearer credential has the shape of a compact JWS (three base64url parts). */
export function looksLikeJwt(credential: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(credential);
}

/** A failure to get the key set (the provider's fault or the URL's), not the token's. */
function isKeySetFailure(error: unknown): boolean {
  return (
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid ||
    !(error instanceof errors.JOSEError)
  );
}

/** Why jose refused a token, in words a client can act on (no token content). */
function reasonOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "the token has expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "nbf") return "the token is not valid yet";
    if (error.claim === "iss") return "the token's issuer (iss) is not the one this server accepts";
    if (error.claim === "aud") return "the token's audience (aud) is not this server";
    return `the token's ${error.claim} claim is missing or not accepted`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return `the token's algorithm is not accepted (${JWT_ALGORITHMS.join(" or ")})`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (error instanceof errors.JWKSNoMatchingKey)
    return "no key of the identity provider's key set matches the token";
  if (error instanceof errors.JWKSMultipleMatchingKeys)
    return "the token names no key id (kid) and several keys match";
  if (isKeySetFailure(error)) return "the identity provider's key set could not be fetched";
  return "the token is malformed or not accepted";
}

export class JwtVerifier {
  private readonly keys: JWTVerifyGetKey;

  /** `onKeySetError`: told when the key set cannot be fetched (for the operator's log). */
  constructor(
    readonly settings: JwtSettings,
    private readonly onKeySetError?: (error: unknown) => void,
  ) {
    this.keys = createRemoteJWKSet(new URL(settings.jwksUrl), {
      cooldownDuration: settings.cooldownMs ?? DEFAULT_COOLDOWN_MS,
      cacheMaxAge: CACHE_MAX_AGE_MS,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
  }

  /** Verifies a compact JWT; the owner is `jwt:<iss>|<sub>`. */
  async verify(token: string): Promise<JwtCheck> {
    try {
      const { payload } = await jwtVerify(token, this.keys, {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        algorithms: [...JWT_ALGORITHMS],
        clockTolerance: JWT_CLOCK_SKEW_SECONDS,
        requiredClaims: ["sub", "exp"],
      });
      if (typeof payload.sub !== "string" || payload.sub === "")
        return { ok: false, reason: "the token has no subject (sub)" };
      return { ok: true, owner: `jwt:${payload.iss ?? ""}|${payload.sub}` };
    } catch (error) {
      if (isKeySetFailure(error)) this.onKeySetError?.(error);
      return { ok: false, reason: reasonOf(error) };
    }
  }
}
