// What one turn carries from start to end: the request's overrides, the
// language of server-written text, the abort signal, the tools and cloud
// context resolved for this request's credentials, the system prompt, and
// the secrets to keep out of logs. Built once per runTurn()/resumeTurn();
// the provider is made at the turn's first model call.
import type { Logger } from "pino";
import { normalizeLanguage, type Language } from "../../i18n/index.js";
import type { CloudContext } from "../cloud/context.js";
import { credentialSecrets, resolveCloudCredentials } from "../cloud/credentials.js";
import { AliyunApiClient } from "../cloud/aliyun-api-client.js";
import { RosClient } from "../cloud/ros-client.js";
import { buildSystemPrompt } from "../loop/system-prompt.js";
import type { Provider, ToolDefinition } from "../providers/types.js";
import { discoverSkills, type SkillCatalog } from "../skills/discovery.js";
import { McpTurnView } from "../mcp/turn-view.js";
import type { TurnOverrides } from "../seam.js";
import { turnTools } from "../tools/registry.js";
import type { AnyTool } from "../tools/types.js";
import type { Workspace } from "../tools/workspace.js";
import type { SessionDeps } from "./deps.js";

export interface Turn {
  overrides: TurnOverrides;
  lang: Language;
  signal: AbortSignal;
  provider?: Provider;
  tools: Map<string, AnyTool>;
  toolDefs: ToolDefinition[];
  cloud?: CloudContext;
  /** The skills this turn sees (the `skill` tool's list; pipeline steps load theirs from it). */
  skills: SkillCatalog;
  system: string;
  secrets: string[];
  /** The MCP servers as this turn announces them (when mcp.json names any). */
  mcp?: McpTurnView;
}

export function turnLanguage(overrides: TurnOverrides): Language {
  return normalizeLanguage(overrides.language) ?? "en";
}

/** A turn's tools: by name (to run them) and as the model sees them. */
export function toolSet(tools: AnyTool[]): Pick<Turn, "tools" | "toolDefs"> {
  return {
    tools: new Map(tools.map((tool) => [tool.name, tool])),
    toolDefs: tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    })),
  };
}

export async function startTurn(
  deps: SessionDeps,
  workspace: Workspace,
  logger: Logger,
  overrides: TurnOverrides,
  signal: AbortSignal,
  /** Safe mode's allow-list applies to normal turns; a pipeline's steps keep their tools (DECISIONS). */
  kind: "normal" | "pipeline" = "normal",
): Promise<Turn> {
  const credentials = resolveCloudCredentials({
    override: overrides.alibabaCloud,
    env: deps.env,
    configDir: deps.config.configDir,
    homeDir: deps.homeDir,
    logger,
  });
  const cloud: CloudContext | undefined = credentials
    ? {
        credentials,
        ros: new RosClient({ credentials, endpoint: deps.cloud.endpoint }),
        api: new AliyunApiClient({ credentials, endpoints: deps.cloud.endpoints }),
        pollIntervalMs: deps.cloud.pollIntervalMs,
        maxPollMs: deps.cloud.maxPollMs,
      }
    : undefined;
  const skills = discoverSkills({ configDir: deps.config.configDir, cwd: workspace.cwd, logger });
  // MCP servers connect at the first turn and stay up; a failed one is tried again here, never fails the turn.
  const mcp = deps.mcp?.configured ? deps.mcp : undefined;
  await mcp?.ready();
  const tools = [
    ...turnTools(cloud !== undefined, skills, { safeMode: deps.safeMode && kind === "normal" }),
    ...(mcp?.tools() ?? []),
  ];
  const model = overrides.model ?? deps.config.model;
  return {
    overrides,
    lang: turnLanguage(overrides),
    signal,
    ...toolSet(tools),
    ...(cloud ? { cloud } : {}),
    skills,
    ...(mcp ? { mcp: new McpTurnView(mcp) } : {}),
    system: await buildSystemPrompt({
      cwd: workspace.cwd,
      provider: deps.config.provider.key,
      model,
      regionId: credentials?.regionId,
      cloudTools: cloud !== undefined,
      skills: [...skills.keys()],
    }),
    secrets: [
      overrides.apiKey ?? "",
      deps.config.apiKey ?? "",
      ...credentialSecrets(credentials),
      ...(mcp?.secrets ?? []),
    ].filter(Boolean),
  };
}
