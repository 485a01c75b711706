// The settings of the custom JSON-RPC transports (stdio, unix, websocket,
// grpc-jsonrpc, redis-streams) as the server runs with them: their entries in
// the settings table (src/a2a/config/settings-table.ts), merged and checked against
// the schema. The start-up refusals for a transport missing what it needs live here too.
import type { A2AServerConfig } from "../../contract/index.js";

export const TRANSPORT_NAMES = [
  "grpc",
  "grpc-jsonrpc",
  "http",
  "redis-streams",
  "stdio",
  "unix",
  "websocket",
] as const;
export type TransportName = (typeof TRANSPORT_NAMES)[number];

export interface TransportSettings {
  /** unix: the socket file (required). */
  socketPath?: string;
  /** unix: the socket file's permission bits (default 0o600, owner only). */
  socketMode: number;
  /** websocket: the upgrade route on host:port. */
  wsPath: string;
  /** redis-streams: redis:// or rediss:// URL, ACL user and password included (required). */
  redisUrl?: string;
  requestStream: string;
  responseStream: string;
  consumerGroup: string;
}

/** The transport keys of a2a-server.yml (each also a flag and an IACCODE_A2A_* variable: src/a2a/config/settings-table.ts). */
export type TransportKey =
  | "socket-path"
  | "socket-mode"
  | "ws-path"
  | "redis-url"
  | "request-stream"
  | "response-stream"
  | "consumer-group";

/** The seven settings from the merged config (the settings table checked each value against the schema). */
export function resolveTransportSettings(config: Pick<A2AServerConfig, TransportKey>): TransportSettings {
  return {
    ...(config["socket-path"] !== undefined ? { socketPath: config["socket-path"] } : {}),
    ...(config["redis-url"] !== undefined ? { redisUrl: config["redis-url"] } : {}),
    socketMode: parseInt(config["socket-mode"] ?? "0600", 8),
    wsPath: config["ws-path"] ?? "/a2a",
    requestStream: config["request-stream"] ?? "iac-code:a2a:requests",
    responseStream: config["response-stream"] ?? "iac-code:a2a:responses",
    consumerGroup: config["consumer-group"] ?? "iac-code",
  };
}

/** How to give a required setting, for the start-up message. */
const howToGive = (key: TransportKey, env: string) =>
  `give --${key}, ${key} in --config or IACCODE_A2A_${env}`;

/**
 * What a transport needs before it starts; throws an Error with the reason.
 * `authInFile` names auth keys set in the config file: the stdio, unix and
 * redis-streams channels authenticate by other means and would ignore them.
 */
export function checkTransport(
  transport: TransportName,
  settings: TransportSettings,
  context: { logToStdout: boolean; authInFile: string[]; platform?: NodeJS.Platform },
): void {
  if (transport === "stdio" && context.logToStdout)
    throw new Error(
      "--log-to-stdout cannot be used with --transport stdio because stdout carries A2A frames.",
    );
  if (transport === "unix" && (context.platform ?? process.platform) === "win32")
    throw new Error("The unix transport is not available on Windows; use --transport http or stdio.");
  if (transport === "unix" && !settings.socketPath)
    throw new Error(
      `socket-path is required for --transport unix: ${howToGive("socket-path", "SOCKET_PATH")}.`,
    );
  if (transport === "redis-streams" && !settings.redisUrl)
    throw new Error(
      `redis-url is required for --transport redis-streams: ${howToGive("redis-url", "REDIS_URL")}.`,
    );
  if (["stdio", "unix", "redis-streams"].includes(transport) && context.authInFile.length > 0) {
    const by =
      transport === "stdio"
        ? "the parent process owns the pipe"
        : transport === "unix"
          ? "socket-mode guards the socket file"
          : "the Redis URL's ACL user and password (rediss:// for TLS) guard the streams";
    throw new Error(
      `${context.authInFile.join(", ")} cannot be used with --transport ${transport} (${by}); remove ${
        context.authInFile.length > 1 ? "them" : "it"
      } from the config file.`,
    );
  }
}
