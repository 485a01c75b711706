// The span of one tool call (GenAI semantic conventions: execute_tool), with
// the permission decision that let it run or refused it. The tool's input and
// result stay off the span: they may hold file contents or cloud parameters.
import { failSpan, SpanKind, startSpan, type Span } from "../../server/tracing/index.js";
import type { PreparedCall } from "./tool-call.js";

export type ToolCallOutcome = "ok" | "error" | "cancelled" | "refused";

export function toolCallSpan(call: PreparedCall): Span | undefined {
  return startSpan("iac-code.runtime", `execute_tool ${call.use.name}`, {
    kind: SpanKind.INTERNAL,
    attributes: {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": call.use.name,
      "gen_ai.tool.call.id": call.use.id,
      ...(call.allowed !== undefined ? { "iac_code.permission.allowed": call.allowed } : {}),
      ...(call.reason !== undefined ? { "iac_code.permission.decision": call.reason } : {}),
    },
  });
}

export function endToolCallSpan(span: Span | undefined, outcome: ToolCallOutcome): void {
  if (!span) return;
  span.setAttribute("iac_code.tool.outcome", outcome);
  if (outcome === "error") failSpan(span, new Error(), "tool error");
  span.end();
}
