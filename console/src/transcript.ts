// The conversation: user messages, streamed assistant text, collapsible
// reasoning, tool calls with their arguments and results, notes (errors,
// cancellation). Fed the AG-UI events of every run, in order. Assistant text
// and reasoning are Markdown (markdown.ts), rendered again as each delta
// arrives; user text stays as typed.
import { h, keepAtEnd } from "./dom.js";
import type { FilesView } from "./files-view.js";
import { codeBlock } from "./highlight.js";
import { i18nLabel, tr, type MessageKey } from "./i18n.js";
import { num, obj, type Json } from "./json.js";
import { renderMarkdown } from "./markdown.js";

/** An AG-UI event as the console reads it (fields by name; unknown ones ignored). */
export type WireEvent = { type: string } & Record<string, unknown>;

interface ToolView {
  name: string;
  el: HTMLDetailsElement;
  args: string;
  status: HTMLElement;
  progress?: HTMLElement;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * What a tool's progress says: a message and a fraction (MCP progress/total)
 * or a percentage, from the pipeline's tool_progress data or the
 * iac-code.tool-progress.v1 value (whose MCP fields sit under `mcp`).
 */
function toolProgressOf(d: Json): { message: string; value?: number; max?: number } {
  const mcp = { ...obj(d.mcpProgress), ...obj(d.mcp) };
  const p = obj(d.progress);
  const message = [d.message, mcp.message, p.message, p.phase, p.status].find(
    (v): v is string => typeof v === "string" && v !== "",
  );
  const done = num(d.progress) ?? num(mcp.progress);
  const total = num(d.total) ?? num(mcp.total);
  const percentage = num(p.progressPercentage) ?? num(p.percentage);
  if (done !== undefined && total) return { message: message ?? "", value: done, max: total };
  if (percentage !== undefined) return { message: message ?? "", value: percentage, max: 100 };
  return { message: message ?? (done !== undefined ? String(done) : "") };
}

/** Pretty JSON when `text` is JSON, else undefined. */
function prettyJson(text: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return undefined;
  }
}

/** A streamed Markdown message: its element and the text received so far. */
interface Streamed {
  body: HTMLElement;
  text: string;
}

function appendDelta(message: Streamed | undefined, delta: string): void {
  if (!message || delta === "") return;
  message.text += delta;
  renderMarkdown(message.body, message.text);
}

export class Transcript {
  readonly root: HTMLElement;
  private readonly texts = new Map<string, Streamed>();
  private readonly reasonings = new Map<string, Streamed>();
  private readonly tools = new Map<string, ToolView>();
  /** Ids of the messages shown (a conversation snapshot does not repeat them). */
  private readonly shownIds = new Set<string>();
  private wantsHistory = false;

  constructor(
    private readonly files: FilesView,
    private readonly onToolResult: (toolCallId: string, name: string, content: string) => void,
  ) {
    this.root = h("div", { class: "transcript" });
  }

  private add(el: HTMLElement): HTMLElement {
    keepAtEnd(this.scroller(), () => this.root.appendChild(el));
    return el;
  }

  private scroller(): HTMLElement {
    return this.root.parentElement ?? this.root;
  }

  /**
   * A thread opened again after a reload: its conversation comes from the first
   * MESSAGES_SNAPSHOT (an observer's, or the next run's), above what is shown.
   */
  expectHistory(): void {
    this.wantsHistory = true;
  }

