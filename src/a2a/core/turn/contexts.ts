// A2A contexts: each contextId is bound to one runtime session, one workspace
// and one owner. Records persist; sessions are opened lazily, reused while the
// context is in use, closed when idle (or when more than MAX_IDLE_CONTEXTS
// idle ones are open, least recently used first), and reopened with the same
// session id. Memory holds running turns and a bounded set of idle sessions.
// A context also keeps its telemetry channel: the last one a message named
// (metadata.iac_code.channel), else the server's default (IAC_CODE_CHANNEL,
// else "unknown").
import type { Logger } from "pino";
import type { AgentRuntime, AgentSession } from "../../../runtime/seam.js";
import type { ContextRecord, ContextStore } from "../../stores/state.js";
import type { TurnExecution } from "./execution.js";

/** Idle contexts kept open at most; older ones are closed (and reopened on demand). */
export const MAX_IDLE_CONTEXTS = 256;

export interface LiveContext {
  record: ContextRecord;
  session?: AgentSession;
  opening?: Promise<AgentSession>;
  execution?: TurnExecution;
  lastUsed: number;
}

export class ContextManager {
  private readonly live = new Map<string, LiveContext>();

  constructor(
    private readonly runtime: AgentRuntime,
    private readonly store: ContextStore,
    private readonly logger: Logger,
    private readonly idleMs: number,
    private readonly workspaceSeen: (cwd: string) => void = () => {},
    private readonly defaultChannel = "unknown",
  ) {}

  /** The context's telemetry channel: its bound one, else the server's default. */
  channelOf(context: LiveContext): string {
    return context.record.channel ?? this.defaultChannel;
  }

  /** Binds a message's channel to the context (persisted with it); none given keeps the bound one. */
  bindChannel(context: LiveContext, channel: string | undefined): void {
    if (!channel || channel === context.record.channel) return;
    context.record.channel = channel;
    this.save(context);
  }

  /** The context in memory, else restored from its record; undefined when unknown. */
  async find(contextId: string): Promise<LiveContext | undefined> {
    const inMemory = this.live.get(contextId);
    if (inMemory) return inMemory;
    const record = await this.store.get(contextId);
    if (!record) return undefined;
    // Another request may have restored it while we awaited.
    const raced = this.live.get(contextId);
    if (raced) return raced;
    const restored: LiveContext = { record: { ...record }, lastUsed: Date.now() };
    this.workspaceSeen(record.cwd);
    this.live.set(contextId, restored);
    this.touch(restored);
    return restored;
  }

  /** Synchronously returns the in-memory context or creates it (not yet persisted). */
  ensure(contextId: string, owner: string, cwd: string): LiveContext {
    let context = this.live.get(contextId);
    if (!context) {
      context = {
        record: { contextId, sessionId: "", cwd, owner, updatedAt: Date.now() },
        lastUsed: Date.now(),
      };
      this.workspaceSeen(cwd);
      this.live.set(contextId, context);
      this.touch(context);
    }
    return context;
  }

  /** The context's session, opened (or restored by session id) on first use. */
  session(context: LiveContext): Promise<AgentSession> {
    context.lastUsed = Date.now();
    if (context.session) return Promise.resolve(context.session);
    context.opening ??= (async () => {
      try {
        const session = await this.runtime.openSession({
          contextId: context.record.contextId,
          cwd: context.record.cwd,
          sessionId: context.record.sessionId || undefined,
        });
        context.session = session;
        if (context.record.sessionId !== session.sessionId) {
          context.record.sessionId = session.sessionId;
          this.save(context);
        }
        return session;
      } finally {
        context.opening = undefined;
      }
    })();
    return context.opening;
  }

  save(context: LiveContext): void {
    context.record.updatedAt = Date.now();
    if (context.record.sessionId) this.store.save(context.record);
  }

  /** Marks the context used now (most recently used last in the map, for the idle bound). */
  touch(context: LiveContext): void {
    context.lastUsed = Date.now();
    const id = context.record.contextId;
    if (this.live.get(id) === context) {
      this.live.delete(id);
      this.live.set(id, context);
    }
    if (this.live.size > MAX_IDLE_CONTEXTS) this.evictOverflow(context);
  }

  /** Closes the least recently used idle contexts beyond the bound (never `keep`). */
  private evictOverflow(keep: LiveContext): void {
    let excess = this.live.size - MAX_IDLE_CONTEXTS;
    for (const [id, context] of this.live) {
      if (excess <= 0) break;
      if (context === keep || context.execution || context.opening) continue;
      this.live.delete(id);
      excess -= 1;
      void this.close(context.session, id, " during eviction");
    }
  }

  /** Closes the sessions of contexts idle for longer than the timeout; records stay. */
  async evictIdle(now = Date.now()): Promise<number> {
    let evicted = 0;
    for (const [id, context] of this.live) {
      if (context.execution || context.opening) continue;
      if (now - context.lastUsed < this.idleMs) continue;
      this.live.delete(id);
      evicted += 1;
      await this.close(context.session, id, " during eviction");
    }
    if (evicted > 0) this.logger.debug({ evicted }, "idle contexts evicted");
    return evicted;
  }

  /** The context if it is in memory (no store read). */
  loaded(contextId: string): LiveContext | undefined {
    return this.live.get(contextId);
  }

  /**
   * Closes the context's cached session (not while a turn runs on it), so the
   * next use reads it again: another replica may have run turns on it since.
   */
  dropSession(contextId: string): void {
    const context = this.live.get(contextId);
    if (!context?.session || context.execution || context.opening) return;
    const session = context.session;
    context.session = undefined;
    void this.close(session, contextId);
  }

  isLoaded(contextId: string): boolean {
    return this.live.has(contextId);
  }

  /** Closes a session; a failure is logged, not thrown. */
  private async close(session: AgentSession | undefined, contextId: string, when = ""): Promise<void> {
    await session?.close().catch((error: unknown) => {
      this.logger.warn({ err: error, contextId }, `session close failed${when}`);
    });
  }

  async closeAll(): Promise<void> {
    for (const [id, context] of this.live) {
      await this.close(context.session, id);
    }
    this.live.clear();
  }
}
