// Starts the custom JSON-RPC transport the settings name. Every one of them
// hands frames to the same JSON-RPC core as the HTTP binding. Each transport's
// module is imported when the settings name it (ws, ioredis and Connect are
// not loaded by a server that does not use them).
import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import type { JsonRpcCore } from "../bindings/jsonrpc-core.js";
import type { Authenticator } from "../core/request/auth.js";
import type { A2aServerSettings } from "../config/server-settings.js";
import type { RunningTransport } from "./transport.js";

export type { RunningTransport } from "./transport.js";

export const JSONRPC_TRANSPORTS = ["stdio", "unix", "websocket", "grpc-jsonrpc", "redis-streams"] as const;
export type JsonRpcTransportName = (typeof JSONRPC_TRANSPORTS)[number];

export function isJsonRpcTransport(name: string): name is JsonRpcTransportName {
  return (JSONRPC_TRANSPORTS as readonly string[]).includes(name);
}

/** Whether the transport checks the HTTP auth settings itself (the others are guarded by their channel). */
export function usesHttpAuth(name: JsonRpcTransportName): boolean {
  return name === "websocket" || name === "grpc-jsonrpc";
}

export async function startJsonRpcTransport(
  transport: JsonRpcTransportName,
  settings: A2aServerSettings,
  deps: { core: JsonRpcCore; auth: Authenticator; logger: Logger },
): Promise<RunningTransport> {
  const { core, auth, logger } = deps;
  const tls =
    settings.tlsCert && settings.tlsKey
      ? { cert: readFileSync(settings.tlsCert), key: readFileSync(settings.tlsKey) }
      : undefined;
  switch (transport) {
    case "stdio":
      return (await import("./stdio.js")).startStdioTransport({ core, logger });
    case "unix":
      return (await import("./unix.js")).startUnixTransport({
        core,
        logger,
        socketPath: settings.socketPath!,
        socketMode: settings.socketMode,
      });
    case "websocket":
      return (await import("./websocket.js")).startWebSocketTransport({
        core,
        auth,
        logger,
        host: settings.host,
        port: settings.port,
        wsPath: settings.wsPath,
        tls,
        timeouts: settings.timeouts,
      });
    case "grpc-jsonrpc":
      return (await import("./grpc-jsonrpc.js")).startGrpcJsonRpcTransport({
        core,
        auth,
        logger,
        host: settings.grpcHost ?? settings.host,
        port: settings.grpcPort ?? settings.port,
        tls,
        timeouts: settings.timeouts,
      });
    case "redis-streams":
      return (await import("./redis-streams.js")).startRedisStreamsTransport({
        core,
        logger,
        redisUrl: settings.redisUrl!,
        requestStream: settings.requestStream,
        responseStream: settings.responseStream,
        consumerGroup: settings.consumerGroup,
      });
  }
}
