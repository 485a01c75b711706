// One MCP server: its client connection (a child process over stdio, or
// Streamable HTTP), the tools it offers, and what went wrong with it last.
// A failure never throws out of connect(): the server is marked failed and
// its warning kept, so that a turn goes on without its tools. Messages are
// built here from the server name and a redacted reason: a command line, an
// env or header value or a URL never reaches a client.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, Progress, Tool as McpToolSpec } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { VERSION } from "../../version.js";
import { errorMessage, redactSecrets } from "../errors.js";
import type { McpServerStatus, McpWarning } from "../seam.js";
import { mcpSecrets, type McpServerConfig } from "./config.js";
import type { McpIssue } from "./turn-view.js";

/** A call may run as long as its tool's time limit allows; the SDK's own 60 s default would cut it first. */
const CALL_TIMEOUT_MS = 24 * 3600 * 1000;
/** Longest reason kept in a warning. */
const REASON_CHARS = 300;

export type McpWarningCode = "start_failed" | "disconnected";

let issues = 0;
let progressTokens = 0;

export class McpConnection {
  private state: McpServerStatus["status"] = "pending";
  private client: Client | undefined;
  private connecting: Promise<void> | undefined;
  private closing = false;
  /** The server's tools as it listed them. */
  tools: McpToolSpec[] = [];
  /** Whether the server offers resources. */
  resources = false;
  /** The last problem; cleared when the server connects again. */
  issue: McpIssue | undefined;
  private readonly secrets: string[];
  /** Progress listeners of running calls, by the progress token this client gave them. */
  private readonly progress = new Map<string, (progress: Progress) => void>();

  constructor(
    readonly config: McpServerConfig,
    private readonly logger: Logger,
    private readonly options: { connectTimeoutMs: number; sourcePath?: string },
  ) {
    this.secrets = mcpSecrets([config]);
  }

  get name(): string {
    return this.config.name;
  }

  get connected(): boolean {
    return this.state === "connected";
  }

  status(): McpServerStatus {
    return {
      name: this.name,
      transport: this.config.transport,
      status: this.state,
      toolCount: this.connected ? this.tools.length : 0,
      ...(this.connected ? { resources: this.resources } : {}),
    };
  }

