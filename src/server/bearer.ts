// The Authorization header checks both protocols share (A2A's auth, AG-UI's
// POST / and /metrics): the credentials of a scheme, compared in constant
// time. A2A takes the scheme as written (`Bearer `, `Basic `); AG-UI takes it
// in any case with spaces around the token (RFC 7235's reading).
import { createHash, timingSafeEqual } from "node:crypto";

/** Compares via SHA-256 digests so lengths leak nothing either. */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash("sha256").update(a, "utf8").digest();
  const db = createHash("sha256").update(b, "utf8").digest();
  return timingSafeEqual(da, db);
}

/**
 * What follows `<scheme> ` in an Authorization header, else undefined.
 * `anyCase`: the scheme in any case, the credentials trimmed.
 */
export function credentialsOf(
  header: string | undefined,
  scheme: string,
  anyCase = false,
): string | undefined {
  if (!header) return undefined;
  if (!anyCase) return header.startsWith(`${scheme} `) ? header.slice(scheme.length + 1) : undefined;
  const space = header.indexOf(" ");
  if (space < 0 || header.slice(0, space).toLowerCase() !== scheme.toLowerCase()) return undefined;
  return header.slice(space + 1).trim();
}

/** True when the header carries this bearer token (`anyCase` as in credentialsOf). */
export function bearerMatches(header: string | undefined, token: string, anyCase = false): boolean {
  const given = credentialsOf(header, "Bearer", anyCase);
  return given !== undefined && safeEqual(given, token);
}
