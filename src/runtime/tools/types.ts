// The tool contract. A tool declares its JSON Schema, how it is classified for
// permissions (read-only per input, concurrency, blanket allow), how it is
// described in a permission request, and how it runs.
import type { Language } from "../../i18n/index.js";
import type { ArtifactPayload, InputAnswer, InputRequest, McpToolProgress } from "../seam.js";
import type { CloudContext } from "../cloud/context.js";
import type { Workspace } from "./workspace.js";

/** How a tool call is presented when permission is asked. */
export type ToolDescription = Pick<InputRequest, "title" | "purpose" | "effect" | "target">;

export interface ToolResult {
  /** What the model reads. */
  content: string;
  isError?: boolean;
  /** Structured result for clients (defaults to content). */
  data?: unknown;
  artifact?: ArtifactPayload;
}

export interface ToolContext {
  workspace: Workspace;
  signal: AbortSignal;
  toolUseId: string;
  language: Language;
  /** Publishes intermediate progress (stack polling and the like; mcp: an MCP tool's notification). */
  progress(progress: Record<string, unknown>, mcp?: McpToolProgress): void;
  /** Suspends the tool until the user answers (ask_user_question). */
  askUser(request: InputRequest): Promise<InputAnswer>;
  /**
   * The question with this input id when the tool already asked it (a tool
   * run again after a restart): asking it again gets the same input, and the
   * tool need not rebuild it (e.g. list cloud resources again).
   */
  asked?(inputId: string): InputRequest | undefined;
  cloud?: CloudContext;
}

export interface Tool<Input = Record<string, unknown>> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  /** Read-only calls are allowed without asking. */
  isReadOnly(input: Input): boolean;
  /** Concurrency-safe calls may run in parallel with their read-only neighbours. */
  isConcurrencySafe(input: Input): boolean;
  /** A bare `tool` allow rule may pre-approve it (false for cloud mutations). */
  readonly supportsBlanketAllow: boolean;
  /** File edits inside the workspace, allowed by the accept_edits mode. */
  readonly isFileEdit?: boolean;
  /** Cloud mutations: never blanket-allowed, denied by auto-approve. */
  readonly isCloudMutation?: boolean;
  /**
   * Running it twice has the effect of running it once (the whole file
   * written): a call a restart interrupted after it was allowed runs again,
   * without asking again, instead of ending "interrupted".
   */
  readonly rerunnable?: boolean;
  /** Per-call time limit; 0 = none (tools that wait for a human). */
  readonly timeoutMs?: number;
  /** The text `tool(pattern)` rules are matched against, e.g. a relative path. */
  ruleContent?(input: Input, workspace: Workspace): string | undefined;
  describe(input: Input, lang: Language, workspace: Workspace): ToolDescription;
  /** Cheap checks before permission is asked (e.g. the path stays in the workspace); throw ToolError. */
  precheck?(input: Input, workspace: Workspace): Promise<void>;
  run(input: Input, ctx: ToolContext): Promise<ToolResult>;
}

/** Tools are stored type-erased; their input is validated against inputSchema first. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- heterogeneous registry; inputs are schema-validated before use
export type AnyTool = Tool<any>;
