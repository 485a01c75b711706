// Agent card signing (server) and verification (client).
export { canonicalizeJson, canonicalCardPayload } from "./canonical-json.js";
export {
  DEFAULT_SIGNING_KID,
  signAgentCard,
  signatureForCard,
  type CardSignatureJson,
  type CardSigningKey,
} from "./sign-card.js";
export {
  CardVerificationError,
  defaultJwksCache,
  verificationRequested,
  verifyAgentCard,
  type CardVerificationOptions,
  type CardVerificationReason,
  type CardVerificationResult,
} from "./verify-card.js";
export {
  JwksError,
  RemoteJwksCache,
  checkJwksUrl,
  loadJwksFile,
  parseJwks,
  type RemoteJwksOptions,
} from "./jwks.js";
export { fetchAgentCard, type FetchAgentCardOptions } from "./fetch-card.js";
