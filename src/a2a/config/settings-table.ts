// Every setting of `iac-code a2a`: flag, a2a-server.yml key and environment
// variable (IACCODE_A2A_<KEY> unless named otherwise: the seeds fix
// IACCODE_A2A_HTTP_TOKEN; the model settings are the runtime's IAC_CODE_*).
// Adding a setting: one entry here, its property in
// schemas/config/a2a-server.json, its field in A2aServerSettings
// (src/a2a/config/server-settings.ts), and its README row (test/server/settings-table.test.ts
// prints the row when it is missing).
import { ConfigError, type SettingsTable } from "../../server/settings.js";
import { TIMEOUT_SETTINGS } from "../../server/timeouts.js";
import { TRANSPORT_NAMES, type TransportName } from "./transport-settings.js";

export type ThinkingType = "tool_trace" | "raw_thinking";

const TRANSPORT_ALIASES: Record<string, string> = {
  jsonrpc: "http",
  "json-rpc": "http",
  "http+jsonrpc": "http",
  "http-jsonrpc": "http",
  https: "http",
  grpcs: "grpc",
  "grpc+jsonrpc": "grpc-jsonrpc",
  ws: "websocket",
  wss: "websocket",
  redis: "redis-streams",
  "redis-stream": "redis-streams",
};
export function normaliseTransport(value: string): TransportName {
  const lowered = value.trim().toLowerCase().replace(/_/g, "-");
  const canonical = TRANSPORT_ALIASES[lowered] ?? lowered;
  if (!(TRANSPORT_NAMES as readonly string[]).includes(canonical)) {
    throw new ConfigError(
      `Unsupported transport '${value}'. Supported values: ${TRANSPORT_NAMES.join(", ")}`,
    );
  }
  return canonical as TransportName;
}

/** tool-trace / raw-thinking tokens; all/* = both; none/off/false/0 = nothing; unset = tool-trace. */
export function parseThinkingExposure(value: string | string[] | undefined): ThinkingType[] {
  if (value === undefined) return ["tool_trace"];
  const tokens = (Array.isArray(value) ? value : [value])
    .flatMap((v) => v.split(/[,;]/))
    .map((t) => t.trim().toLowerCase().replace(/-/g, "_"));
  const enabled = new Set<ThinkingType>();
  for (const token of tokens) {
    if (["", "none", "off", "false", "0"].includes(token)) continue;
    if (token === "all" || token === "*") {
      enabled.add("raw_thinking").add("tool_trace");
    } else if (token === "tool_trace" || token === "raw_thinking") {
      enabled.add(token);
    } else {
      throw new ConfigError(
        `Unsupported A2A thinking exposure type '${token}'. Supported values: raw-thinking, tool-trace.`,
      );
    }
  }
  return (["raw_thinking", "tool_trace"] as const).filter((t) => enabled.has(t));
}

const lowerCase = (value: unknown) => (value as string[]).map((v) => v.toLowerCase());

