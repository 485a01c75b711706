// A deterministic provider that replays a script instead of calling a model.
// Rules are tried in order against the request; the first match's reply is
// streamed as provider events. Same script + same conversation = same stream.
import { sleep, throwIfAborted } from "../abort.js";
import { ProviderError } from "../errors.js";
import { isUserPrompt, messageText, toolResults, toolUses, type Message } from "../messages.js";
import type { Script, ScriptMatcher, ScriptStep, ScriptUsage } from "./script-format.js";
import type { Provider, ProviderEvent, ProviderRequest, StopReason } from "./types.js";

interface MatchContext {
  kind: "stream" | "complete";
  system: string;
  /** Pipeline step and candidate named by the system prompt's markers. */
  step?: string;
  candidate?: number;
  userText: string;
  toolsCalled: Set<string>;
  round: number;
  lastToolResult?: { tool?: string; isError: boolean; content: string };
}

export function matchContext(
  messages: readonly Message[],
  kind: "stream" | "complete",
  system = "",
): MatchContext {
  let start = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isUserPrompt(messages[i])) {
      start = i;
      break;
    }
  }
  const toolNames = new Map<string, string>();
  const called = new Set<string>();
  let round = 0;
  for (let i = Math.max(0, start); i < messages.length; i++) {
    const m = messages[i];
    if (m.role !== "assistant") continue;
    if (i > start) round++;
    for (const use of toolUses(m)) {
      toolNames.set(use.id, use.name);
      if (i > start) called.add(use.name);
    }
  }
  const step = /<!--step:([\w.-]+)-->/.exec(system)?.[1];
  const candidate = /<!--candidate:(\d+)-->/.exec(system)?.[1];
  const context: MatchContext = {
    kind,
    system,
    userText: start >= 0 ? messageText(messages[start]) : "",
    toolsCalled: called,
    round,
    ...(step ? { step } : {}),
    ...(candidate !== undefined ? { candidate: Number(candidate) } : {}),
  };
  const last = messages[messages.length - 1];
  if (last?.role === "user") {
    const results = toolResults(last);
    const result = results[results.length - 1];
    if (result) {
      context.lastToolResult = {
        tool: toolNames.get(result.toolUseId),
        isError: result.isError,
        content: result.content,
      };
    }
  }
  return context;
}

/** The groups a rule's patterns captured: lastToolResult.pattern ({{result.N}}) and systemPattern ({{system.N}}). */
interface Groups {
  result: string[];
  system: string[];
}

/** undefined when the rule does not match; else the groups its patterns captured. */
function matchRule(when: ScriptMatcher | undefined, ctx: MatchContext): Groups | undefined {
  if ((when?.kind ?? "stream") !== ctx.kind) return undefined;
  if (!when) return { result: [], system: [] };
  if (!ruleHolds(when, ctx)) return undefined;
  const groups: Groups = { result: [], system: [] };
  const pattern = when.lastToolResult?.pattern;
  if (pattern !== undefined) {
    const found = new RegExp(pattern).exec(ctx.lastToolResult?.content ?? "");
    if (!found) return undefined;
    groups.result = [...found];
  }
  if (when.systemPattern !== undefined) {
    const found = new RegExp(when.systemPattern).exec(ctx.system);
    if (!found) return undefined;
    groups.system = [...found];
  }
  return groups;
}

function ruleHolds(when: ScriptMatcher, ctx: MatchContext): boolean {
  if (when.userText !== undefined && !ctx.userText.includes(when.userText)) return false;
  if (when.userTextPattern !== undefined && !new RegExp(when.userTextPattern).test(ctx.userText))
    return false;
  if (when.toolsCalled?.some((name) => !ctx.toolsCalled.has(name))) return false;
  if (when.toolsNotCalled?.some((name) => ctx.toolsCalled.has(name))) return false;
  if (when.round !== undefined && when.round !== ctx.round) return false;
  if (when.step !== undefined && when.step !== ctx.step) return false;
  if (when.systemText !== undefined && !ctx.system.includes(when.systemText)) return false;
  if (when.candidate !== undefined && when.candidate !== ctx.candidate) return false;
  if (when.lastToolResult) {
    const expected = when.lastToolResult;
    const actual = ctx.lastToolResult;
    if (!actual) return false;
    if (expected.tool !== undefined && expected.tool !== actual.tool) return false;
    if (expected.isError !== undefined && expected.isError !== actual.isError) return false;
    if (expected.contains !== undefined && !actual.content.includes(expected.contains)) return false;
  }
  return true;
}

