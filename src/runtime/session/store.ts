// The on-disk session: one directory per session under <config>/sessions.
//   session.json            identity {sessionId, contextId, cwd, createdAt}
//   conversation.jsonl      messages and tool results, appended as they happen
//   usage.jsonl             token usage per model call
//   permission-audit.jsonl  permission decisions (see permissions/audit.ts)
//   pending-round.json      the tool round waiting for human input (atomic)
//   session-rules.json      allow_always answers of this session (atomic)
//   tool-results/<id>.txt   full text of results too large for the model
// Secrets (API keys, AccessKey secrets, STS tokens) are never written here.
// SessionData is what a session persists; SessionStore keeps it in these
// files, RedisSessionData (redis-session-data.ts) keeps what another replica
// needs to continue the context (identity, conversation, pending round, rules,
// usage) in Redis and the rest in the same directory.
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

export type ConversationRow =
  /** insertBefore: a compaction marker is placed before that message, not at the end. */
  | { type: "message"; message: Message; insertBefore?: string }
  | { type: "tool_result"; assistantMessageId: string; block: ToolResultBlock; createdAt: string };

export function resultsMessageId(assistantMessageId: string): string {
  return `${assistantMessageId}_results`;
}

/** What a session persists: its identity, conversation, waiting round and session rules. */
export interface SessionData {
  /** The session's local directory (pipeline files, the runtime's audit log, large tool results). */
  readonly dir: string;
  readonly auditFile: string;
  readMeta(): Promise<SessionMeta | undefined>;
  create(meta: SessionMeta): Promise<void>;
  /** Waits for every queued write. */
  flush(): Promise<void>;
  appendMessage(message: Message): Promise<void>;
  appendMarker(marker: Message, insertBefore: string): Promise<void>;
  appendToolResult(assistantMessageId: string, block: ToolResultBlock): Promise<void>;
  appendUsage(record: UsageRecord): Promise<void>;
  loadConversation(): Promise<Message[]>;
  loadPending(): Promise<PendingRound | undefined>;
  savePending(round: PendingRound | undefined): Promise<void>;
  loadSessionRules(): Promise<PermissionRule[]>;
  saveSessionRules(rules: PermissionRule[]): Promise<void>;
  storeLargeResult(toolUseId: string, content: string): Promise<string>;
}

/** Where sessions are opened: the files under the config dir by default. */
export interface SessionDataFactory {
  open(args: { sessionId: string; contextId: string; dir: string; logger: Logger }): SessionData;
}

export function toolResultRow(assistantMessageId: string, block: ToolResultBlock): ConversationRow {
  return { type: "tool_result", assistantMessageId, block, createdAt: new Date().toISOString() };
}

/**
 * Rebuilds the conversation from its rows (JSON text, in write order): tool
 * results are grouped into one user message after their assistant message,
 * in the order of its tool calls. An unreadable row is skipped (and logged).
 */
export function rebuildConversation(rows: readonly string[], logger: Logger, label: string): Message[] {
  const messages: Message[] = [];
  for (const [i, line] of rows.entries()) {
    if (line.trim() === "") continue;
    let row: ConversationRow;
    try {
      row = JSON.parse(line) as ConversationRow;
    } catch {
      logger.warn({ dir: label, line: i + 1 }, "unreadable conversation line skipped");
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
      logger.warn({ dir: label, line: i + 1 }, "tool result without its call skipped");
    }
  }
  for (let i = 1; i < messages.length; i++) {
    const owner = messages[i - 1];
    if (messages[i].id !== resultsMessageId(owner.id)) continue;
    sortResultsByCall(owner, messages[i]);
  }
  return messages;
}

export const fileSessions: SessionDataFactory = {
  open: ({ dir, logger }) => new SessionStore(dir, logger),
};

export class SessionStore implements SessionData {
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
    return this.append("conversation.jsonl", toolResultRow(assistantMessageId, block));
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
    return rebuildConversation(text.split("\n"), this.logger, path.basename(this.dir));
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
