// Signs an agent card (ProtoJSON object) with JWS HS256 over its canonical form
// and returns the card with `signatures[]` set. The payload is detached: the
// card stores the protected header and the signature, and a verifier recomputes
// the payload from the card it received (A2A spec §8.4).
import { FlattenedSign } from "jose";
import { canonicalCardPayload } from "./canonical-json.js";

/** Key id used when the configuration names none (the reference server's fixed kid). */
export const DEFAULT_SIGNING_KID = "default";

export interface CardSigningKey {
  /** HMAC secret; its UTF-8 bytes are the key. */
  secret: string;
  kid?: string;
}

export interface CardSignatureJson {
  protected: string;
  signature: string;
}

export function hmacKey(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

export async function signatureForCard(card: unknown, key: CardSigningKey): Promise<CardSignatureJson> {
  if (!key.secret) throw new Error("Agent card signing needs a non-empty secret.");
  const payload = new TextEncoder().encode(canonicalCardPayload(card));
  const jws = await new FlattenedSign(payload)
    .setProtectedHeader({ alg: "HS256", kid: key.kid ?? DEFAULT_SIGNING_KID, typ: "JOSE" })
    .sign(hmacKey(key.secret));
  return { protected: jws.protected ?? "", signature: jws.signature };
}

/** Returns a copy of the card whose `signatures` holds exactly one signature by `key`. */
export async function signAgentCard<Card extends Record<string, unknown>>(
  card: Card,
  key: CardSigningKey,
): Promise<Card & { signatures: CardSignatureJson[] }> {
  const signature = await signatureForCard(card, key);
  return { ...card, signatures: [signature] };
}
