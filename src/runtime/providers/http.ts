// POST with retries for model providers. Retries happen only before the
// first byte of a successful response: on connection failures, 429 and 5xx
// (Retry-After honoured, capped), with exponential backoff and jitter.
// Anything else becomes a ProviderError whose detail goes to the logs only.
import type { Logger } from "pino";
import { abortError, sleep } from "../abort.js";
import { endpointOf, ProviderError, redactSecrets } from "../errors.js";
import { errorKindForStatus, type HttpProviderSettings, type RetryPolicy } from "./types.js";

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

/**
 * Posts a streaming request to a provider. The settings give the retry
 * policy, the time allowed until the response headers arrive (the idle
 * timeout) and the key to redact; the turn's extra headers (llmHeaders,
 * reserved names already dropped) come first, then `content-type` and
 * `accept`, then the provider's request headers (its key).
 */
export async function postToProvider(
  settings: HttpProviderSettings,
  logger: Logger,
  request: { url: string; headers: Record<string, string>; body: unknown; signal: AbortSignal },
): Promise<PostResult> {
  const { retry, idleTimeoutMs: headerTimeoutMs, name: provider } = settings;
  const { signal } = request;
  // The request's extra headers (llmHeaders) are secrets too: a gateway's error body may echo them.
  const extra = settings.extraHeaders ?? {};
  const secrets = [...(settings.apiKey ? [settings.apiKey] : []), ...Object.values(extra)];
  // Extra headers first: the provider's own (content type, accept, key) always win.
  const headers = {
    ...extra,
    "content-type": "application/json",
    accept: "text/event-stream",
    ...request.headers,
  };
  const payload = JSON.stringify(request.body);
  const endpoint = endpointOf(request.url);
  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) throw abortError();
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    const abort = (): void => {
      signal.removeEventListener("abort", onAbort);
      controller.abort();
    };
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, headerTimeoutMs);
    let response: Response;
    try {
      response = await fetch(request.url, {
        method: "POST",
        headers,
        body: payload,
        signal: controller.signal,
      });
    } catch (error) {
      clearTimeout(timer);
      abort();
      if (signal.aborted) throw abortError();
      const detail = timedOut
        ? `no response within ${headerTimeoutMs} ms (idle timeout)`
        : redactSecrets(`connection failed: ${connectionFailure(error)}`, secrets);
      if (attempt < retry.maxRetries) {
        logger.warn({ provider, endpoint, attempt, detail }, "provider request failed; retrying");
        await sleep(backoff(retry, attempt, null), signal);
        continue;
      }
      const code = timedOut ? "MODEL_UNAVAILABLE" : "MODEL_UNREACHABLE";
      throw new ProviderError("retryable", detail, undefined, code, endpoint);
    }
    clearTimeout(timer);
    if (response.ok) return { response, abort };

    const text = await response.text().catch(() => "");
    abort();
    const kind = errorKindForStatus(response.status);
    const detail = redactSecrets(`HTTP ${response.status}: ${text.slice(0, 500)}`, secrets);
    if (kind === "retryable" && attempt < retry.maxRetries) {
      const delay = backoff(retry, attempt, response.headers.get("retry-after"));
      logger.warn({ provider, endpoint, attempt, status: response.status, delay }, "provider busy; retrying");
      await sleep(delay, signal);
      continue;
    }
    throw new ProviderError(kind, detail, response.status, undefined, endpoint);
  }
}

/** fetch() says "fetch failed"; the cause says why (ECONNREFUSED, ENOTFOUND...). */
function connectionFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const code = typeof cause?.code === "string" ? cause.code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return code ? `${message} (${code})` : message;
}