function chunksOf(value: string | string[], size: number | undefined): string[] {
  if (Array.isArray(value)) return value;
  if (!size || value.length <= size) return [value];
  const out: string[] = [];
  for (let i = 0; i < value.length; i += size) out.push(value.slice(i, i + size));
  return out;
}

function splitInto(text: string, parts: number): string[] {
  const n = Math.max(1, Math.min(parts, text.length));
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function requestChars(request: ProviderRequest): number {
  let chars = request.system.length;
  for (const m of request.messages) chars += JSON.stringify(m.content).length;
  return chars;
}

/** Replaces {{result.N}} / {{system.N}} in every string of the reply with group N of the rule's pattern. */
function fill<T>(value: T, groups: Groups): T {
  if (typeof value === "string") {
    return value.replace(
      /\{\{(result|system)\.(\d+)\}\}/g,
      (_m, from: "result" | "system", n: string) => groups[from][Number(n)] ?? "",
    ) as T;
  }
  if (Array.isArray(value)) return value.map((v: unknown) => fill(v, groups)) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, groups)])) as T;
  }
  return value;
}

const FALLBACK: ScriptStep[] = [{ text: "The script has no reply for this request." }];
const COMPLETE_FALLBACK: ScriptStep[] = [{ text: "Summary of the earlier conversation (scripted)." }];

export class ScriptedProvider implements Provider {
  readonly name = "scripted";
  readonly model: string;
  readonly contextWindow?: number;

  constructor(
    private readonly script: Script,
    model?: string,
  ) {
    this.model = model ?? script.model ?? "scripted";
    if (script.contextWindow !== undefined) this.contextWindow = script.contextWindow;
  }

  async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
    const ctx = matchContext(request.messages, request.kind, request.system);
    let groups: Groups = { result: [], system: [] };
    const rule = this.script.rules.find((r) => {
      const found = matchRule(r.when, ctx);
      if (found) groups = found;
      return found !== undefined;
    });
    const steps = fill(
      rule?.reply ?? (request.kind === "complete" ? COMPLETE_FALLBACK : (this.script.fallback ?? FALLBACK)),
      groups,
    );
    const defaults = this.script.defaults ?? {};
    const chunkDelay = defaults.chunkDelayMs ?? 0;
    let usage: ScriptUsage | undefined;
    let outputChars = 0;
    let toolCalls = 0;
    let emitted = 0;
    const pace = async (): Promise<void> => {
      if (chunkDelay > 0 && emitted++ > 0) await sleep(chunkDelay, request.signal);
    };

    for (const step of steps) {
      throwIfAborted(request.signal);
      if ("text" in step) {
        for (const chunk of chunksOf(step.text, defaults.chunkSize)) {
          await pace();
          outputChars += chunk.length;
          yield { type: "text_delta", text: chunk };
        }
      } else if ("thinking" in step) {
        const chunks = chunksOf(step.thinking, defaults.chunkSize);
        for (const [i, chunk] of chunks.entries()) {
          await pace();
          outputChars += chunk.length;
          const last = i === chunks.length - 1;
          yield {
            type: "thinking_delta",
            text: chunk,
            ...(last && step.signature ? { signature: step.signature } : {}),
          };
        }
      } else if ("toolCall" in step) {
        const call = step.toolCall;
        // Unique within a conversation and identical across replays.
        const id = call.id ?? `call_${request.messages.length}_${toolCalls}`;
        toolCalls++;
        await pace();
        yield { type: "tool_use_start", id, name: call.name };
        const json = JSON.stringify(call.input);
        for (const part of splitInto(json, call.argumentChunks ?? 1)) {
          await pace();
          yield { type: "tool_input_delta", id, partialJson: part };
        }
        outputChars += json.length;
        yield { type: "tool_use_end", id, name: call.name, input: call.input };
      } else if ("usage" in step) {
        usage = step.usage;
      } else if ("delayMs" in step) {
        await sleep(step.delayMs, request.signal);
      } else {
        throw new ProviderError(step.error.kind, step.error.message ?? `scripted ${step.error.kind} error`);
      }
    }
    const stopReason: StopReason = rule?.stopReason ?? (toolCalls > 0 ? "tool_use" : "end_turn");
    usage ??= defaults.usage ?? {
      inputTokens: Math.ceil(requestChars(request) / 4),
      outputTokens: Math.ceil(outputChars / 4),
    };
    yield { type: "message_end", stopReason, usage };
  }
}
