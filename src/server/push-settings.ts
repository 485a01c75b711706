// The push notification settings of `iac-code a2a`, in one place: each is a
// flag (--<key>), a config key and an environment variable (IACCODE_A2A_<ENV>);
// the flag beats the file, which beats the environment. The keyring comes from
// IAC_CODE_A2A_PUSH_KEYRING only (src/a2a/push/keyring.ts): it is a secret.
import { PrivateHostAllowlist } from "../a2a/push/url-policy.js";

export type PushQueueKind = "local-file" | "redis-streams";

export interface PushSettings {
  /** The four config methods and delivery; false: PushNotificationNotSupportedError. */
  enabled: boolean;
  queue: PushQueueKind;
  /** Required for redis-streams. */
  redisUrl?: string;
  stream: string;
  retryKey: string;
  deadStream: string;
  consumerGroup: string;
  /** undefined: <hostname>-<pid>-<12 hex>, chosen at start. */
  consumerName?: string;
  leaseTimeoutMs: number;
  /** Hostnames, addresses and CIDR ranges a callback may reach although they are private. */
  allowPrivateHosts: string[];
}

/** Each setting: config key (also the flag), env suffix, flag value name ("" = a switch) and help. */
export const PUSH_SETTINGS = [
  {
    key: "push-notifications",
    env: "PUSH_NOTIFICATIONS",
    value: "",
    help: "serve the push config methods and deliver task updates",
  },
  { key: "push-queue", env: "PUSH_QUEUE", value: "<queue>", help: "local-file (default) or redis-streams" },
  {
    key: "push-redis-url",
    env: "PUSH_REDIS_URL",
    value: "<url>",
    help: "Redis of the redis-streams push queue",
  },
  {
    key: "push-stream",
    env: "PUSH_STREAM",
    value: "<key>",
    help: "push job stream (default iac-code:a2a:push)",
  },
  {
    key: "push-retry-key",
    env: "PUSH_RETRY_KEY",
    value: "<key>",
    help: "sorted set of push retries (default iac-code:a2a:push:retry)",
  },
  {
    key: "push-dead-stream",
    env: "PUSH_DEAD_STREAM",
    value: "<key>",
    help: "push dead letters (default iac-code:a2a:push:dead)",
  },
  {
    key: "push-consumer-group",
    env: "PUSH_CONSUMER_GROUP",
    value: "<name>",
    help: "consumer group of the push workers (default iac-code-push)",
  },
  {
    key: "push-consumer-name",
    env: "PUSH_CONSUMER_NAME",
    value: "<name>",
    help: "this worker's consumer name (default <host>-<pid>-<hex>)",
  },
  {
    key: "push-lease-timeout-ms",
    env: "PUSH_LEASE_TIMEOUT_MS",
    value: "<ms>",
    help: "a claimed push job is delivered again after this long (default 300000)",
  },
  {
    key: "push-allow-private-hosts",
    env: "PUSH_ALLOW_PRIVATE_HOSTS",
    value: "<list>",
    help: "comma-separated hostnames, IPs or CIDRs callbacks may reach although private (default none)",
  },
] as const;

export type PushKey = (typeof PUSH_SETTINGS)[number]["key"];
type Raw = string | number | boolean | readonly string[] | undefined;

/** The push flags as commander hands them over (--push-redis-url -> pushRedisUrl), by config key. */
export function pushFlagValues(options: object): Partial<Record<PushKey, string | boolean>> {
  const values: Partial<Record<PushKey, string | boolean>> = {};
  for (const { key } of PUSH_SETTINGS) {
    const name = key.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    const value = (options as Record<string, unknown>)[name];
    if (typeof value === "string" || typeof value === "boolean") values[key] = value;
  }
  return values;
}

function text(raw: Raw): string | undefined {
  if (raw === undefined) return undefined;
  const value = String(raw).trim();
  return value === "" ? undefined : value;
}

/**
 * The push settings; `pick(key, envSuffix)` returns the winning raw value
 * (flag, file or env) or undefined. Throws an Error with a one-line reason.
 */
export function resolvePushSettings(pick: (key: PushKey, envSuffix: string) => Raw): PushSettings {
  const raw = (key: PushKey): Raw => pick(key, PUSH_SETTINGS.find((s) => s.key === key)!.env);
  const enabledRaw = raw("push-notifications");
  let enabled = false;
  if (typeof enabledRaw === "boolean") enabled = enabledRaw;
  else if (text(enabledRaw) !== undefined) {
    const value = text(enabledRaw)!.toLowerCase();
    if (["1", "true", "yes", "on"].includes(value)) enabled = true;
    else if (!["0", "false", "no", "off"].includes(value))
      throw new Error(`Invalid push-notifications '${String(enabledRaw)}': expected true or false.`);
  }
  const queue = text(raw("push-queue")) ?? "local-file";
  if (queue !== "local-file" && queue !== "redis-streams")
    throw new Error("--push-queue must be local-file or redis-streams.");
  const redisUrl = text(raw("push-redis-url"));
  if (redisUrl !== undefined && !/^rediss?:\/\/./.test(redisUrl))
    throw new Error("push-redis-url must be a redis:// or rediss:// URL.");
  if (enabled && queue === "redis-streams" && redisUrl === undefined)
    throw new Error("push-redis-url is required for push-queue: redis-streams.");
  const leaseRaw = raw("push-lease-timeout-ms");
  const lease = leaseRaw === undefined ? 300_000 : Number(text(leaseRaw));
  if (!Number.isInteger(lease) || lease < 1)
    throw new Error(
      `Invalid push-lease-timeout-ms '${String(leaseRaw)}': expected a whole number of milliseconds, 1 or more.`,
    );
  const hostsRaw = raw("push-allow-private-hosts");
  const allowPrivateHosts = (Array.isArray(hostsRaw) ? hostsRaw : (text(hostsRaw)?.split(",") ?? []))
    .map((h: string) => h.trim())
    .filter((h: string) => h !== "");
  try {
    new PrivateHostAllowlist(allowPrivateHosts);
  } catch (error) {
    throw new Error(`Invalid push-allow-private-hosts: ${(error as Error).message}.`, { cause: error });
  }
  return {
    enabled,
    queue,
    redisUrl,
    stream: text(raw("push-stream")) ?? "iac-code:a2a:push",
    retryKey: text(raw("push-retry-key")) ?? "iac-code:a2a:push:retry",
    deadStream: text(raw("push-dead-stream")) ?? "iac-code:a2a:push:dead",
    consumerGroup: text(raw("push-consumer-group")) ?? "iac-code-push",
    consumerName: text(raw("push-consumer-name")),
    leaseTimeoutMs: lease,
    allowPrivateHosts,
  };
}
