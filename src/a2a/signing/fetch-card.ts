// The client's card discovery step: GET <base>/.well-known/agent-card.json and,
// when the client configured any verification option, check the signature
// before anything else reads the card.
import {
  verificationRequested,
  verifyAgentCard,
  type CardVerificationOptions,
  type CardVerificationResult,
} from "./verify-card.js";

export interface FetchAgentCardOptions {
  /** Extra request headers (auth, A2A-Version). */
  headers?: Record<string, string>;
  verification?: CardVerificationOptions;
  timeoutMs?: number;
}

export interface FetchedAgentCard {
  card: Record<string, unknown>;
  verification: CardVerificationResult | { status: "not-checked" };
}

export function agentCardUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/.well-known/agent-card.json`;
}

export async function fetchAgentCard(
  baseUrl: string,
  options: FetchAgentCardOptions = {},
): Promise<FetchedAgentCard> {
  const url = agentCardUrl(baseUrl);
  const response = await fetch(url, {
    headers: { accept: "application/json", ...options.headers },
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  if (!response.ok) throw new Error(`Agent card request to ${url} answered HTTP ${response.status}.`);
  let card: unknown;
  try {
    card = await response.json();
  } catch {
    throw new Error(`Agent card at ${url} is not valid JSON.`);
  }
  if (card === null || typeof card !== "object" || Array.isArray(card)) {
    throw new Error(`Agent card at ${url} is not a JSON object.`);
  }
  const verification = options.verification ?? {};
  if (!verificationRequested(verification)) {
    return { card: card as Record<string, unknown>, verification: { status: "not-checked" } };
  }
  return { card: card as Record<string, unknown>, verification: await verifyAgentCard(card, verification) };
}
