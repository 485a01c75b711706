// Which binding to use and where: from the interfaces the agent card advertises
// (the first one this client speaks, or the one --binding asks for), or
// straight from a URL scheme that names a transport (grpc://, and the custom
// JSON-RPC transports unix://, ws://, grpc-jsonrpc://, redis://, stdio:). A new
// transport registers its scheme in DIRECT_SCHEMES; one that carries JSON-RPC
// opens a JsonRpcBinding over its own JsonRpcChannel. Each transport's module
// is imported when a URL needs it: a JSON-RPC call loads neither Connect, ws
// nor ioredis.
import type { pb } from "../../../contract/index.js";
import { ClientError, UsageError } from "../errors.js";
import type { A2aBinding, BindingName } from "./binding.js";
import type { JsonRpcChannel } from "./jsonrpc.js";

export { BINDING_NAMES, parseBindingName, type A2aBinding, type BindingName } from "./binding.js";

export interface Endpoint {
  binding: BindingName;
  url: string;
  /** AgentInterface.tenant, copied into every request. */
  tenant: string;
}

/** AgentInterface.protocolBinding values (compared upper-case) and the binding that speaks them. */
const PROTOCOLS: Record<string, BindingName> = { JSONRPC: "jsonrpc", "HTTP+JSON": "rest", GRPC: "grpc" };

type Opener = (url: string, headers: Record<string, string>) => Promise<A2aBinding>;

/** gRPC metadata keys are lower-case. */
const lowerCaseKeys = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value]));

/** The bindings over HTTP(S) (gRPC over HTTP/2). */
const OPENERS: Record<BindingName, Opener> = {
  jsonrpc: async (url, headers) => {
    const { HttpJsonRpcChannel } = await import("./http-jsonrpc.js");
    const { JsonRpcBinding } = await import("./jsonrpc.js");
    return new JsonRpcBinding(new HttpJsonRpcChannel(url, headers));
  },
  rest: async (url, headers) => new (await import("./rest.js")).RestBinding(url, headers),
  grpc: async (url, headers) => new (await import("./grpc.js")).GrpcBinding(url, lowerCaseKeys(headers)),
};

type ChannelOpener = (url: string, headers: Record<string, string>) => Promise<JsonRpcChannel>;

const overJsonRpc = (channel: ChannelOpener) => ({
  binding: "jsonrpc" as const,
  open: async (url: string, headers: Record<string, string>): Promise<A2aBinding> => {
    const { JsonRpcBinding } = await import("./jsonrpc.js");
    return new JsonRpcBinding(await channel(url, headers));
  },
});

/**
 * URL schemes that name a transport without an agent card over HTTP. The
 * JSON-RPC transports carry the auth headers where they have a place for them
 * (the WebSocket upgrade, gRPC metadata); unix sockets, stdio and Redis are
 * guarded by their own means (file mode, the parent process, Redis ACLs).
 */
const DIRECT_SCHEMES: Record<string, { binding: BindingName; open: Opener }> = {
  "grpc:": { binding: "grpc", open: OPENERS.grpc },
  "grpcs:": { binding: "grpc", open: OPENERS.grpc },
  "grpc-jsonrpc:": overJsonRpc(
    async (url, headers) =>
      new (await import("./grpc-jsonrpc.js")).GrpcJsonRpcChannel(url, lowerCaseKeys(headers)),
  ),
  "unix:": overJsonRpc(async (url) => new (await import("./unix.js")).UnixChannel(url)),
  "ws:": overJsonRpc(
    async (url, headers) => new (await import("./websocket.js")).WebSocketChannel(url, headers),
  ),
  "wss:": overJsonRpc(
    async (url, headers) => new (await import("./websocket.js")).WebSocketChannel(url, headers),
  ),
  "redis:": overJsonRpc(async (url) => new (await import("./redis-streams.js")).RedisStreamsChannel(url)),
  "rediss:": overJsonRpc(async (url) => new (await import("./redis-streams.js")).RedisStreamsChannel(url)),
  "stdio:": overJsonRpc(async (url) => new (await import("./stdio.js")).StdioChannel(url)),
};

