// mcp.json: the MCP servers the agent may use, in the format other MCP hosts
// read ({"mcpServers": {"<name>": {command, args, env} | {url, headers}}}).
// `${VAR}` (and `${VAR:-default}`) in strings take the runtime's environment,
// so tokens need not be written in the file. Errors name the file and the
// field, never a value: env and header values are secrets.
import { readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../errors.js";

export const MCP_CONFIG_FILE = "mcp.json";

/** Server names become part of tool names (mcp__<server>__<tool>): the characters every provider accepts. */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,40}$/;

interface McpServerBase {
  name: string;
}

export interface McpStdioServer extends McpServerBase {
  transport: "stdio";
  command: string;
  args: string[];
  /** Added to the inherited safe environment of the child; values are secrets. */
  env: Record<string, string>;
  cwd?: string;
}

export interface McpHttpServer extends McpServerBase {
  transport: "http";
  url: string;
  /** Sent with every request; values are secrets. */
  headers: Record<string, string>;
}

export type McpServerConfig = McpStdioServer | McpHttpServer;

export interface McpConfig {
  servers: McpServerConfig[];
  /** The file they came from (for operators' logs; clients see its base name only). */
  file?: string;
}

/** Where mcp.json is: the named file (which must exist), else <config-dir>/mcp.json (optional). */
export function loadMcpConfig(options: {
  configDir: string;
  file?: string;
  env: NodeJS.ProcessEnv;
}): McpConfig {
  const named = options.file !== undefined && options.file.trim() !== "";
  const file = named ? path.resolve(options.file!.trim()) : path.join(options.configDir, MCP_CONFIG_FILE);
  const label = named ? `MCP config ${path.basename(file)}` : MCP_CONFIG_FILE;
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && !named) return { servers: [] };
    throw new ConfigError(
      code === "ENOENT"
        ? `${label} does not exist (mcp-config / IAC_CODE_MCP_CONFIG).`
        : `Cannot read ${label} (${code ?? "read error"}).`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch (error) {
    throw new ConfigError(`${label} is not valid JSON: ${(error as Error).message}`);
  }
  return { servers: parseMcpServers(data, label, options.env), file };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Validates the parsed document; throws ConfigError naming the field. */
export function parseMcpServers(data: unknown, label: string, env: NodeJS.ProcessEnv): McpServerConfig[] {
  if (!isRecord(data)) throw new ConfigError(`${label} must be a JSON object with an mcpServers object.`);
  const servers = data.mcpServers;
  if (servers === undefined) return [];
  if (!isRecord(servers)) throw new ConfigError(`${label}: mcpServers must be an object of servers by name.`);
  return Object.entries(servers).flatMap(([name, entry]) => {
    const where = `${label}: mcpServers.${name}`;
    if (!SERVER_NAME.test(name)) {
      throw new ConfigError(
        `${label}: the server name ${JSON.stringify(name)} must be 1 to 40 letters, digits, _ or - (it becomes part of tool names).`,
      );
    }
    if (!isRecord(entry)) throw new ConfigError(`${where} must be an object.`);
    if (entry.disabled === true) return [];
    if (entry.disabled !== undefined && typeof entry.disabled !== "boolean")
      throw new ConfigError(`${where}.disabled must be true or false.`);
    return [parseServer(name, entry, where, env)];
  });
}

function parseServer(
  name: string,
  entry: Record<string, unknown>,
  where: string,
  env: NodeJS.ProcessEnv,
): McpServerConfig {
  const type = entry.type;
  if (type !== undefined && typeof type !== "string")
    throw new ConfigError(`${where}.type must be a string.`);
  const kind = type?.toLowerCase();
  if (kind === "sse")
    throw new ConfigError(
      `${where}.type: the legacy SSE transport is not supported; use Streamable HTTP (http).`,
    );
  if (kind !== undefined && !["stdio", "http", "streamable-http", "streamable_http"].includes(kind))
    throw new ConfigError(`${where}.type must be stdio or http.`);
  const hasCommand = entry.command !== undefined;
  const hasUrl = entry.url !== undefined;
  if (hasCommand && hasUrl) throw new ConfigError(`${where} has both command and url: give one.`);
  const http =
    kind === "http" || kind === "streamable-http" || kind === "streamable_http" || (!kind && hasUrl);
  if (http) {
    if (hasCommand) throw new ConfigError(`${where}.command is not used by an http server: give url.`);
    const url = expand(requireString(entry.url, `${where}.url`), `${where}.url`, env);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError(`${where}.url is not a valid URL.`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
      throw new ConfigError(`${where}.url must be an http:// or https:// URL.`);
    if (entry.env !== undefined) throw new ConfigError(`${where}.env is only for stdio servers (command).`);
    return {
      name,
      transport: "http",
      url,
      headers: stringMap(entry.headers, `${where}.headers`, env),
    };
  }
  if (!hasCommand)
    throw new ConfigError(`${where} needs command (a stdio server) or url (a Streamable HTTP server).`);
  if (entry.headers !== undefined) throw new ConfigError(`${where}.headers is only for http servers (url).`);
  const command = expand(requireString(entry.command, `${where}.command`), `${where}.command`, env);
  const args = entry.args ?? [];
  if (!Array.isArray(args) || args.some((a) => typeof a !== "string"))
    throw new ConfigError(`${where}.args must be an array of strings.`);
  const cwd =
    entry.cwd === undefined
      ? undefined
      : expand(requireString(entry.cwd, `${where}.cwd`), `${where}.cwd`, env);
  return {
    name,
    transport: "stdio",
    command,
    args: (args as string[]).map((a, i) => expand(a, `${where}.args[${i}]`, env)),
    env: stringMap(entry.env, `${where}.env`, env),
    ...(cwd !== undefined ? { cwd: path.resolve(cwd) } : {}),
  };
}

function requireString(value: unknown, where: string): string {
  if (typeof value !== "string" || value.trim() === "")
    throw new ConfigError(`${where} must be a non-empty string.`);
  return value;
}

function stringMap(value: unknown, where: string, env: NodeJS.ProcessEnv): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value)) throw new ConfigError(`${where} must be an object of strings.`);
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    // The value is a secret: the message names the key only.
    if (typeof v !== "string") throw new ConfigError(`${where}.${key} must be a string.`);
    out[key] = expand(v, `${where}.${key}`, env);
  }
  return out;
}

/** ${VAR} and ${VAR:-default} from the environment; an unset variable without default is an error. */
function expand(value: string, where: string, env: NodeJS.ProcessEnv): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (_m, name: string, fallback?: string) => {
      const found = env[name];
      if (found !== undefined && found !== "") return found;
      if (fallback !== undefined) return fallback;
      throw new ConfigError(`${where} refers to \${${name}}, which is not set in the environment.`);
    },
  );
}

/** Every value that must never reach a log or a client: env and header values, URL credentials and query values. */
export function mcpSecrets(servers: readonly McpServerConfig[]): string[] {
  const out: string[] = [];
  for (const server of servers) {
    if (server.transport === "stdio") out.push(...Object.values(server.env));
    else {
      out.push(...Object.values(server.headers));
      // A bearer header's token alone, too (the header may be echoed without its scheme).
      for (const v of Object.values(server.headers)) {
        const token = /^\S+\s+(\S+)$/.exec(v)?.[1];
        if (token) out.push(token);
      }
      const url = new URL(server.url);
      if (url.password) out.push(url.password);
      for (const v of url.searchParams.values()) out.push(v);
    }
  }
  return [...new Set(out.filter((s) => s.length >= 4))];
}
