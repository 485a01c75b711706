// The conversation model shared by the loop, the providers and the session
// store. Tool results travel back to the model as a user message made of
// tool_result blocks (Anthropic style); the OpenAI provider converts them.
import { newMessageId } from "./ids.js";

export interface TextBlock {
  type: "text";
  text: string;
}

export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  /** Provider state that must be echoed back verbatim (Anthropic signature). */
  signature?: string;
}

export interface RedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}

export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** Set when the model sent arguments that are not a JSON object. */
  inputError?: string;
}

export interface ToolResultBlock {
  type: "tool_result";
  toolUseId: string;
  content: string;
  isError: boolean;
}

export interface ImageBlock {
  type: "image";
  mediaType: string;
  data: string;
}

export type ContentBlock =
  TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock | ImageBlock;

export type MessageKind = "compaction_summary";

export interface Message {
  id: string;
  role: "user" | "assistant";
  content: ContentBlock[];
  createdAt: string;
  /** Marks special user messages; ordinary messages have none. */
  kind?: MessageKind;
}

/** A new message of one text block. */
export function textMessage(
  role: Message["role"],
  text: string,
  createdAt = new Date().toISOString(),
): Message {
  return { id: newMessageId(), role, content: [{ type: "text", text }], createdAt };
}

export function messageText(message: Message): string {
  return message.content
    .filter((b): b is TextBlock => b.type === "text")
    .map((b) => b.text)
    .join("");
}

export function toolUses(message: Message): ToolUseBlock[] {
  return message.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
}

export function toolResults(message: Message): ToolResultBlock[] {
  return message.content.filter((b): b is ToolResultBlock => b.type === "tool_result");
}

/** Puts the blocks of a results message in the order of the assistant message's tool calls. */
export function sortResultsByCall(assistant: Message, results: Message): void {
  const order = toolUses(assistant).map((u) => u.id);
  const position = (b: ContentBlock): number => order.indexOf(b.type === "tool_result" ? b.toolUseId : "");
  results.content.sort((a, b) => position(a) - position(b));
}

/** A user message typed by the user (not tool results, not a compaction marker). */
export function isUserPrompt(message: Message): boolean {
  return (
    message.role === "user" &&
    message.kind === undefined &&
    !message.content.some((b) => b.type === "tool_result")
  );
}

/** The effective context: everything from the last compaction marker on. */
export function effectiveContext(messages: readonly Message[]): Message[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].kind === "compaction_summary") return messages.slice(i);
  }
  return [...messages];
}