  /** Connects when not connected (a failed or lost server is tried again); concurrent callers share one attempt. */
  ensureConnected(): Promise<void> {
    if (this.connected || this.closing) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new Client({ name: "iac-code", version: VERSION });
    try {
      const transport = this.transport();
      await client.connect(transport, { timeout: this.options.connectTimeoutMs });
      this.routeProgress(transport);
      const capabilities = client.getServerCapabilities() ?? {};
      const tools: McpToolSpec[] = [];
      if (capabilities.tools) {
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : {}, {
            timeout: this.options.connectTimeoutMs,
          });
          tools.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor);
      }
      if (this.closing) {
        await client.close().catch(() => undefined);
        return;
      }
      this.tools = tools;
      this.resources = capabilities.resources !== undefined;
      this.client = client;
      this.state = "connected";
      this.issue = undefined;
      // Set after the handshake: a failed start is reported once, as start_failed.
      client.onclose = () => this.lost(client);
      client.onerror = (error) =>
        this.logger.debug({ mcpServer: this.name, err: this.reason(error) }, "MCP client error");
      this.logger.info({ mcpServer: this.name, tools: tools.length }, "MCP server connected");
    } catch (error) {
      await client.close().catch(() => undefined);
      this.state = "failed";
      this.tools = [];
      this.warn("start_failed", `MCP server ${this.name} could not start: ${this.reason(error)}`);
    }
  }

  private transport(): Transport {
    const { config } = this;
    if (config.transport === "http") {
      return new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers },
      });
    }
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      env: { ...getDefaultEnvironment(), ...config.env },
      ...(config.cwd ? { cwd: config.cwd } : {}),
      // Piped, not inherited: the server's own stderr is not ours to print (it may hold its env).
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => {
      this.logger.debug(
        { mcpServer: this.name, stderr: redactSecrets(chunk.toString("utf8"), this.secrets).slice(0, 2000) },
        "MCP server stderr",
      );
    });
    return transport;
  }

  /**
   * Progress notifications are taken off the transport as they arrive. The
   * SDK handles notifications a microtask later than responses, so the last
   * progress of a call that ends in the same read would find its handler
   * gone; read here, each one reaches the call before its result does.
   */
  private routeProgress(transport: Transport): void {
    const inner = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if ("method" in message && message.method === "notifications/progress" && !("id" in message)) {
        const params = (message.params ?? {}) as Progress & { progressToken?: unknown };
        const listener =
          typeof params.progressToken === "string" ? this.progress.get(params.progressToken) : undefined;
        if (listener && typeof params.progress === "number") {
          listener(params);
          return;
        }
      }
      inner?.(message, extra);
    };
  }

  /** The connection went away (the process died, the HTTP session ended) outside close(). */
  private lost(client: Client): void {
    if (this.closing || this.client !== client) return;
    this.client = undefined;
    this.state = "disconnected";
    this.tools = [];
    this.warn("disconnected", `MCP server ${this.name} disconnected; it is tried again at the next turn.`);
  }

  private warn(code: McpWarningCode, message: string): void {
    const warning: McpWarning = {
      serverName: this.name,
      code,
      message,
      severity: "fatal",
      source: "mcp-config",
      ...(this.options.sourcePath ? { sourcePath: this.options.sourcePath } : {}),
    };
    this.issue = { id: ++issues, warning };
    this.logger.warn({ mcpServer: this.name, code }, message);
  }

  /** A failure's reason without secrets, URLs or command lines, cut short. */
  reason(error: unknown): string {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    let text = errorMessage(error);
    if (code === "ENOENT" && this.config.transport === "stdio") text = "the command was not found (ENOENT)";
    text = redactSecrets(text, this.secrets).replace(/\bhttps?:\/\/\S+/g, "[url]");
    if (this.config.transport === "stdio") text = text.split(this.config.command).join("[command]");
    return text.length > REASON_CHARS ? `${text.slice(0, REASON_CHARS)}…` : text;
  }

  private live(): Client {
    if (!this.client || !this.connected) throw new McpUnavailableError(this.name);
    return this.client;
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    onProgress: (progress: Progress) => void,
  ): Promise<CallToolResult> {
    const client = this.live();
    const progressToken = `iac-code-${++progressTokens}`;
    this.progress.set(progressToken, onProgress);
    try {
      const result = await client.callTool({ name, arguments: args, _meta: { progressToken } }, undefined, {
        signal,
        timeout: CALL_TIMEOUT_MS,
      });
      return result as CallToolResult;
    } finally {
      this.progress.delete(progressToken);
    }
  }

  async listResources(
    signal: AbortSignal,
  ): Promise<{ uri: string; name: string; mimeType?: string; description?: string }[]> {
    const client = this.live();
    const out: { uri: string; name: string; mimeType?: string; description?: string }[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor ? { cursor } : {}, { signal });
      for (const r of page.resources)
        out.push({
          uri: r.uri,
          name: r.name,
          ...(r.mimeType ? { mimeType: r.mimeType } : {}),
          ...(r.description ? { description: r.description } : {}),
        });
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  }

  async readResource(uri: string, signal: AbortSignal) {
    return this.live().readResource({ uri }, { signal });
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    this.state = "pending";
    if (!client) return;
    try {
      const transport = client.transport;
      // An HTTP session is ended on the server too (DELETE), as the spec asks.
      if (transport instanceof StreamableHTTPClientTransport)
        await transport.terminateSession().catch(() => undefined);
      await client.close();
    } catch (error) {
      this.logger.debug({ mcpServer: this.name, err: this.reason(error) }, "MCP server close failed");
    }
  }
}

export class McpUnavailableError extends Error {
  constructor(readonly serverName: string) {
    super(`MCP server ${serverName} is not connected.`);
  }
}
