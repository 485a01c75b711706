// Client-side verification of agent card signatures. Keys come only from the
// client's own configuration: secrets by kid, a local JWKS file, or a configured
// https JWKS URL. A `jku` or key URL inside the card is ignored, so a card
// signed by whoever served it cannot vouch for itself (DECISIONS.md).
import { errors as joseErrors, flattenedVerify, importJWK, base64url, type JWK } from "jose";
import { canonicalCardPayload } from "./canonical-json.js";
import { hmacKey } from "./sign-card.js";
import { loadJwksFile, RemoteJwksCache, type KeyedJwk, type RemoteJwksOptions } from "./jwks.js";

export type CardVerificationReason =
  | "missing-signature"
  | "malformed-card"
  | "malformed-signature"
  | "unsupported-algorithm"
  | "missing-key"
  | "unknown-key"
  | "ambiguous-key"
  | "key-fetch-failed"
  | "signature-mismatch";

export class CardVerificationError extends Error {
  override readonly name = "CardVerificationError";
  constructor(
    readonly reason: CardVerificationReason,
    readonly detail?: string,
  ) {
    super(`A2A Agent Card verification failed: ${reason}${detail ? `: ${detail}` : ""}`);
  }
}

export interface CardVerificationOptions {
  /** Reject unsigned cards (otherwise an unsigned card is reported as such and accepted). */
  requireSignature?: boolean;
  /** HMAC secrets selected by the signature's kid. */
  secrets?: Record<string, string>;
  /** One HMAC secret, used when no keyed source is configured. */
  secret?: string;
  /** Path of a local JWKS file (octet keys for HS256; RSA/EC public keys for RS256/ES256). */
  jwksFile?: string;
  /** An already loaded key set. */
  jwks?: { keys: unknown[] };
  /** Remote JWKS (https only), fetched through `jwksCache`. */
  jwksUrl?: string;
  jwksCache?: RemoteJwksCache;
}

export type CardVerificationResult = { status: "valid"; kid?: string; alg: string } | { status: "unsigned" };

const SUPPORTED_ALGS = new Set(["HS256", "RS256", "ES256"]);

/** A cache shared by callers that pass none, so repeated verifications do not refetch. */
let sharedCache: RemoteJwksCache | undefined;
export function defaultJwksCache(options?: RemoteJwksOptions): RemoteJwksCache {
  sharedCache ??= new RemoteJwksCache(options);
  return sharedCache;
}

/** True when any verification option is set, i.e. the client asked for checking. */
export function verificationRequested(options: CardVerificationOptions): boolean {
  return Boolean(
    options.requireSignature ||
    options.secret ||
    (options.secrets && Object.keys(options.secrets).length > 0) ||
    options.jwksFile ||
    options.jwks ||
    options.jwksUrl,
  );
}

interface SignatureParts {
  protected: string;
  signature: string;
  header: Record<string, unknown>;
  kid?: string;
  alg: string;
}

function readSignature(raw: unknown): SignatureParts {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new CardVerificationError("malformed-signature", "signature entry is not an object");
  }
  const entry = raw as Record<string, unknown>;
  if (typeof entry.protected !== "string" || typeof entry.signature !== "string") {
    throw new CardVerificationError("malformed-signature", "protected and signature must be strings");
  }
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(base64url.decode(entry.protected)));
  } catch {
    throw new CardVerificationError("malformed-signature", "protected header is not base64url JSON");
  }
  if (header === null || typeof header !== "object" || Array.isArray(header)) {
    throw new CardVerificationError("malformed-signature", "protected header is not a JSON object");
  }
  const protectedHeader = header as Record<string, unknown>;
  const alg = protectedHeader.alg;
  if (typeof alg !== "string" || !SUPPORTED_ALGS.has(alg)) {
    throw new CardVerificationError(
      "unsupported-algorithm",
      `alg=${typeof alg === "string" ? alg : "<missing>"}`,
    );
  }
  const kid =
    typeof protectedHeader.kid === "string" && protectedHeader.kid ? protectedHeader.kid : undefined;
  const unprotected =
    entry.header !== null && typeof entry.header === "object" && !Array.isArray(entry.header)
      ? (entry.header as Record<string, unknown>)
      : {};
  return { protected: entry.protected, signature: entry.signature, header: unprotected, kid, alg };
}

type KeyMaterial = Awaited<ReturnType<typeof importJWK>>;

interface Candidate {
  kid?: string;
  load: () => Promise<KeyMaterial>;
}

/** Keys of one source usable for `alg`: octet keys only for HS*, public keys only for RS/ES. */
function candidatesFromJwks(keys: KeyedJwk[], alg: string): Candidate[] {
  const wantsOctet = alg.startsWith("HS");
  return keys
    .filter((jwk) => (jwk.alg === undefined || jwk.alg === alg) && (jwk.kty === "oct") === wantsOctet)
    .map((jwk) => ({ kid: jwk.kid, load: () => importJWK(publicPart(jwk), alg) }));
}

