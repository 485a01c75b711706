// The retry policy of push deliveries: which failures are worth another try,
// how long to wait before it, and how a failure is written down (in a job, a
// dead letter or a log) without a secret or a full URL in it.

/** Deliveries of one job at most (the first one and four retries). */
export const MAX_ATTEMPTS = 5;
/** A delivery that has not answered after this long has failed (transiently). */
export const DELIVERY_TIMEOUT_MS = 5_000;
const TRANSIENT_STATUSES = new Set([408, 409, 425, 429, 500, 502, 503, 504]);
const MAX_ERROR_CHARS = 1000;

/** One failed delivery: transient ones are retried, permanent ones go to the dead letters at once. */
export class DeliveryError extends Error {
  constructor(
    /** "<Type>: <message>", already free of secrets. */
    readonly summary: string,
    readonly transient: boolean,
  ) {
    super(summary);
    this.name = "DeliveryError";
  }
}

export function isTransientStatus(status: number): boolean {
  return TRANSIENT_STATUSES.has(status);
}

/** Wait before the next delivery after `attempt` failed ones: min(60, 2^(attempt-1)) s, +/- 20 %. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(60, 2 ** Math.max(0, attempt - 1)) * 1000;
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** A URL as logs and dead letters show it: scheme, host, port and path (no user info, query or fragment). */
export function publicUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return "<invalid URL>";
  }
}

/** "<Type>: <message>" with URLs reduced to publicUrl, bounded in length. */
export function errorSummary(type: string, message: string): string {
  const text = `${type}: ${message.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"]+/gi, (url) => publicUrl(url))}`;
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text;
}
