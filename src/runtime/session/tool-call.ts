// One tool call of a round before it runs: the tool it names, its input and
// what was decided about it. A call the model got wrong (unknown tool, bad
// JSON, input against the schema, a path leaving the workspace) gets its
// error result here, before anyone is asked for permission.
import { fsToolError } from "../tools/fs-errors.js";
import { ToolError } from "../errors.js";
import type { ToolUseBlock } from "../messages.js";
import { validateToolInput } from "../tools/registry.js";
import type { AnyTool } from "../tools/types.js";
import type { Workspace } from "../tools/workspace.js";
import { INTERRUPTED_BY_RESTART } from "./conversation.js";
import type { PendingRound } from "./store.js";
import type { Turn } from "./turn.js";

export interface PreparedCall {
  use: ToolUseBlock;
  tool?: AnyTool;
  input: Record<string, unknown>;
  /** A result decided before permission (unknown tool, invalid input, path escape). */
  error?: string;
  allowed?: boolean;
  reason?: string;
}

/** A call with no early error: it names a known tool, and permission decides whether it runs. */
export type RunnableCall = PreparedCall & { tool: AnyTool };

export function runnable(call: PreparedCall): call is RunnableCall {
  return call.error === undefined && call.tool !== undefined;
}

export async function prepareCall(
  turn: Turn,
  use: ToolUseBlock,
  round: PendingRound,
  workspace: Workspace,
): Promise<PreparedCall> {
  const tool = turn.tools.get(use.name);
  const call: PreparedCall = { use, input: use.input, ...(tool ? { tool } : {}) };
  const asked = round.inputs.some(
    (e) => e.request.kind === "ask_user_question" && e.request.toolUseId === use.id,
  );
  if (round.started?.includes(use.id) && !asked && !tool?.rerunnable) {
    // It may have had its effect already: never run it twice (unless twice is once).
    call.error = INTERRUPTED_BY_RESTART;
    return call;
  }
  if (!tool) {
    call.error = `Unknown tool ${use.name}. Available tools: ${[...turn.tools.keys()].join(", ")}.`;
    return call;
  }
  if (use.inputError) {
    call.error = `${use.inputError} Call ${use.name} again with a JSON object of arguments.`;
    return call;
  }
  const invalid = validateToolInput(tool, use.input);
  if (invalid) {
    call.error = invalid;
    return call;
  }
  try {
    await tool.precheck?.(use.input, workspace);
  } catch (error) {
    const readable = error instanceof ToolError ? error : fsToolError(error, workspace);
    if (!readable) throw error;
    call.error = readable.message;
  }
  return call;
}
