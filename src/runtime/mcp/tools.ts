// MCP tools as the model sees them: each server tool as mcp__<server>__<tool>,
// plus list_mcp_resources and read_mcp_resource. A server tool is read-only
// (allowed without asking) only when the server annotates it readOnlyHint:
// true; any other tool asks permission like the runtime's own write tools.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult, Tool as McpToolSpec } from "@modelcontextprotocol/sdk/types.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import { t } from "../../i18n/index.js";
import { readOnlyDescription } from "../tools/describe.js";
import type { AnyTool, Tool, ToolResult } from "../tools/types.js";
import { McpUnavailableError, type McpConnection } from "./connection.js";

/** Providers accept tool names of at most 64 of these characters. */
const NAME_LIMIT = 64;
const DESCRIPTION_CHARS = 2000;

export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, NAME_LIMIT);
}

// A schema the runtime's validator cannot compile would fail every call: such a tool gets a bare object schema.
const probe = new Ajv2020({ strict: false, allowUnionTypes: true });

function usableSchema(schema: McpToolSpec["inputSchema"]): Record<string, unknown> {
  // Servers often declare draft-07; the keywords they use mean the same under 2020-12.
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  try {
    probe.compile(rest);
    return rest;
  } catch {
    return { type: "object" };
  }
}

/**
 * The server's failure as an error result the model reads; an abort is thrown
 * on (the turn or the time limit ended it). A result, not a ToolError: this
 * module is loaded on demand, and a class test across that boundary is not
 * reliable under every loader.
 */
function callFailure(error: unknown, connection: McpConnection, signal: AbortSignal): ToolResult {
  if (signal.aborted) throw error;
  return failed(
    error instanceof McpUnavailableError
      ? error.message
      : error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number)
        ? `MCP server ${connection.name} disconnected during the call.`
        : `MCP server ${connection.name} failed: ${connection.reason(error)}`,
  );
}

const failed = (content: string): ToolResult => ({ content, isError: true, data: content });

function resultText(result: CallToolResult): string {
  const parts = result.content.map((part) => {
    switch (part.type) {
      case "text":
        return part.text;
      case "image":
      case "audio":
        return `[${part.type} ${part.mimeType}, ${Math.floor((part.data.length * 3) / 4)} bytes]`;
      case "resource":
        return "text" in part.resource ? part.resource.text : `[binary resource ${part.resource.uri}]`;
      case "resource_link":
        return `[resource ${part.uri}]`;
      default:
        return "";
    }
  });
  const text = parts.filter((p) => p !== "").join("\n");
  if (text !== "") return text;
  return result.structuredContent ? JSON.stringify(result.structuredContent) : "(no content)";
}

export function serverTool(connection: McpConnection, spec: McpToolSpec): AnyTool {
  const name = mcpToolName(connection.name, spec.name);
  const readOnly = spec.annotations?.readOnlyHint === true;
  const description = `${spec.description ?? spec.title ?? spec.name} (MCP server ${connection.name})`;
  const tool: Tool = {
    name,
    description: description.slice(0, DESCRIPTION_CHARS),
    inputSchema: usableSchema(spec.inputSchema),
    isReadOnly: () => readOnly,
    isConcurrencySafe: () => readOnly,
    supportsBlanketAllow: true,
    describe: (_input, lang) =>
      readOnly
        ? readOnlyDescription(name, lang, `MCP server ${connection.name}`)
        : {
            title: t(lang, "runtime.tool.generic.title", { tool: name }),
            purpose: t(lang, "runtime.tool.generic.purpose", { tool: name }),
            effect: "local_or_remote_change",
            target: `MCP server ${connection.name}`,
          },
    async run(input, ctx): Promise<ToolResult> {
      let result: CallToolResult;
      try {
        result = await connection.callTool(spec.name, input, ctx.signal, (progress) =>
          ctx.progress(
            { ...progress },
            {
              serverName: connection.name,
              toolName: spec.name,
              progress: progress.progress,
              ...(progress.total !== undefined ? { total: progress.total } : {}),
              ...(progress.message !== undefined ? { message: progress.message } : {}),
            },
          ),
        );
      } catch (error) {
        return callFailure(error, connection, ctx.signal);
      }
      const content = resultText(result);
      return {
        content,
        isError: result.isError === true,
        data: result.structuredContent ?? content,
      };
    },
  };
  return tool;
}

interface ListInput {
  server?: string;
}

interface ReadInput {
  server: string;
  uri: string;
}

/** list_mcp_resources and read_mcp_resource over the connected servers (reads only, by MCP's definition). */
export function resourceTools(connections: () => McpConnection[]): AnyTool[] {
  const find = (server: string): McpConnection | undefined => connections().find((c) => c.name === server);
  const unknown = (server: string): ToolResult =>
    failed(
      `Unknown MCP server ${server}. Servers: ${connections()
        .map((c) => c.name)
        .join(", ")}.`,
    );
  const list: Tool<ListInput> = {
    name: "list_mcp_resources",
    description:
      "List the resources (files, records, documents) the MCP servers offer, as JSON [{server, uri, name, mimeType?, description?}]. Give server to list one server's only.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: { server: { type: "string", minLength: 1, description: "An MCP server name." } },
    },
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    supportsBlanketAllow: true,
    describe: (_input, lang) => readOnlyDescription("list_mcp_resources", lang),
    async run(input, ctx) {
      const named = input.server === undefined ? undefined : find(input.server);
      if (input.server !== undefined && !named) return unknown(input.server);
      const targets = named ? [named] : connections().filter((c) => c.connected && c.resources);
      const out: Record<string, unknown>[] = [];
      for (const connection of targets) {
        try {
          if (!connection.resources) continue;
          for (const r of await connection.listResources(ctx.signal))
            out.push({ server: connection.name, ...r });
        } catch (error) {
          return callFailure(error, connection, ctx.signal);
        }
      }
      return { content: JSON.stringify(out), data: out };
    },
  };
  const read: Tool<ReadInput> = {
    name: "read_mcp_resource",
    description: "Read one resource of an MCP server by its uri (from list_mcp_resources).",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      required: ["server", "uri"],
      properties: {
        server: { type: "string", minLength: 1 },
        uri: { type: "string", minLength: 1 },
      },
    },
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    supportsBlanketAllow: true,
    describe: (input, lang) => readOnlyDescription("read_mcp_resource", lang, `MCP server ${input.server}`),
    async run(input, ctx) {
      const connection = find(input.server);
      if (!connection) return unknown(input.server);
      try {
        const result = await connection.readResource(input.uri, ctx.signal);
        const parts = result.contents.map((c) =>
          "text" in c
            ? c.text
            : `[binary ${c.mimeType ?? "content"} ${c.uri}, ${Math.floor((c.blob.length * 3) / 4)} bytes]`,
        );
        const content = parts.join("\n");
        return { content, data: { server: connection.name, uri: input.uri, text: content } };
      } catch (error) {
        return callFailure(error, connection, ctx.signal);
      }
    },
  };
  return [list as AnyTool, read as AnyTool];
}
