// The on-disk session: one directory per session under <config>/sessions.
//   session.json            identity {sessionId, contextId, cwd, createdAt}
//   conversation.jsonl      messages and tool results, appended as they happen
//   usage.jsonl             token usage per model call
//   permission-audit.jsonl  permission decisions (see permissions/audit.ts)
//   pending-round.json      the tool round waiting for human input (atomic)
//   session-rules.json      allow_always answers of this session (atomic)
//   tool-results/<id>.txt   full text of results too large for the model
// Secrets (API keys, AccessKey secrets, STS tokens) are never written here.
import { appendFile, readFile, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import { appendJsonLine, ensureDir, SerialQueue, writeFileAtomic } from "../fs-util.js";
import { sortResultsByCall, type Message, type ToolResultBlock } from "../messages.js";
import type { PermissionRule } from "../permissions/rules.js";
import type { InputAnswer, InputRequest } from "../seam.js";

export interface SessionMeta {
  version: 1;
  sessionId: string;
  contextId: string;
  cwd: string;
  createdAt: string;
}

export interface RoundDecision {
  allowed: boolean;
  reason: string;
}

/** A tool round suspended on human input: what a restarted process needs to continue it. */
export interface PendingRound {
  version: 1;
  assistantMessageId: string;
  decisions: Record<string, RoundDecision>;
  inputs: Array<{ request: InputRequest; answer?: InputAnswer }>;
  /** Side-effecting calls that began running: after a restart they are reported interrupted, not re-run. */
  started?: string[];
}

export interface UsageRecord {
  messageId: string;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cachedInputTokens?: number;
  provider: string;
  model: string;
}

type ConversationRow =
  /** insertBefore: a compaction marker is placed before that message, not at the end. */
  | { type: "message"; message: Message; insertBefore?: string }
  | { type: "tool_result"; assistantMessageId: string; block: ToolResultBlock; createdAt: string };

export function resultsMessageId(assistantMessageId: string): string {
  return `${assistantMessageId}_results`;
}

export class SessionStore {
  private readonly queue = new SerialQueue();

  constructor(
    readonly dir: string,
    private readonly logger: Logger,
  ) {}

  static dirFor(configDir: string, sessionId: string): string {
    return path.join(configDir, "sessions", sessionId);
  }

  get auditFile(): string {
    return path.join(this.dir, "permission-audit.jsonl");
  }

  private file(name: string): string {
    return path.join(this.dir, name);
  }

  async readMeta(): Promise<SessionMeta | undefined> {
    try {
      return JSON.parse(await readFile(this.file("session.json"), "utf8")) as SessionMeta;
    } catch {
      return undefined;
    }
  }

  async create(meta: SessionMeta): Promise<void> {
    await ensureDir(this.dir);
    await writeFileAtomic(this.file("session.json"), `${JSON.stringify(meta, null, 2)}\n`, { mode: 0o600 });
  }

  /** Waits for every queued append. */
  flush(): Promise<void> {
    return this.queue.idle();
  }

  appendMessage(message: Message): Promise<void> {
    return this.append("conversation.jsonl", { type: "message", message } satisfies ConversationRow);
  }

  /** A compaction marker, inserted before the first kept message when the conversation is rebuilt. */
  appendMarker(marker: Message, insertBefore: string): Promise<void> {
    return this.append("conversation.jsonl", {
      type: "message",
      message: marker,
      insertBefore,
    } satisfies ConversationRow);
  }

  appendToolResult(assistantMessageId: string, block: ToolResultBlock): Promise<void> {
    const row: ConversationRow = {
      type: "tool_result",
      assistantMessageId,
      block,
      createdAt: new Date().toISOString(),
    };
    return this.append("conversation.jsonl", row);
  }

  appendUsage(record: UsageRecord): Promise<void> {
    return this.append("usage.jsonl", { ts: new Date().toISOString(), ...record });
  }

  private append(name: string, record: unknown): Promise<void> {
    return this.queue.run(() => appendJsonLine(this.file(name), record));
  }

  /**
   * Rebuilds the conversation: tool-result rows are grouped into one user
   * message after their assistant message, in the order of its tool calls.
   * A torn or unreadable line is skipped (and logged), never fatal.
   */
  async loadConversation(): Promise<Message[]> {
    let text: string;
    try {
      text = await readFile(this.file("conversation.jsonl"), "utf8");
    } catch {
      return [];
    }
    if (text.length > 0 && !text.endsWith("\n")) {
      // A torn last line (crash mid-append): end it so the next row starts on a line of its own.
      await this.queue.run(() => appendFile(this.file("conversation.jsonl"), "\n"));
    }
    const messages: Message[] = [];
    const lines = text.split("\n");
    for (const [i, line] of lines.entries()) {
      if (line.trim() === "") continue;
      let row: ConversationRow;
      try {
        row = JSON.parse(line) as ConversationRow;
      } catch {
        this.logger.warn(
          { dir: path.basename(this.dir), line: i + 1 },
          "unreadable conversation line skipped",
        );
        continue;
      }
      if (row.type === "message") {
        const at = row.insertBefore === undefined ? -1 : messages.findIndex((m) => m.id === row.insertBefore);
        if (at >= 0) messages.splice(at, 0, row.message);
        else messages.push(row.message);
        continue;
      }
      const last = messages[messages.length - 1];
      const owner = last?.id === row.assistantMessageId ? last : undefined;
      if (owner && owner.role === "assistant") {
        messages.push({
          id: resultsMessageId(owner.id),
          role: "user",
          content: [row.block],
          createdAt: row.createdAt,
        });
      } else if (last && last.id === resultsMessageId(row.assistantMessageId)) {
        if (!last.content.some((b) => b.type === "tool_result" && b.toolUseId === row.block.toolUseId)) {
          last.content.push(row.block);
        }
      } else {
        this.logger.warn(
          { dir: path.basename(this.dir), line: i + 1 },
          "tool result without its call skipped",
        );
      }
    }
    for (let i = 1; i < messages.length; i++) {
      const owner = messages[i - 1];
      if (messages[i].id !== resultsMessageId(owner.id)) continue;
      sortResultsByCall(owner, messages[i]);
    }
    return messages;
  }

  async loadPending(): Promise<PendingRound | undefined> {
    try {
      const data = JSON.parse(await readFile(this.file("pending-round.json"), "utf8")) as PendingRound;
      return data.version === 1 && Array.isArray(data.inputs) ? data : undefined;
    } catch {
      return undefined;
    }
  }

  /** Writes (or, with undefined, removes) the pending round; ordered with the appends. */
  savePending(round: PendingRound | undefined): Promise<void> {
    return this.queue.run(async () => {
      if (round) {
        await writeFileAtomic(this.file("pending-round.json"), JSON.stringify(round), { mode: 0o600 });
      } else {
        await unlink(this.file("pending-round.json")).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== "ENOENT") throw error;
        });
      }
    });
  }

  async loadSessionRules(): Promise<PermissionRule[]> {
    try {
      const data = JSON.parse(await readFile(this.file("session-rules.json"), "utf8")) as {
        rules?: PermissionRule[];
      };
      return Array.isArray(data.rules) ? data.rules : [];
    } catch {
      return [];
    }
  }

  saveSessionRules(rules: PermissionRule[]): Promise<void> {
    return this.queue.run(() =>
      writeFileAtomic(this.file("session-rules.json"), JSON.stringify({ rules }), { mode: 0o600 }),
    );
  }

  /** Stores a full tool result; returns its name relative to the session directory. */
  async storeLargeResult(toolUseId: string, content: string): Promise<string> {
    const dir = this.file("tool-results");
    await ensureDir(dir);
    const name = `${toolUseId.replace(/[^A-Za-z0-9_.-]/g, "_")}.txt`;
    await writeFile(path.join(dir, name), content, { mode: 0o600 });
    return `tool-results/${name}`;
  }
}
