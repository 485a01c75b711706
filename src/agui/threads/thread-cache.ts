// The thread documents a store keeps in memory: at most a limit of them, the
// least recently used idle ones leaving first, so an adapter that has served
// many threads does not keep them all (15,818 one-run threads held 16.5 MiB
// before this limit). A document in use (a run on its thread, an interrupt
// waiting) always stays, past the limit if need be: callers hold it, mutate
// it and save it, and the idle check and the interrupt gauge read the waiting ones.
/** Documents kept in memory (a few hundred bytes to a few KiB each). */
export const DEFAULT_THREAD_CACHE_LIMIT = 1000;

export class ThreadCache<E extends { doc: object }> {
  /** Whether a document is in use (never evicted); the adapter sets it. */
  inUse: (doc: E["doc"]) => boolean = () => false;
  private readonly entries = new Map<string, E>();

  constructor(private readonly limit = DEFAULT_THREAD_CACHE_LIMIT) {}

  /** The entry, now the most recently used. */
  get(threadId: string): E | undefined {
    const entry = this.entries.get(threadId);
    if (entry) this.touch(threadId, entry);
    return entry;
  }

  set(threadId: string, entry: E): void {
    this.touch(threadId, entry);
    if (this.entries.size > this.limit) this.trim();
  }

  delete(threadId: string): void {
    this.entries.delete(threadId);
  }

  docs(): Array<E["doc"]> {
    return [...this.entries.values()].map((entry) => entry.doc);
  }

  private touch(threadId: string, entry: E): void {
    this.entries.delete(threadId);
    this.entries.set(threadId, entry);
  }

  /** Evicts idle documents, oldest first, down to the limit (those in use stay, even past it). */
  private trim(): void {
    for (const [threadId, entry] of this.entries) {
      if (this.entries.size <= this.limit) return;
      if (!this.inUse(entry.doc)) this.entries.delete(threadId);
    }
  }
}
