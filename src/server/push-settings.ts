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

/** The push keys of a2a-server.yml (each also a flag and an IACCODE_A2A_* variable: src/server/a2a-settings.ts). */
export type PushKey =
  | "push-notifications"
  | "push-queue"
  | "push-redis-url"
  | "push-stream"
  | "push-retry-key"
  | "push-dead-stream"
  | "push-consumer-group"
  | "push-consumer-name"
  | "push-lease-timeout-ms"
  | "push-allow-private-hosts";
type Raw = string | number | boolean | readonly string[] | undefined;

function text(raw: Raw): string | undefined {
  if (raw === undefined) return undefined;
  const value = String(raw).trim();
  return value === "" ? undefined : value;
}

/**
 * The push settings; `raw(key)` returns the winning value (flag, file or
 * env, merged by the settings table) or undefined. Throws an Error with a one-line reason.
 */
export function resolvePushSettings(raw: (key: PushKey) => Raw): PushSettings {
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