export const A2A_SETTINGS: SettingsTable = {
  envPrefix: "IACCODE_A2A_",
  settings: [
    {
      key: "config",
      kind: "string",
      arg: "path",
      noFileKey: true,
      help: "YAML (or JSON) config file, a2a-server.yml (keys with - or _)",
    },
    { key: "host", kind: "string", arg: "host", help: "address to bind (default 127.0.0.1)" },
    {
      key: "port",
      kind: "integer",
      arg: "port",
      help: "port to bind (default 41242; 0 picks a free port)",
    },
    {
      key: "transport",
      kind: "string",
      arg: "name",
      parse: (value) => normaliseTransport(String(value)),
      help: "http (default: JSON-RPC, HTTP+JSON and gRPC on one port), grpc (the gRPC binding only), or JSON-RPC over stdio, unix, websocket, grpc-jsonrpc or redis-streams",
    },
    {
      key: "store",
      kind: "string",
      arg: "kind",
      choices: ["sqlite", "redis"],
      help: "sqlite (default: one server per persistence-dir) or redis (replicas share redis-url)",
    },
    {
      key: "context-lease-seconds",
      kind: "number",
      arg: "n",
      help: "store redis: a stopped replica's contexts are taken over after this long (default 15)",
    },
    {
      key: "socket-path",
      kind: "string",
      arg: "path",
      help: "unix transport: the socket file to create (required)",
    },
    {
      key: "socket-mode",
      kind: "string",
      arg: "mode",
      help: "unix transport: permission bits of the socket file, octal (default 0600: owner only)",
    },
    { key: "ws-path", kind: "string", arg: "path", help: "websocket transport: the route (default /a2a)" },
    {
      key: "redis-url",
      kind: "string",
      arg: "url",
      help: "Redis URL, ACL user and password included (redis:// or rediss://): the shared store of store redis, and the redis-streams transport's",
    },
    {
      key: "request-stream",
      kind: "string",
      arg: "key",
      help: "redis-streams transport: stream the requests arrive on (default iac-code:a2a:requests)",
    },
    {
      key: "response-stream",
      kind: "string",
      arg: "key",
      help: "redis-streams transport: stream for replies when a request names no reply_stream (default iac-code:a2a:responses)",
    },
    {
      key: "consumer-group",
      kind: "string",
      arg: "name",
      help: "redis-streams transport: consumer group of the request stream (default iac-code)",
    },
    {
      key: "thinking-exposure",
      kind: "list",
      arg: "type",
      parse: (value) => parseThinkingExposure(value as string[]),
      help: "tool-trace, raw-thinking, all or none (repeatable or comma-separated; default tool-trace)",
    },
    { key: "debug", kind: "boolean", short: "d", help: "debug logging" },
    { key: "log-to-stdout", kind: "boolean", help: "write logs to stdout instead of stderr" },
    {
      key: "log-format",
      kind: "string",
      arg: "format",
      choices: ["pretty", "json"],
      help: "pretty or json (default: pretty on a terminal, JSON otherwise)",
    },
    {
      key: "token",
      kind: "string",
      arg: "token",
      env: "IACCODE_A2A_HTTP_TOKEN",
      help: "bearer token clients must send (prefer the environment variable: a command line is visible to local users)",
    },
    { key: "basic-username", kind: "string", arg: "user", help: "Basic auth user (with basic-password)" },
    {
      key: "basic-password",
      kind: "string",
      arg: "password",
      help: "Basic auth password (with basic-username)",
    },
    { key: "api-key", kind: "string", arg: "key", help: "API key clients must send" },
    {
      key: "api-key-header",
      kind: "string",
      arg: "header",
      help: "header carrying the API key (default X-API-Key)",
    },
    {
      key: "auth-jwks-url",
      kind: "string",
      arg: "url",
      help: "JWKS of an identity provider: bearer JWTs signed by its keys sign callers in, the subject as the caller (https; http only on loopback; needs auth-audience)",
    },
    {
      key: "auth-issuer",
      kind: "string",
      arg: "url",
      help: "issuer (iss) the JWTs must name (the agent card then declares OpenID Connect discovery at the issuer)",
    },
    { key: "auth-audience", kind: "string", arg: "aud", help: "audience (aud) the JWTs must name" },
    {
      key: "persistence-dir",
      kind: "string",
      arg: "dir",
      help: "state database and artifacts (default ~/.iac-code/a2a, under IAC_CODE_CONFIG_DIR when set)",
    },
    {
      key: "artifact-dir",
      kind: "string",
      arg: "dir",
      help: "artifact payloads (default: artifacts in the persistence dir)",
    },
    {
      key: "sync-every-commit",
      kind: "boolean",
      help: "fsync every state commit: task state also survives a power loss",
    },
    {
      key: "allowed-cwds",
      kind: "list",
      arg: "dirs",
      separator: "path",
      help: "workspace roots a request's cwd must lie in (repeatable or path-separated; default: config dir's workspace, the server's cwd, temp dir)",
    },
    {
      key: "trust-request-cwd",
      kind: "boolean",
      env: "IAC_CODE_A2A_TRUST_REQUEST_CWD",
      help: "accept any absolute metadata.iac_code.cwd, unchecked against allowed-cwds (a caller trusted with the machine)",
    },
    {
      key: "safe-mode",
      kind: "boolean",
      env: "IAC_CODE_A2A_SAFE_MODE",
      help: "server paths become [PATH] on every wire; read-only file tools, skills and cloud tools only; no MCP",
    },
    {
      key: "push-notifications",
      kind: "boolean",
      help: "serve the push config methods and deliver task updates",
    },
    {
      key: "push-queue",
      kind: "string",
      arg: "queue",
      choices: ["local-file", "redis-streams"],
      help: "local-file (default) or redis-streams",
    },
    { key: "push-redis-url", kind: "string", arg: "url", help: "Redis of the redis-streams push queue" },
    { key: "push-stream", kind: "string", arg: "key", help: "push job stream (default iac-code:a2a:push)" },
    {
      key: "push-retry-key",
      kind: "string",
      arg: "key",
      help: "sorted set of push retries (default iac-code:a2a:push:retry)",
    },
    {
      key: "push-dead-stream",
      kind: "string",
      arg: "key",
      help: "push dead letters (default iac-code:a2a:push:dead)",
    },
    {
      key: "push-consumer-group",
      kind: "string",
      arg: "name",
      help: "consumer group of the push workers (default iac-code-push)",
    },
    {
      key: "push-consumer-name",
      kind: "string",
      arg: "name",
      help: "this worker's consumer name (default: host name, pid and a random suffix)",
    },
    {
      key: "push-lease-timeout-ms",
      kind: "integer",
      arg: "ms",
      help: "a claimed push job is delivered again after this long (default 300000)",
    },
    {
      key: "push-allow-private-hosts",
      kind: "list",
      arg: "hosts",
      separator: "comma",
      help: "hostnames, IPs or CIDRs callbacks may reach although private (repeatable or comma-separated; default none)",
    },
    {
      key: "auto-approve-permissions",
      kind: "boolean",
      help: "approve tool permissions without asking (cloud mutations are still denied; audited)",
    },
    {
      key: "idle-context-seconds",
      kind: "number",
      arg: "n",
      help: "seconds before an idle context's runtime is closed (default 3600)",
    },
    {
      key: "required-extensions",
      kind: "list",
      arg: "uri",
      help: "extension URIs clients must request (repeatable or comma-separated)",
    },
    {
      key: "text-mime-types",
      kind: "list",
      arg: "types",
      parse: lowerCase,
      help: "extra media types accepted as text parts (repeatable or comma-separated)",
    },
    {
      key: "multimodal-mime-types",
      kind: "list",
      arg: "types",
      parse: lowerCase,
      help: "extra media types accepted as multimodal parts (repeatable or comma-separated)",
    },
    {
      key: "signing-secret",
      kind: "string",
      arg: "secret",
      help: "HMAC secret: the agent card is signed with JWS HS256",
    },
    {
      key: "tls-cert",
      kind: "string",
      arg: "file",
      help: "PEM certificate; with --tls-key the listeners use TLS",
    },
    { key: "tls-key", kind: "string", arg: "file", help: "PEM private key of --tls-cert" },
    {
      key: "grpc-host",
      kind: "string",
      arg: "host",
      help: "gRPC on its own listener: address (default: host)",
    },
    {
      key: "grpc-port",
      kind: "integer",
      arg: "port",
      help: "gRPC on its own listener: port (default: the main port)",
    },
    {
      key: "provider",
      kind: "string",
      arg: "name",
      env: "IAC_CODE_PROVIDER",
      envReadByRuntime: true,
      help: "LLM provider (dashscope, openai, deepseek, ollama, anthropic, scripted, ...; default: settings.yml, else demo mode)",
    },
    {
      key: "model",
      kind: "string",
      arg: "name",
      env: "IAC_CODE_MODEL",
      envReadByRuntime: true,
      help: "model name",
    },
    {
      key: "base-url",
      kind: "string",
      arg: "url",
      env: "IAC_CODE_BASE_URL",
      envReadByRuntime: true,
      help: "provider base URL (OpenAI-compatible or Anthropic endpoint)",
    },
    {
      key: "script",
      kind: "string",
      arg: "file",
      env: "IAC_CODE_SCRIPT",
      envReadByRuntime: true,
      aliases: { env: ["IAC_CODE_SCRIPT_FILE"] },
      help: "script replayed by the scripted provider (implies --provider scripted)",
    },
    {
      key: "mcp-config",
      kind: "string",
      arg: "file",
      env: "IAC_CODE_MCP_CONFIG",
      envReadByRuntime: true,
      help: "MCP servers file, mcpServers format (stdio command/args/env or http url/headers); default mcp.json in the config dir when it exists",
    },
    {
      key: "mode",
      kind: "string",
      arg: "mode",
      env: "IAC_CODE_MODE",
      envReadByRuntime: true,
      choices: ["normal", "pipeline"],
      help: "run mode of requests that choose none: normal (default) or pipeline",
    },
    {
      key: "pipeline-name",
      kind: "string",
      arg: "name",
      env: "IAC_CODE_PIPELINE_NAME",
      envReadByRuntime: true,
      help: "pipeline of such requests (default selling)",
    },
    ...TIMEOUT_SETTINGS.map((t) => ({ key: t.key, kind: "number" as const, arg: "n", help: t.help })),
  ],
};