  private history(messages: unknown): void {
    if (!this.wantsHistory || !Array.isArray(messages)) return;
    this.wantsHistory = false;
    const later = [...this.root.children].filter(
      (el) => !(el instanceof HTMLElement && el.dataset.i18n === "earlier"),
    );
    this.root.replaceChildren();
    for (const m of messages.map(obj)) {
      const id = str(m.id);
      const text = Array.isArray(m.content)
        ? m.content.map((p) => str(obj(p).text)).join("")
        : str(m.content);
      if (!id || !text || this.shownIds.has(id)) continue;
      if (m.role === "user") this.user(text, id);
      else {
        this.apply({ type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" });
        this.apply({ type: "TEXT_MESSAGE_CONTENT", messageId: id, delta: text });
        this.apply({ type: "TEXT_MESSAGE_END", messageId: id });
      }
    }
    this.root.append(...later);
  }

  user(text: string, id?: string): void {
    if (id) this.shownIds.add(id);
    this.add(
      h(
        "article",
        { class: "msg user" },
        tr("header", "you", undefined, { class: "who" }),
        h("div", { class: "body" }, text),
      ),
    );
  }

  note(key: MessageKey, cls: string, vars?: Record<string, string>): HTMLElement {
    return this.add(tr("p", key, vars, { class: `note ${cls}` }));
  }

  element(el: HTMLElement): void {
    this.add(el);
  }

  apply(ev: WireEvent): void {
    switch (ev.type) {
      case "MESSAGES_SNAPSHOT":
        this.history(ev.messages);
        break;
      case "TEXT_MESSAGE_START": {
        this.shownIds.add(str(ev.messageId));
        const body = h("div", { class: "body md" });
        this.add(
          h(
            "article",
            { class: "msg assistant", "data-message-id": str(ev.messageId) },
            tr("header", "assistant", undefined, { class: "who" }),
            body,
          ),
        );
        this.texts.set(str(ev.messageId), { body, text: "" });
        break;
      }
      case "TEXT_MESSAGE_CONTENT": {
        const message = this.texts.get(str(ev.messageId));
        keepAtEnd(this.scroller(), () => appendDelta(message, str(ev.delta)));
        break;
      }
      case "REASONING_MESSAGE_START": {
        const body = h("div", { class: "body md" });
        this.add(h("details", { class: "reasoning" }, tr("summary", "reasoning"), body));
        this.reasonings.set(str(ev.messageId), { body, text: "" });
        break;
      }
      case "REASONING_MESSAGE_CONTENT":
        appendDelta(this.reasonings.get(str(ev.messageId)), str(ev.delta));
        break;
      case "TOOL_CALL_START": {
        const name = str(ev.toolCallName) || "tool";
        const status = tr("span", "toolRunning", undefined, { class: "tool-status" });
        const el = h(
          "details",
          { class: "tool", "data-tool": name, "data-tool-call-id": str(ev.toolCallId) },
          h(
            "summary",
            {},
            tr("span", "tool", undefined, { class: "tool-label" }),
            " ",
            h("code", {}, name),
            " ",
            status,
          ),
        );
        this.add(el);
        this.tools.set(str(ev.toolCallId), { name, el, args: "", status });
        break;
      }
      case "TOOL_CALL_ARGS": {
        const tool = this.tools.get(str(ev.toolCallId));
        if (tool) tool.args += str(ev.delta);
        break;
      }
      case "TOOL_CALL_END": {
        const tool = this.tools.get(str(ev.toolCallId));
        if (!tool) break;
        const pretty = prettyJson(tool.args);
        tool.el.appendChild(
          h(
            "div",
            { class: "tool-args" },
            tr("h4", "arguments"),
            codeBlock(pretty ?? tool.args, pretty ? "json" : "text"),
          ),
        );
        this.proposeFile(str(ev.toolCallId), tool.args);
        break;
      }
      case "TOOL_CALL_RESULT": {
        const id = str(ev.toolCallId);
        const content = str(ev.content);
        const tool = this.tools.get(id);
        const pretty = prettyJson(content);
        if (tool) {
          tool.el.appendChild(
            h(
              "div",
              { class: "tool-result" },
              tr("h4", "result"),
              codeBlock(pretty ?? content, pretty ? "json" : "text"),
            ),
          );
          tool.status.replaceWith(tr("span", "toolDone", undefined, { class: "tool-status" }));
        }
        this.files.toolFinished(id, !/\b(denied|error)\b/i.test(content.slice(0, 200)));
        this.onToolResult(id, tool?.name ?? "", content);
        break;
      }
      case "RUN_ERROR":
        this.note("error", "error", { code: str(ev.code), message: str(ev.message) });
        break;
      case "CUSTOM": {
        const value = obj(ev.value);
        if (ev.name === "iac-code.tool-progress.v1") this.toolProgress(str(value.toolUseId), value);
        else if (ev.name === "iac-code.pipeline.v1" && value.eventType === "tool_progress") {
          const data = obj(value.data);
          this.toolProgress(str(data.toolUseId), data);
        } else if (ev.name === "iac-code.pipeline.v1" && value.eventType === "pipeline_completed")
          this.outcome(obj(value.data));
        break;
      }
    }
  }

  /**
   * A run that failed or ended early: its own words on why, what is left and
   * what to do next, in the conversation (the pipeline panel shows them too).
   */
  private outcome(data: Json): void {
    const reason = str(data.reason);
    if (!reason || (data.failed !== true && data.earlyExit !== true)) return;
    this.add(
      h(
        "article",
        { class: `msg outcome ${data.failed === true ? "failed" : "early-exit"}` },
        tr("header", data.failed === true ? "outcomeFailed" : "outcomeEarlyExit", undefined, {
          class: "who",
        }),
        h("div", { class: "body" }, reason),
      ),
    );
  }

  /** A tool's progress, on its call's summary line (visible while the call is collapsed). */
  private toolProgress(toolCallId: string, data: Json): void {
    const tool = this.tools.get(toolCallId);
    if (!tool) return;
    const { message, value, max } = toolProgressOf(data);
    const bar =
      value !== undefined
        ? h("progress", { max: max ?? 100, value, ...i18nLabel("toolProgressOf", { name: tool.name }) })
        : null;
    const view = h("span", { class: "tool-progress" }, bar, bar && message ? " " : "", message);
    if (tool.progress) tool.progress.replaceWith(view);
    else tool.status.after(" ", view);
    tool.progress = view;
  }

  /** write_file (or any tool whose arguments are a path and a text content) proposes a file. */
  private proposeFile(toolCallId: string, args: string): void {
    try {
      const parsed = JSON.parse(args) as Record<string, unknown>;
      if (typeof parsed.path === "string" && typeof parsed.content === "string")
        this.files.propose(parsed.path, parsed.content, toolCallId);
    } catch {
      // Arguments that are not JSON carry no file.
    }
  }
}
