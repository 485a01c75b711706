// A2A contexts: each contextId is bound to one runtime session, one workspace
// and one owner. Records persist; sessions are opened lazily, reused while the
// context is in use, closed when idle, and reopened with the same session id.
import type { Logger } from "pino";
import type { AgentRuntime, AgentSession } from "../../runtime/seam.js";
import type { ContextRecord, ContextStore } from "../stores/context-store.js";
import type { TurnExecution } from "./execution.js";

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
  ) {}

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
    this.live.set(contextId, restored);
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
      this.live.set(contextId, context);
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
          await this.save(context);
        }
        return session;
      } finally {
        context.opening = undefined;
      }
    })();
    return context.opening;
  }

  async save(context: LiveContext): Promise<void> {
    context.record.updatedAt = Date.now();
    if (context.record.sessionId) await this.store.put(context.record);
  }

  touch(context: LiveContext): void {
    context.lastUsed = Date.now();
  }

  /** Closes the sessions of contexts idle for longer than the timeout; records stay. */
  async evictIdle(now = Date.now()): Promise<number> {
    let evicted = 0;
    for (const [id, context] of this.live) {
      if (context.execution || context.opening) continue;
      if (now - context.lastUsed < this.idleMs) continue;
      this.live.delete(id);
      evicted += 1;
      await context.session?.close().catch((error: unknown) => {
        this.logger.warn({ err: error, contextId: id }, "session close failed during eviction");
      });
    }
    if (evicted > 0) this.logger.debug({ evicted }, "idle contexts evicted");
    return evicted;
  }

  isLoaded(contextId: string): boolean {
    return this.live.has(contextId);
  }

  executions(): TurnExecution[] {
    return [...this.live.values()].flatMap((c) => (c.execution ? [c.execution] : []));
  }

  async closeAll(): Promise<void> {
    for (const [id, context] of this.live) {
      await context.session?.close().catch((error: unknown) => {
        this.logger.warn({ err: error, contextId: id }, "session close failed");
      });
    }
    this.live.clear();
    await this.store.flush();
  }
}
