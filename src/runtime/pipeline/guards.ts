// Completion guards: declarative checks complete_step makes against the tool
// calls of the step's attempt (e.g. "ros_validate_template succeeded on the
// file you conclude with", "ros_deploy reached CREATE_COMPLETE with this
// stack id"). The attempt's tool log is kept next to its transcript, so the
// checks hold after a restart as well.
import type { PipelineCompletionGuard } from "../../contract/index.js";

/** One finished tool call of a step attempt. */
export interface ToolLogEntry {
  toolUseId: string;
  name: string;
  input: Record<string, unknown>;
  isError: boolean;
  /** The structured result the tool gave (or its text). */
  result: unknown;
  /** What the call decided that its published result does not show (a confirmed deployment, unmasked). */
  record?: unknown;
}

type Condition = NonNullable<PipelineCompletionGuard["when"]>;

/** The value at a dotted path ("a.b") of an object. */
export function valueAt(source: unknown, dotted: string): unknown {
  let value: unknown = source;
  for (const key of dotted.split(".")) {
    if (!value || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function conditionHolds(condition: Condition, conclusion: Record<string, unknown>): boolean {
  const value = valueAt(conclusion, condition.field);
  if ("equals" in condition && !same(value, condition.equals)) return false;
  if ("not_equals" in condition && same(value, condition.not_equals)) return false;
  if (condition.below !== undefined && !(typeof value === "number" && value < condition.below)) return false;
  if (condition.in && !condition.in.some((v) => same(v, value))) return false;
  if (condition.not_in?.some((v) => same(v, value))) return false;
  return true;
}

/** Normalised workspace paths compare equal ("./a.yaml" and "a.yaml"). */
function comparable(value: unknown): unknown {
  return typeof value === "string" ? value.replace(/\\/g, "/").replace(/^(\.\/)+/, "") : value;
}

function callMatches(
  guard: PipelineCompletionGuard,
  call: ToolLogEntry,
  conclusion: Record<string, unknown>,
): boolean {
  if (call.name !== guard.tool) return false;
  if (guard.type === "tool_succeeded" && call.isError) return false;
  for (const [inputKey, field] of Object.entries(guard.input_matches ?? {})) {
    if (!same(comparable(call.input[inputKey]), comparable(valueAt(conclusion, field ?? "")))) return false;
  }
  for (const [resultKey, expected] of Object.entries(guard.result_matches ?? {})) {
    if (!same(valueAt(call.result, resultKey), expected)) return false;
  }
  for (const [resultKey, field] of Object.entries(guard.result_equals ?? {})) {
    if (!same(valueAt(call.result, resultKey), valueAt(conclusion, field ?? ""))) return false;
  }
  return true;
}

/** The messages of the guards a conclusion fails (empty when every guard holds). */
export function checkGuards(
  guards: readonly PipelineCompletionGuard[],
  conclusion: Record<string, unknown>,
  log: readonly ToolLogEntry[],
): string[] {
  return guards
    .filter((guard) => !guard.when || conditionHolds(guard.when, conclusion))
    .filter((guard) => !log.some((call) => callMatches(guard, call, conclusion)))
    .map((guard) => guard.message);
}
