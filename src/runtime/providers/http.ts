// POST with retries for model providers. Retries happen only before the
// first byte of a successful response: on connection failures, 429 and 5xx
// (Retry-After honoured, capped), with exponential backoff and jitter.
// Anything else becomes a ProviderError whose detail goes to the logs only.
import type { Logger } from "pino";
import { abortError, sleep } from "../abort.js";
import { ProviderError, redactSecrets } from "../errors.js";
import { errorKindForStatus, type RetryPolicy } from "./types.js";

export interface PostResult {
  response: Response;
  /** Aborts the underlying request (call when done reading or on error). */
  abort: () => void;
}

function backoff(policy: RetryPolicy, attempt: number, retryAfter: string | null): number {
  const seconds = retryAfter !== null ? Number(retryAfter) : NaN;
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(policy.maxDelayMs, seconds * 1000);
  const base = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return base / 2 + (Math.random() * base) / 2;
}

export async function postJson(args: {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  signal: AbortSignal;
  retry: RetryPolicy;
  /** Time allowed until the response headers arrive. */
  headerTimeoutMs: number;
  logger: Logger;
  provider: string;
  secrets: string[];
}): Promise<PostResult> {
  const payload = JSON.stringify(args.body);
  for (let attempt = 0; ; attempt++) {
    if (args.signal.aborted) throw abortError();
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    args.signal.addEventListener("abort", onAbort, { once: true });
    const abort = (): void => {
      args.signal.removeEventListener("abort", onAbort);
      controller.abort();
    };
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, args.headerTimeoutMs);
    let response: Response;
    try {
      response = await fetch(args.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...args.headers },
        body: payload,
        signal: controller.signal,
      });
    } catch (error) {
      clearTimeout(timer);
      abort();
      if (args.signal.aborted) throw abortError();
      const detail = timedOut
        ? `no response within ${args.headerTimeoutMs} ms (idle timeout)`
        : redactSecrets(`connection failed: ${(error as Error).message}`, args.secrets);
      if (attempt < args.retry.maxRetries) {
        args.logger.warn({ provider: args.provider, attempt, detail }, "provider request failed; retrying");
        await sleep(backoff(args.retry, attempt, null), args.signal);
        continue;
      }
      throw new ProviderError("retryable", detail);
    }
    clearTimeout(timer);
    if (response.ok) return { response, abort };

    const text = await response.text().catch(() => "");
    abort();
    const kind = errorKindForStatus(response.status);
    const detail = redactSecrets(`HTTP ${response.status}: ${text.slice(0, 500)}`, args.secrets);
    if (kind === "retryable" && attempt < args.retry.maxRetries) {
      const delay = backoff(args.retry, attempt, response.headers.get("retry-after"));
      args.logger.warn(
        { provider: args.provider, attempt, status: response.status, delay },
        "provider busy; retrying",
      );
      await sleep(delay, args.signal);
      continue;
    }
    throw new ProviderError(kind, detail, response.status);
  }
}