/** The direct schemes whose transport carries the auth settings (the others have no place for them). */
const CREDENTIAL_SCHEMES = new Set(["grpc:", "grpcs:", "grpc-jsonrpc:", "ws:", "wss:"]);

/** Whether a direct URL's transport carries credentials (GetExtendedAgentCard needs them). */
export const carriesCredentials = (url: string): boolean => CREDENTIAL_SCHEMES.has(schemeOf(url) ?? "");

export const schemeOf = (url: string): string | undefined =>
  /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0].toLowerCase();

/** An endpoint named by the URL's scheme alone, or undefined for http(s) (card discovery). */
export function directEndpoint(url: string, wanted?: BindingName): Endpoint | undefined {
  const scheme = schemeOf(url);
  if (scheme === "http:" || scheme === "https:") return undefined;
  const binding = scheme ? DIRECT_SCHEMES[scheme]?.binding : undefined;
  if (!binding) {
    throw new ClientError(
      `Unsupported A2A URL ${url}: use http(s):// (agent card discovery), grpc(s)://host:port, grpc-jsonrpc://host:port, unix://<path>, ws(s)://host:port/path, redis(s)://host:port?request-stream=… or stdio:<command line>.`,
    );
  }
  if (wanted && wanted !== binding) {
    throw new UsageError(`--binding ${wanted} does not match the ${scheme}// URL ${url}.`);
  }
  return { binding, url, tenant: "" };
}

/**
 * A card's gRPC address as a grpc(s):// URL. A2A gives it as a gRPC target,
 * host:port (dns:///host:port from some servers), which says nothing of TLS:
 * it is TLS when the card came over https. A URL with a scheme is kept.
 */
export function grpcUrlOf(address: string, cardUrl: string): string {
  const target = address.trim().replace(/^dns:\/\/\//i, "");
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return target;
  return `${/^https:/i.test(cardUrl) ? "grpcs" : "grpc"}://${target}`;
}

/**
 * The first advertised interface this client speaks (A2A 1.x only), or the
 * first of the wanted binding. With none and no wish: the card's legacy `url`,
 * else the URL the user gave, spoken as JSON-RPC (the reference's fallback).
 */
export function chooseEndpoint(
  card: pb.AgentCard,
  legacyUrl: string | undefined,
  givenUrl: string,
  wanted?: BindingName,
): Endpoint {
  const usable = card.supportedInterfaces.filter(
    (entry) =>
      entry.url.trim() !== "" &&
      PROTOCOLS[entry.protocolBinding.toUpperCase()] !== undefined &&
      !entry.protocolVersion.startsWith("0."),
  );
  const match = usable.find((entry) => !wanted || PROTOCOLS[entry.protocolBinding.toUpperCase()] === wanted);
  if (match) {
    const binding = PROTOCOLS[match.protocolBinding.toUpperCase()];
    const url = binding === "grpc" ? grpcUrlOf(match.url, givenUrl) : match.url;
    return { binding, url, tenant: match.tenant };
  }
  if (wanted && wanted !== "jsonrpc") {
    const offered = card.supportedInterfaces.map((entry) => `${entry.protocolBinding} ${entry.url}`);
    throw new ClientError(
      `The agent card advertises no ${wanted} interface (it offers: ${offered.join(", ") || "nothing"}).`,
    );
  }
  return { binding: "jsonrpc", url: legacyUrl || givenUrl, tenant: "" };
}

/** Imports the endpoint's transport and opens it. */
export function openBinding(endpoint: Endpoint, headers: Record<string, string>): Promise<A2aBinding> {
  const scheme = schemeOf(endpoint.url);
  const open = (scheme ? DIRECT_SCHEMES[scheme]?.open : undefined) ?? OPENERS[endpoint.binding];
  return open(endpoint.url, headers);
}
