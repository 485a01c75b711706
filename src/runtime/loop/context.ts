// Context-size estimation and the compaction plan. The estimate counts
// characters (CJK text is denser) because exact tokenisers differ per model;
// compaction only needs to know when the conversation nears the window.
import { isUserPrompt, type Message } from "../messages.js";
import type { ToolDefinition } from "../providers/types.js";

const WINDOWS: Array<[RegExp, number]> = [
  [/^qwen3\.[5-9]|^qwen3-max|^qwen-(plus|flash|long|turbo)|^qwen3\.8/, 1_000_000],
  [/^claude/, 200_000],
  [/^gpt-5|^gpt-4\.1/, 400_000],
  [/^(deepseek|kimi|glm)/, 128_000],
];
export const DEFAULT_CONTEXT_WINDOW = 128_000;

export function contextWindowFor(model: string): number {
  const m = model.toLowerCase();
  return WINDOWS.find(([pattern]) => pattern.test(m))?.[1] ?? DEFAULT_CONTEXT_WINDOW;
}

const CJK = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]/g;

export function estimateTextTokens(text: string): number {
  const cjk = text.match(CJK)?.length ?? 0;
  return Math.ceil((text.length - cjk) / 4 + cjk / 1.5);
}

/**
 * The estimate of the parts every model call of a turn repeats (the system
 * prompt, the tool definitions), kept by value: consecutive turns mostly have
 * the same, and counting a long text costs a scan of it.
 */
const fixedEstimates = new Map<string, number>();
const MAX_FIXED_ESTIMATES = 64;

function fixedTokens(key: string, text: () => string): number {
  let tokens = fixedEstimates.get(key);
  if (tokens === undefined) {
    tokens = estimateTextTokens(text());
    if (fixedEstimates.size >= MAX_FIXED_ESTIMATES) fixedEstimates.clear();
    fixedEstimates.set(key, tokens);
  }
  return tokens;
}

export function estimateTokens(
  system: string,
  messages: readonly Message[],
  tools: readonly ToolDefinition[],
): number {
  // Tools are the process's own: the same names are the same definitions.
  const toolsKey = `tools:${tools.map((t) => t.name).join(",")}`;
  let total = fixedTokens(system, () => system) + fixedTokens(toolsKey, () => JSON.stringify(tools));
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "text") total += estimateTextTokens(block.text);
      else if (block.type === "thinking") total += estimateTextTokens(block.thinking);
      else if (block.type === "tool_use") total += estimateTextTokens(JSON.stringify(block.input)) + 10;
      else if (block.type === "tool_result") total += estimateTextTokens(block.content) + 10;
      else if (block.type === "image") total += 1000;
    }
    total += 4;
  }
  return total;
}

/**
 * Where to cut the effective context: everything before the returned index
 * is summarised, the rest kept. Keeps the last `keepTurns` user turns; when
 * one long turn fills the window, keeps its last messages instead, never
 * separating a tool call from its results. Returns 0 when nothing can go.
 */
export function compactionSplit(messages: readonly Message[], keepTurns: number): number {
  const prompts: number[] = [];
  messages.forEach((m, i) => {
    if (isUserPrompt(m)) prompts.push(i);
  });
  if (prompts.length > keepTurns) return prompts[prompts.length - keepTurns];
  // Relaxed split inside a long turn: keep the last 6 messages.
  let split = messages.length - 6;
  if (split <= 1) return 0;
  // Start the kept part at an assistant message or a prompt, never at tool results.
  while (split > 1 && messages[split].role === "user" && !isUserPrompt(messages[split])) split--;
  return split > 1 ? split : 0;
}

function cut(text: string, max = 2000): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The older history as plain text for the summarising call. */
export function renderForSummary(messages: readonly Message[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    for (const block of m.content) {
      if (block.type === "text")
        lines.push(
          `${m.kind ? "Earlier summary" : m.role === "user" ? "User" : "Assistant"}: ${cut(block.text)}`,
        );
      else if (block.type === "tool_use")
        lines.push(`[tool call ${block.name} ${cut(JSON.stringify(block.input))}]`);
      else if (block.type === "tool_result")
        lines.push(`[tool result${block.isError ? " (error)" : ""}: ${cut(block.content)}]`);
    }
  }
  return lines.join("\n");
}

export const SUMMARY_SYSTEM_PROMPT =
  "Summarise the conversation below concisely for the assistant that continues it. Keep every decision, " +
  "file name and path, resource, stack id, open question, status and error. Write plain text, no preamble.";