/** Never hands private members to the verifier: a JWKS meant for verification needs none. */
function publicPart(jwk: KeyedJwk): JWK {
  if (jwk.kty === "oct") return { kty: "oct", k: jwk.k, kid: jwk.kid };
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, oth: _oth, ...rest } = jwk;
  return rest;
}

function pick(candidates: Candidate[], kid: string | undefined): Candidate {
  if (candidates.length === 0) throw new CardVerificationError("missing-key");
  if (kid !== undefined) {
    const match = candidates.find((candidate) => candidate.kid === kid);
    if (!match) throw new CardVerificationError("unknown-key", `kid=${kid}`);
    return match;
  }
  if (candidates.length > 1) throw new CardVerificationError("ambiguous-key");
  return candidates[0];
}

async function verifyWith(card: unknown, parts: SignatureParts, candidate: Candidate): Promise<void> {
  let key: KeyMaterial;
  try {
    key = await candidate.load();
  } catch {
    throw new CardVerificationError(
      "malformed-signature",
      `key ${candidate.kid ?? "<no kid>"} cannot be imported`,
    );
  }
  let payload: string;
  try {
    payload = base64url.encode(canonicalCardPayload(card));
  } catch (error) {
    throw new CardVerificationError("malformed-card", error instanceof Error ? error.message : undefined);
  }
  try {
    await flattenedVerify(
      { protected: parts.protected, payload, signature: parts.signature, header: parts.header },
      key,
      { algorithms: [parts.alg] },
    );
  } catch (error) {
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
      throw new CardVerificationError("signature-mismatch", parts.kid ? `kid=${parts.kid}` : undefined);
    }
    throw new CardVerificationError(
      "malformed-signature",
      error instanceof Error ? error.message : undefined,
    );
  }
}

async function staticCandidates(options: CardVerificationOptions, alg: string): Promise<Candidate[]> {
  const list: Candidate[] = [];
  if (alg.startsWith("HS")) {
    for (const [kid, secret] of Object.entries(options.secrets ?? {})) {
      list.push({ kid, load: () => Promise.resolve(hmacKey(secret)) });
    }
  }
  if (options.jwks) list.push(...candidatesFromJwks(parseInlineJwks(options.jwks), alg));
  if (options.jwksFile) list.push(...candidatesFromJwks(await loadJwksFile(options.jwksFile), alg));
  return list;
}

function parseInlineJwks(jwks: { keys: unknown[] }): KeyedJwk[] {
  return jwks.keys.filter(
    (key): key is KeyedJwk =>
      key !== null &&
      typeof key === "object" &&
      typeof (key as JWK).kid === "string" &&
      typeof (key as JWK).kty === "string",
  );
}

async function verifyOne(
  card: unknown,
  raw: unknown,
  options: CardVerificationOptions,
): Promise<SignatureParts> {
  const parts = readSignature(raw);
  const fixed = await staticCandidates(options, parts.alg);
  const remoteCache = options.jwksUrl ? (options.jwksCache ?? defaultJwksCache()) : undefined;
  const remote = async (force: boolean): Promise<Candidate[]> => {
    if (!remoteCache || !options.jwksUrl) return [];
    try {
      return candidatesFromJwks(await remoteCache.keys(options.jwksUrl, force), parts.alg);
    } catch (error) {
      throw new CardVerificationError("key-fetch-failed", error instanceof Error ? error.message : undefined);
    }
  };
  let candidates = [...fixed, ...(await remote(false))];
  if (candidates.length === 0 && options.secret && parts.alg.startsWith("HS")) {
    candidates = [{ kid: parts.kid, load: () => Promise.resolve(hmacKey(options.secret ?? "")) }];
  }
  try {
    await verifyWith(card, parts, pick(candidates, parts.kid));
    return parts;
  } catch (error) {
    // A rotated remote key set may not be cached yet: refetch once and retry.
    const retriable =
      error instanceof CardVerificationError &&
      (error.reason === "unknown-key" || error.reason === "signature-mismatch");
    if (!remoteCache || !retriable) throw error;
    candidates = [...fixed, ...(await remote(true))];
    await verifyWith(card, parts, pick(candidates, parts.kid));
    return parts;
  }
}

/**
 * Verifies `card` (the JSON object as received). Succeeds when one of its
 * signatures verifies; otherwise throws CardVerificationError naming why the
 * first signature failed. An unsigned card passes unless a signature is required.
 */
export async function verifyAgentCard(
  card: unknown,
  options: CardVerificationOptions,
): Promise<CardVerificationResult> {
  const signatures =
    card !== null && typeof card === "object" ? (card as { signatures?: unknown }).signatures : undefined;
  if (!Array.isArray(signatures) || signatures.length === 0) {
    if (options.requireSignature) throw new CardVerificationError("missing-signature");
    return { status: "unsigned" };
  }
  let firstError: unknown;
  for (const raw of signatures as unknown[]) {
    try {
      const parts = await verifyOne(card, raw, options);
      return { status: "valid", kid: parts.kid, alg: parts.alg };
    } catch (error) {
      firstError ??= error;
    }
  }
  throw firstError;
}
