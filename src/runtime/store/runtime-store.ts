// Where the runtime keeps everything a turn writes: a session's identity,
// conversation, usage, waiting tool round, session rules, permission audit and
// large tool results, and its pipeline's journal, snapshot, run, context,
// ledger and step transcripts. One store, no per-session files: the A2A
// server hosts it in its own state store (SQLite tables in state.db, or Redis
// keys with store: redis), so what a turn writes lands in the same group
// commit as the task state it belongs to; a runtime without a server opens
// its own database (standalone-store.ts).
//
// Writes are staged and committed together at the end of the event-loop turn
// (group commit); commit() resolves once what was staged is durable. Reads see
// what was staged before them.

/**
 * A part of a session kept apart: "" (the session itself), "pipeline", or
 * "transcript/<attempt key>" (one step attempt of a pipeline).
 */
export interface StoreScope {
  sessionId: string;
  /** The A2A context the session belongs to (with store: redis, writes are fenced by its lease). */
  contextId: string;
  part: string;
}

/** An ordered log of a scope (the conversation, the usage records, the pipeline journal...). */
export interface StoreLog {
  /** The number the next appended row gets (rows are numbered 1, 2, 3... in append order). */
  readonly nextSeq: number;
  /** Stages rows, numbered from nextSeq on. */
  append(rows: readonly string[]): void;
  /** The rows in order; with `after`, those numbered above it. */
  read(after?: number): Promise<string[]>;
}

export interface RuntimeStore {
  /**
   * The log `name` of a scope. A handle keeps the numbering: a log has one
   * writer at a time, the session (or step attempt) that opened it. `fresh`:
   * the scope is new (a session just created), so the log is known empty.
   */
  log(scope: StoreScope, name: string, options?: { fresh?: boolean }): Promise<StoreLog>;
  /** A document of a scope (undefined when there is none). */
  get(scope: StoreScope, name: string): Promise<string | undefined>;
  /** Stages a document (undefined removes it). */
  put(scope: StoreScope, name: string, value: string | undefined): void;
  /** Resolves once everything staged so far is durable. */
  commit(): Promise<void>;
  /** What a session holds, part by part ("" first): the names of its logs and documents (export). */
  catalog(sessionId: string): Promise<PartCatalog[]>;
  /** Commits what is staged; a store the runtime opened itself is closed too. */
  close(): Promise<void>;
}

export interface PartCatalog {
  part: string;
  logs: string[];
  docs: string[];
}

/** A document or row written as JSON, read back (undefined when absent or unreadable). */
export function parseJsonDoc<T>(text: string | undefined): T | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** The scope of a session's own data. */
export function sessionScope(sessionId: string, contextId: string): StoreScope {
  return { sessionId, contextId, part: "" };
}

/** Another part of the same session. */
export function partOf(scope: StoreScope, part: string): StoreScope {
  return { sessionId: scope.sessionId, contextId: scope.contextId, part };
}

/** One string naming a log or document of a scope (map keys of the implementations). */
export function scopeKey(scope: StoreScope, name: string): string {
  return `${scope.sessionId}\u0000${scope.part}\u0000${name}`;
}
