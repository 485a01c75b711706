// Verification keys for agent card signatures: JWKS documents from a local file
// or from a configured https URL. The remote fetch is bounded in size and time
// and cached per URL; keys are never taken from anything the card names.
import { readFile, stat } from "node:fs/promises";
import https from "node:https";
import type { JWK } from "jose";

/** A JWKS entry usable for verification: it has a kid and a key type. */
export type KeyedJwk = JWK & { kid: string; kty: string };

const MAX_LOCAL_JWKS_BYTES = 1024 * 1024;

export class JwksError extends Error {
  override readonly name = "JwksError";
}

/** Reads `{ "keys": [...] }`; entries without a string kid or kty are skipped (they cannot be selected). */
export function parseJwks(document: unknown, source: string): KeyedJwk[] {
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    throw new JwksError(`JWKS from ${source} is not a JSON object.`);
  }
  const keys = (document as { keys?: unknown }).keys;
  if (!Array.isArray(keys)) throw new JwksError(`JWKS from ${source} has no "keys" array.`);
  const usable: KeyedJwk[] = [];
  for (const entry of keys as unknown[]) {
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) continue;
    const jwk = entry as JWK;
    if (typeof jwk.kid !== "string" || jwk.kid === "" || typeof jwk.kty !== "string") continue;
    usable.push(jwk as KeyedJwk);
  }
  return usable;
}

export async function loadJwksFile(path: string): Promise<KeyedJwk[]> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    throw new JwksError(`JWKS file ${path} cannot be read.`);
  }
  if (size > MAX_LOCAL_JWKS_BYTES) throw new JwksError(`JWKS file ${path} is larger than 1 MiB.`);
  let document: unknown;
  try {
    document = JSON.parse(await readFile(path, "utf8"));
  } catch {
    throw new JwksError(`JWKS file ${path} is not valid JSON.`);
  }
  return parseJwks(document, path);
}

export interface RemoteJwksOptions {
  /** How long a fetched key set is trusted (default 1 h). */
  ttlMs?: number;
  /** Whole-request deadline (default 5 s). */
  timeoutMs?: number;
  /** Largest accepted body (default 64 KiB). */
  maxBytes?: number;
  /** A forced refetch (unknown kid, bad signature) happens at most this often per URL (default 30 s). */
  minRefetchIntervalMs?: number;
  /** Extra trusted CA certificates (PEM), e.g. for a private JWKS host. */
  ca?: string | Buffer | Array<string | Buffer>;
}

interface CacheEntry {
  keys: KeyedJwk[];
  fetchedAt: number;
}

const DEFAULTS = { ttlMs: 3_600_000, timeoutMs: 5_000, maxBytes: 64 * 1024, minRefetchIntervalMs: 30_000 };
const MAX_CACHED_URLS = 64;

/** Per-URL cache of remote key sets with concurrent fetches de-duplicated. */
export class RemoteJwksCache {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<KeyedJwk[]>>();
  private readonly options: Required<Omit<RemoteJwksOptions, "ca">> & Pick<RemoteJwksOptions, "ca">;
  /** Counts network fetches; lets callers and tests see the cache working. */
  fetchCount = 0;

  constructor(
    options: RemoteJwksOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  async keys(url: string, forceRefresh = false): Promise<KeyedJwk[]> {
    const parsed = checkJwksUrl(url);
    const key = parsed.href;
    const cached = this.entries.get(key);
    const age = cached ? this.now() - cached.fetchedAt : Infinity;
    const fresh = age < this.options.ttlMs;
    const refetchAllowed = age >= this.options.minRefetchIntervalMs;
    if (cached && fresh && (!forceRefresh || !refetchAllowed)) return cached.keys;
    const running = this.inflight.get(key);
    if (running) return running;
    const fetching = this.fetch(parsed)
      .then((keys) => {
        this.remember(key, { keys, fetchedAt: this.now() });
        return keys;
      })
      .finally(() => this.inflight.delete(key));
    this.inflight.set(key, fetching);
    return fetching;
  }

  private remember(key: string, entry: CacheEntry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > MAX_CACHED_URLS) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  private async fetch(url: URL): Promise<KeyedJwk[]> {
    this.fetchCount += 1;
    const body = await fetchBounded(url, this.options);
    let document: unknown;
    try {
      document = JSON.parse(body);
    } catch {
      throw new JwksError(`JWKS from ${url.href} is not valid JSON.`);
    }
    return parseJwks(document, url.href);
  }
}

/** Only https URLs are fetched: a key set over plaintext could be swapped in transit. */
export function checkJwksUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new JwksError(`JWKS URL ${JSON.stringify(url)} is not a valid URL.`);
  }
  if (parsed.protocol !== "https:") throw new JwksError(`JWKS URL must use https (got ${parsed.protocol}).`);
  return parsed;
}

function fetchBounded(url: URL, options: RemoteJwksOptions & typeof DEFAULTS): Promise<string> {
  return new Promise((resolve, reject) => {
    let settled = false;
    // Bounds the whole exchange, body included; `request` exists by the time it fires.
    const timer = setTimeout(
      () => finish(new JwksError(`JWKS fetch from ${url.href} timed out after ${options.timeoutMs} ms.`)),
      options.timeoutMs,
    );
    const finish = (error: Error | undefined, body?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        request.destroy();
        reject(error);
      } else resolve(body ?? "");
    };
    const request = https.get(
      url,
      { ca: options.ca, headers: { accept: "application/jwk-set+json, application/json" } },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          finish(new JwksError(`JWKS fetch from ${url.href} answered HTTP ${response.statusCode ?? "?"}.`));
          return;
        }
        const declared = Number(response.headers["content-length"]);
        if (Number.isFinite(declared) && declared > options.maxBytes) {
          finish(new JwksError(`JWKS from ${url.href} is larger than ${options.maxBytes} bytes.`));
          return;
        }
        const chunks: Buffer[] = [];
        let total = 0;
        response.on("data", (chunk: Buffer) => {
          total += chunk.length;
          if (total > options.maxBytes) {
            finish(new JwksError(`JWKS from ${url.href} is larger than ${options.maxBytes} bytes.`));
            return;
          }
          chunks.push(chunk);
        });
        response.on("end", () => finish(undefined, Buffer.concat(chunks).toString("utf8")));
        response.on("error", (error) =>
          finish(new JwksError(`JWKS fetch from ${url.href} failed: ${error.message}`)),
        );
      },
    );
    request.on("error", (error) =>
      finish(new JwksError(`JWKS fetch from ${url.href} failed: ${error.message}`)),
    );
  });
}
