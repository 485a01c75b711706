// The push notification settings of `iac-code a2a` as the server runs with
// them: the push-* entries of the settings table (src/a2a/config/settings-table.ts),
// merged and type-checked, plus the checks only their combination can make.
// The keyring comes from IAC_CODE_A2A_PUSH_KEYRING only (src/a2a/push/keyring.ts).
import { PrivateHostAllowlist } from "../push/url-policy.js";
import type { A2AServerConfig } from "../../contract/index.js";

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

/** The push keys of a2a-server.yml (each also a flag and an IACCODE_A2A_* variable: src/a2a/config/settings-table.ts). */
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

/**
 * The push settings from the merged config (flag, file or env: the settings
 * table has already checked each value's type, range and enum). Throws an
 * Error with a one-line reason for what only the combination can tell.
 */
export function resolvePushSettings(config: Pick<A2AServerConfig, PushKey>): PushSettings {
  const enabled = config["push-notifications"] ?? false;
  const queue = config["push-queue"] ?? "local-file";
  const redisUrl = config["push-redis-url"];
  if (enabled && queue === "redis-streams" && redisUrl === undefined)
    throw new Error("push-redis-url is required for push-queue: redis-streams.");
  const allowPrivateHosts = (config["push-allow-private-hosts"] ?? []).map((h) => h.trim()).filter((h) => h);
  try {
    new PrivateHostAllowlist(allowPrivateHosts);
  } catch (error) {
    throw new Error(`Invalid push-allow-private-hosts: ${(error as Error).message}.`, { cause: error });
  }
  return {
    enabled,
    queue,
    redisUrl,
    stream: config["push-stream"] ?? "iac-code:a2a:push",
    retryKey: config["push-retry-key"] ?? "iac-code:a2a:push:retry",
    deadStream: config["push-dead-stream"] ?? "iac-code:a2a:push:dead",
    consumerGroup: config["push-consumer-group"] ?? "iac-code-push",
    consumerName: config["push-consumer-name"],
    leaseTimeoutMs: config["push-lease-timeout-ms"] ?? 300_000,
    allowPrivateHosts,
  };
}
