// The settings of the custom JSON-RPC transports (stdio, unix, websocket,
// grpc-jsonrpc, redis-streams): each is a config key, a flag of the same name
// and an IACCODE_A2A_* variable; command line beats file beats environment.
// The start-up refusals for a transport missing what it needs live here too.

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

/** Each setting: config key (also the flag), env var suffix, help, and a check of a raw value. */
export const TRANSPORT_SETTINGS = [
  {
    field: "socketPath",
    key: "socket-path",
    env: "SOCKET_PATH",
    help: "unix transport: the socket file to create (required)",
  },
  {
    field: "socketMode",
    key: "socket-mode",
    env: "SOCKET_MODE",
    help: "unix transport: permission bits of the socket file, octal (default 0600: owner only)",
  },
  { field: "wsPath", key: "ws-path", env: "WS_PATH", help: "websocket transport: the route (default /a2a)" },
  {
    field: "redisUrl",
    key: "redis-url",
    env: "REDIS_URL",
    help: "redis-streams transport: redis:// or rediss:// URL, ACL user and password included (required)",
  },
  {
    field: "requestStream",
    key: "request-stream",
    env: "REQUEST_STREAM",
    help: "redis-streams transport: stream the requests arrive on (default iac-code:a2a:requests)",
  },
  {
    field: "responseStream",
    key: "response-stream",
    env: "RESPONSE_STREAM",
    help: "redis-streams transport: stream for replies when a request names no reply_stream (default iac-code:a2a:responses)",
  },
  {
    field: "consumerGroup",
    key: "consumer-group",
    env: "CONSUMER_GROUP",
    help: "redis-streams transport: consumer group of the request stream (default iac-code)",
  },
] as const;

export type TransportKey = (typeof TRANSPORT_SETTINGS)[number]["key"];

/** The transport flags as commander hands them over (`--socket-path` -> socketPath). */
export type TransportFlags = Partial<Record<(typeof TRANSPORT_SETTINGS)[number]["field"], string>>;

export function transportFlagValues(flags: TransportFlags): Partial<Record<TransportKey, string>> {
  return Object.fromEntries(TRANSPORT_SETTINGS.map((s) => [s.key, flags[s.field]]));
}

const DEFAULTS = {
  socketMode: 0o600,
  wsPath: "/a2a",
  requestStream: "iac-code:a2a:requests",
  responseStream: "iac-code:a2a:responses",
  consumerGroup: "iac-code",
};

/** Why a raw value is refused, or undefined when it is fine (the file's values passed its schema). */
function problem(key: TransportKey, value: string): string | undefined {
  if (value.trim() === "") return "must not be empty";
  if (key === "socket-mode" && !/^0?[0-7]{3}$/.test(value))
    return "expected octal permission bits such as 0600";
  if (key === "ws-path" && !value.startsWith("/")) return "must start with /";
  if (key === "redis-url" && !/^rediss?:\/\//.test(value)) return "must start with redis:// or rediss://";
  return undefined;
}

/**
 * Resolves the seven settings; `pick(key, envSuffix)` returns the winning raw
 * value with where it came from (flag, file or env), or undefined.
 */
export function resolveTransportSettings(
  pick: (key: TransportKey, envSuffix: string) => { value: string; from: string } | undefined,
): TransportSettings {
  const out: TransportSettings = { ...DEFAULTS };
  for (const setting of TRANSPORT_SETTINGS) {
    const raw = pick(setting.key, setting.env);
    if (raw === undefined) continue;
    const why = problem(setting.key, raw.value);
    if (why) throw new Error(`Invalid ${raw.from} '${raw.value}': ${why}.`);
    if (setting.field === "socketMode") out.socketMode = parseInt(raw.value, 8);
    else out[setting.field] = raw.value;
  }
  return out;
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
