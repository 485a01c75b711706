// Collects one streamed assistant message (thinking, text, tool calls) into
// a Message, in the order thinking -> text -> tool_use.
import type { ContentBlock, Message, ThinkingBlock, ToolUseBlock } from "../messages.js";
import type { ProviderEvent } from "../providers/types.js";

export class AssistantCollector {
  private readonly thinking: ContentBlock[] = [];
  private current: ThinkingBlock | undefined;
  private text = "";
  private readonly tools: ToolUseBlock[] = [];

  add(event: ProviderEvent): void {
    switch (event.type) {
      case "text_delta":
        this.text += event.text;
        break;
      case "thinking_delta":
        if (event.redactedData !== undefined) {
          this.thinking.push({ type: "redacted_thinking", data: event.redactedData });
          this.current = undefined;
          break;
        }
        if (event.text) {
          if (!this.current) {
            this.current = { type: "thinking", thinking: "" };
            this.thinking.push(this.current);
          }
          this.current.thinking += event.text;
        }
        if (event.signature !== undefined) {
          if (this.current) this.current.signature = event.signature;
          this.current = undefined;
        }
        break;
      case "tool_use_end":
        this.tools.push({
          type: "tool_use",
          id: event.id,
          name: event.name,
          input: event.input,
          ...(event.inputError ? { inputError: event.inputError } : {}),
        });
        break;
      default:
        break;
    }
  }

  get fullText(): string {
    return this.text;
  }

  get hasToolCalls(): boolean {
    return this.tools.length > 0;
  }

  toMessage(id: string): Message | undefined {
    const content: ContentBlock[] = [...this.thinking];
    if (this.text.length > 0) content.push({ type: "text", text: this.text });
    content.push(...this.tools);
    if (content.length === 0) return undefined;
    return { id, role: "assistant", content, createdAt: new Date().toISOString() };
  }
}
