// Every setting of `iac-code agui` and `iac-code serve`: flag, agui-server.yml
// key and environment variable (IAC_CODE_AGUI_<KEY>). Adding a setting: one
// entry here, its property in schemas/config/agui-server.json, its field in
// AguiSettings (src/agui/config.ts), and its README row
// (test/server/settings-table.test.ts prints the row when it is missing).
import type { SettingsTable } from "../server/settings.js";
import { TIMEOUT_SETTINGS } from "../server/timeouts.js";

export const AGUI_SETTINGS: SettingsTable = {
  envPrefix: "IAC_CODE_AGUI_",
  settings: [
    {
      key: "config",
      kind: "string",
      arg: "path",
      noFileKey: true,
      help: "YAML config file, agui-server.yml (keys with - or _)",
    },
    { key: "host", kind: "string", arg: "host", help: "address to bind (default 127.0.0.1)" },
    { key: "port", kind: "integer", arg: "port", help: "port to bind (default 8000; 0 picks a free port)" },
    {
      key: "a2a-url",
      kind: "string",
      arg: "url",
      commands: ["agui"],
      help: "loopback A2A server to use (default: start a managed one)",
    },
    {
      key: "a2a-token",
      kind: "string",
      arg: "token",
      commands: ["agui"],
      help: "bearer token sent to the --a2a-url server",
    },
    {
      key: "a2a-wait-seconds",
      kind: "number",
      arg: "seconds",
      help: "how long a run waits for an unreachable A2A server to come back before RUN_ERROR A2A_UNAVAILABLE (default 30; 0 = fail at once)",
    },
    {
      key: "a2a-config",
      kind: "string",
      arg: "path",
      help: "config file of the managed A2A server (a2a-server.yml)",
    },
    {
      key: "provider",
      kind: "string",
      arg: "name",
      env: "IAC_CODE_PROVIDER",
      envReadByRuntime: true,
      help: "LLM provider of the managed A2A server (dashscope, openai, deepseek, ollama, anthropic, scripted, ...; default: settings.yml, else demo mode)",
    },
    {
      key: "model",
      kind: "string",
      arg: "name",
      env: "IAC_CODE_MODEL",
      envReadByRuntime: true,
      help: "model name of the managed A2A server",
    },
    {
      key: "base-url",
      kind: "string",
      arg: "url",
      env: "IAC_CODE_BASE_URL",
      envReadByRuntime: true,
      help: "provider base URL of the managed A2A server (OpenAI-compatible or Anthropic endpoint)",
    },
    {
      key: "auth-token",
      kind: "string",
      arg: "token",
      help: "bearer token clients must send (prefer the environment variable: a command line is visible to local users)",
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
      help: "issuer (iss) the JWTs must name (default: any issuer of the key set)",
    },
    { key: "auth-audience", kind: "string", arg: "aud", help: "audience (aud) the JWTs must name" },
    {
      key: "cors-origins",
      flag: "cors-origin",
      kind: "list",
      arg: "origin",
      help: "browser origin allowed to call the adapter, e.g. https://app.example.com (repeatable; default none)",
    },
    {
      key: "console",
      kind: "boolean",
      help: "serve the browser console at /console (default: on when host is a loopback address)",
    },
    {
      key: "allowed-cwds",
      kind: "list",
      arg: "dirs",
      separator: "path",
      help: "workspace roots a request's cwd must lie in (repeatable or path-separated; default: config dir's workspace, the adapter's cwd, temp dir)",
    },
    {
      key: "state-dir",
      kind: "string",
      arg: "dir",
      help: "thread state root (default ~/.iac-code/agui, under IAC_CODE_CONFIG_DIR when set)",
    },
    {
      key: "sync-every-commit",
      kind: "boolean",
      help: "fsync every thread state write, and every commit of the managed A2A server: state also survives a power loss (default: it survives the process being killed)",
    },
    {
      key: "thread-store",
      kind: "string",
      arg: "kind",
      choices: ["file", "redis"],
      help: "file (default: one file per thread under state-dir) or redis (shared by the adapter's replicas)",
    },
    {
      key: "redis-url",
      kind: "string",
      arg: "url",
      help: "Redis URL of thread-store redis (redis:// or rediss://)",
    },
    {
      key: "idle-shutdown",
      kind: "number",
      arg: "seconds",
      help: "stop after this many idle seconds (default 0: never)",
    },
    {
      key: "interrupt-ttl",
      kind: "integer",
      arg: "seconds",
      help: "seconds an interrupt stays answerable (default 540)",
    },
    { key: "debug", kind: "boolean", short: "d", help: "debug logging" },
    {
      key: "log-to-stdout",
      kind: "boolean",
      aliases: { flags: ["log-stdout"], keys: ["log-stdout"] },
      help: "write logs to stdout instead of stderr",
    },
    {
      key: "log-format",
      kind: "string",
      arg: "format",
      choices: ["pretty", "json"],
      help: "pretty or json (default: pretty on a terminal, JSON otherwise)",
    },
    ...TIMEOUT_SETTINGS.map((t) => ({ key: t.key, kind: "number" as const, arg: "n", help: t.help })),
  ],
};
