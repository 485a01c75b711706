// What a session persists, in the runtime store (store/runtime-store.ts),
// under the session's scope:
//   doc session            identity {sessionId, contextId, cwd, createdAt}
//   log conversation       messages and tool results, appended as they happen
//   log usage              token usage per model call
//   log permission-audit   permission decisions (see permissions/audit.ts)
//   doc pending-round      the tool round waiting for human input
//   doc session-rules      allow_always answers of this session
//   doc tool-result/<id>   full text of results too large for the model
// A pipeline step attempt's transcript is a session of its own under the
// part transcript/<attempt>. Secrets (API keys, AccessKey secrets, STS
// tokens) are never written here.
import type { Logger } from "pino";
import { sortResultsByCall, type Message, type ToolResultBlock } from "../messages.js";
import type { PermissionRule } from "../permissions/rules.js";
import type { InputAnswer, InputRequest, TokenUsage } from "../seam.js";
import { parseJsonDoc, type RuntimeStore, type StoreLog, type StoreScope } from "../store/runtime-store.js";

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
  /** announced: its input_received went out (a tool asking it again after a restart does not say it twice). */
  inputs: Array<{ request: InputRequest; answer?: InputAnswer; announced?: true }>;
  /** Side-effecting calls that began running: after a restart they are reported interrupted, not re-run. */
  started?: string[];
}

export type UsageRecord = TokenUsage & { messageId: string; provider: string; model: string };

export type ConversationRow =
  /** insertBefore: a compaction marker is placed before that message, not at the end. */
  | { type: "message"; message: Message; insertBefore?: string }
  | { type: "tool_result"; assistantMessageId: string; block: ToolResultBlock; createdAt: string };

export function resultsMessageId(assistantMessageId: string): string {
  return `${assistantMessageId}_results`;
}

/** What a session persists: its identity, conversation, waiting round and session rules. */
export interface SessionData {
  readonly store: RuntimeStore;
  readonly scope: StoreScope;
  readMeta(): Promise<SessionMeta | undefined>;
  create(meta: SessionMeta): Promise<void>;
  /** Resolves once every staged write is durable. */
  flush(): Promise<void>;
  /** The append methods stage the row and resolve at once (see StoredSession.append). */
  appendMessage(message: Message): Promise<void>;
  appendMarker(marker: Message, insertBefore: string): Promise<void>;
  appendToolResult(assistantMessageId: string, block: ToolResultBlock): Promise<void>;
  appendUsage(record: UsageRecord): Promise<void>;
  loadConversation(): Promise<Message[]>;
  loadPending(): Promise<PendingRound | undefined>;
  savePending(round: PendingRound | undefined): Promise<void>;
  loadSessionRules(): Promise<PermissionRule[]>;
  saveSessionRules(rules: PermissionRule[]): Promise<void>;
  /** Stores a full tool result; returns the name it is stored under. */
  storeLargeResult(toolUseId: string, content: string): Promise<string>;
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
      logger.warn({ session: label, row: i + 1 }, "unreadable conversation row skipped");
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
      logger.warn({ session: label, row: i + 1 }, "tool result without its call skipped");
    }
  }
  for (let i = 1; i < messages.length; i++) {
    const owner = messages[i - 1];
    if (messages[i].id !== resultsMessageId(owner.id)) continue;
    sortResultsByCall(owner, messages[i]);
  }
  return messages;
}

/** Opens the data of a session (or of a step attempt's transcript) in the store; `fresh`: it is new. */
export async function openSessionData(
  store: RuntimeStore,
  scope: StoreScope,
  logger: Logger,
  fresh = false,
): Promise<SessionData> {
  const [conversation, usage] = await Promise.all([
    store.log(scope, "conversation", { fresh }),
    store.log(scope, "usage", { fresh }),
  ]);
  return new StoredSession(store, scope, conversation, usage, logger);
}

class StoredSession implements SessionData {
  constructor(
    readonly store: RuntimeStore,
    readonly scope: StoreScope,
    private readonly conversation: StoreLog,
    private readonly usage: StoreLog,
    private readonly logger: Logger,
  ) {}

  async readMeta(): Promise<SessionMeta | undefined> {
    return parseJsonDoc<SessionMeta>(await this.store.get(this.scope, "session"));
  }

  /** Stages the identity; it is committed before, or with, anything that refers to it. */
  create(meta: SessionMeta): Promise<void> {
    this.store.put(this.scope, "session", JSON.stringify(meta));
    return Promise.resolve();
  }

  flush(): Promise<void> {
    return this.store.commit();
  }

  appendMessage(message: Message): Promise<void> {
    return this.append(this.conversation, { type: "message", message } satisfies ConversationRow);
  }

  /** A compaction marker, inserted before the first kept message when the conversation is rebuilt. */
  appendMarker(marker: Message, insertBefore: string): Promise<void> {
    return this.append(this.conversation, {
      type: "message",
      message: marker,
      insertBefore,
    } satisfies ConversationRow);
  }

  appendToolResult(assistantMessageId: string, block: ToolResultBlock): Promise<void> {
    return this.append(this.conversation, toolResultRow(assistantMessageId, block));
  }

  appendUsage(record: UsageRecord): Promise<void> {
    return this.append(this.usage, { ts: new Date().toISOString(), ...record });
  }

  /**
   * Stages the row: it is committed with whatever the group commit writes next
   * (the task state the server tells a client about, which waits for that
   * commit, or the flush at the end of the turn), so a turn does not wait for a
   * transaction of its own per row. What must be durable before something else
   * happens (the waiting round before a side effect, an audit line) awaits its
   * commit.
   */
  private append(log: StoreLog, record: unknown): Promise<void> {
    log.append([JSON.stringify(record)]);
    return Promise.resolve();
  }

  /**
   * Rebuilds the conversation: tool-result rows are grouped into one user
   * message after their assistant message, in the order of its tool calls.
   * An unreadable row is skipped (and logged), never fatal.
   */
  async loadConversation(): Promise<Message[]> {
    const label = `${this.scope.sessionId}${this.scope.part ? `/${this.scope.part}` : ""}`;
    return rebuildConversation(await this.conversation.read(), this.logger, label);
  }

  async loadPending(): Promise<PendingRound | undefined> {
    const data = parseJsonDoc<PendingRound>(await this.store.get(this.scope, "pending-round"));
    return data?.version === 1 && Array.isArray(data.inputs) ? data : undefined;
  }

  /** Stages (or, with undefined, removes) the pending round; resolves once it is durable. */
  savePending(round: PendingRound | undefined): Promise<void> {
    this.store.put(this.scope, "pending-round", round && JSON.stringify(round));
    return this.store.commit();
  }

  async loadSessionRules(): Promise<PermissionRule[]> {
    const data = parseJsonDoc<{ rules?: PermissionRule[] }>(
      await this.store.get(this.scope, "session-rules"),
    );
    return Array.isArray(data?.rules) ? data.rules : [];
  }

  saveSessionRules(rules: PermissionRule[]): Promise<void> {
    this.store.put(this.scope, "session-rules", JSON.stringify({ rules }));
    return this.store.commit();
  }

  async storeLargeResult(toolUseId: string, content: string): Promise<string> {
    const name = `tool-result/${toolUseId}`;
    this.store.put(this.scope, name, content);
    await this.store.commit();
    return name;
  }
}
