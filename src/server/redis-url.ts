// Redis URLs as they may be shown: without the password. Apart from
// redis.ts (which loads ioredis), so a server that uses no Redis need not load it.

/**
 * The URL without its password, the user kept: an address a client can be
 * shown (the redis-streams transport's card URL and its connection errors).
 */
export function redisUrlForDisplay(redisUrl: string): string {
  const url = new URL(redisUrl);
  url.password = "";
  return url.toString().replace(/\/$/, "");
}

/** The URL with its password (and user) replaced, for logs and messages. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    if (parsed.username) parsed.username = "***";
    return parsed.toString();
  } catch {
    return "redis://***";
  }
}
