// The MCP servers of a runtime: connected at the first turn that needs them,
// shared by every session, kept across turns, tried again at the next turn
// when they failed or died, closed with the runtime. A turn reads the tools
// of the servers that are up, and a McpTurnView tells it what to announce:
// each new warning once, and the status snapshot when it changed. Loaded
// (with the MCP SDK) only when mcp.json names servers.
import path from "node:path";
import type { Logger } from "pino";
import type { McpStatus } from "../seam.js";
import type { AnyTool } from "../tools/types.js";
import { mcpSecrets, type McpConfig } from "./config.js";
import { McpConnection } from "./connection.js";
import type { McpIssue, McpSource } from "./turn-view.js";
import { resourceTools, serverTool } from "./tools.js";

export class McpManager implements McpSource {
  private readonly connections: McpConnection[];
  private readonly resources: AnyTool[];
  /** Built tools by server, rebuilt when the server lists new ones (a reconnect). */
  private readonly built = new Map<McpConnection, { specs: McpConnection["tools"]; tools: AnyTool[] }>();
  private closed = false;
  readonly secrets: string[];

  constructor(config: McpConfig, logger: Logger, options: { connectTimeoutMs: number }) {
    const sourcePath = config.file ? path.basename(config.file) : undefined;
    this.connections = config.servers.map(
      (server) =>
        new McpConnection(server, logger, {
          connectTimeoutMs: options.connectTimeoutMs,
          ...(sourcePath ? { sourcePath } : {}),
        }),
    );
    this.resources = resourceTools(() => this.connections);
    this.secrets = mcpSecrets(config.servers);
  }

  get configured(): boolean {
    return this.connections.length > 0;
  }

  /** Connects the servers that are not up (all at once); never throws. */
  async ready(): Promise<void> {
    if (this.closed) return;
    await Promise.all(this.connections.map((c) => c.ensureConnected()));
  }

  /** The tools of the servers that are up, then the resource tools (first name wins on a clash). */
  tools(): AnyTool[] {
    if (!this.configured) return [];
    const seen = new Set<string>();
    const out: AnyTool[] = [];
    for (const connection of this.connections) {
      if (!connection.connected) continue;
      let built = this.built.get(connection);
      if (built?.specs !== connection.tools) {
        built = {
          specs: connection.tools,
          tools: connection.tools.map((spec) => serverTool(connection, spec)),
        };
        this.built.set(connection, built);
      }
      for (const tool of built.tools) {
        if (seen.has(tool.name)) continue;
        seen.add(tool.name);
        out.push(tool);
      }
    }
    return [...out, ...this.resources];
  }

  status(): McpStatus {
    return {
      servers: this.connections.map((c) => c.status()),
      warnings: this.connections.flatMap((c) => (c.issue ? [c.issue.warning] : [])),
    };
  }

  /** The current problems, with their identities. */
  issues(): McpIssue[] {
    return this.connections.flatMap((c) => (c.issue ? [c.issue] : []));
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.connections.map((c) => c.close()));
  }
}
