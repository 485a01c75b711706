// Waiting for the adapter's A2A server to come back (issue 30): a request the
// server has certainly not received (the port refused the connection, or a
// managed child is down or starting) is tried again with a short backoff for a
// bounded time (a2a-wait-seconds) instead of failing the run at once; a request
// that may have reached the server is tried again only when it is a read.
// The wait ends early when the run's signal aborts or its stop condition turns
// true (the client left, the run was cancelled): nothing is sent after that.
import type { AdapterLogger } from "../logger.js";

/** a2a-wait-seconds when nothing sets it. */
export const DEFAULT_A2A_WAIT_SECONDS = 30;

export interface A2aWaitPolicy {
  /** The longest wait for one request, from its first failure; 0 fails at once. */
  maxMs: number;
  /** The first pause between two tries; each pause doubles it up to maxDelayMs. */
  firstDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_WAIT_DELAYS = { firstDelayMs: 250, maxDelayMs: 2000 } as const;

/** How far a request that got no response went: only "not-sent" is always safe to send again. */
export type Reach = "not-sent" | "no-answer";

/**
 * The A2A server could not be used. `reach` is set when the request got no
 * response at all (then it may be tried again, see withA2aWait); without it the
 * server answered badly or a stream broke, and nothing is tried again.
 */
export class A2aUnavailableError extends Error {
  constructor(
    message: string,
    readonly reach?: Reach,
  ) {
    super(message);
    this.name = "A2aUnavailableError";
  }
}

/** Connect-phase errors: no connection was ever opened, so nothing of the request left. */
const NOT_CONNECTED = new Set([
  "ECONNREFUSED",
  "EADDRNOTAVAIL",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "ENOENT",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** Every error code in a failed request's cause chain (an AggregateError holds several). */
function codesOf(err: unknown, depth = 0): string[] {
  if (!err || typeof err !== "object" || depth > 4) return [];
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof e.code === "string" ? [e.code] : [];
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((x) => codesOf(x, depth + 1)) : [];
  return [...own, ...nested, ...codesOf(e.cause, depth + 1)];
}

/** A request that failed before any response: not-sent when it never connected, else no-answer. */
export function reachOf(err: unknown): Reach {
  const codes = codesOf(err);
  return codes.length > 0 && codes.every((c) => NOT_CONNECTED.has(c)) ? "not-sent" : "no-answer";
}

export interface WaitTarget {
  /** The JSON-RPC method or route, for the log lines. */
  method: string;
  /** A read (GetTask, pipeline state): safe to send again even if it may have arrived. */
  safe: boolean;
  signal?: AbortSignal;
  /**
   * Aborted once the run's client left or the run was cancelled: the wait ends
   * and nothing more is sent, though the request's own signal may go on.
   */
  stop?: AbortSignal;
  /** While this says why (a managed child not up), tries are pointless: the pause ends when it clears. */
  unavailable?: () => string | undefined;
}

const SLICE_MS = 100;

/** Monotonic milliseconds: a wall-clock jump neither ends a wait early nor stretches it. */
const now = (): number => performance.now();

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** A pause of up to `ms`, cut short when the upstream clears, the signal aborts or the run stops. */
async function pause(ms: number, target: WaitTarget): Promise<void> {
  const blocked = target.unavailable?.() !== undefined;
  for (const end = now() + ms; now() < end;) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(SLICE_MS, end - now())));
    if (target.signal?.aborted || target.stop?.aborted) return;
    if (blocked && target.unavailable?.() === undefined) return;
  }
}

/** Why a request that failed this way may not be tried again (undefined: it may). */
function refusal(err: unknown, target: WaitTarget): string | undefined {
  if (!(err instanceof A2aUnavailableError) || !err.reach) return "answered";
  if (err.reach === "no-answer" && !target.safe) return "may have been received";
  return undefined;
}

/**
 * Runs `attempt` until it succeeds, fails in a way that must not be retried,
 * or the wait is over (its bound reached, the signal aborted, the run
 * stopped). The last failure is thrown.
 */
export async function withA2aWait<T>(
  attempt: () => Promise<T>,
  target: WaitTarget,
  policy: A2aWaitPolicy,
  logger?: AdapterLogger,
): Promise<T> {
  const stopped = (): string | undefined =>
    target.signal?.aborted ? "aborted" : target.stop?.aborted ? "client gone or run cancelled" : undefined;
  let startedAt: number | undefined;
  let tries = 0;
  let delay = policy.firstDelayMs;
  const ended = (why: string | undefined, err?: unknown): void => {
    if (startedAt === undefined) return;
    const line = { method: target.method, waitedMs: Math.round(now() - startedAt), tries };
    if (!why) logger?.info(line, "A2A server reachable again; the run goes on");
    else logger?.warn({ ...line, why, err: messageOf(err) }, "stopped waiting for the A2A server");
  };
  for (;;) {
    tries += 1;
    let failure: unknown;
    try {
      const result = await attempt();
      ended(undefined);
      return result;
    } catch (err) {
      failure = err;
    }
    const why = stopped() ?? refusal(failure, target) ?? (policy.maxMs <= 0 ? "no wait" : undefined);
    if (why) {
      ended(why, failure);
      throw failure;
    }
    const at = now();
    if (startedAt === undefined) {
      startedAt = at;
      logger?.warn(
        { method: target.method, err: messageOf(failure), waitSeconds: policy.maxMs / 1000 },
        "A2A server unreachable; waiting for it to come back",
      );
    }
    const left = startedAt + policy.maxMs - at;
    if (left <= 0) {
      ended("bound reached", failure);
      throw failure;
    }
    await pause(Math.min(delay, left), target);
    // Checked before the next try: a stopped run sends nothing more.
    const cut = stopped();
    if (cut) {
      ended(cut, failure);
      throw failure;
    }
    delay = Math.min(delay * 2, policy.maxDelayMs);
  }
}
