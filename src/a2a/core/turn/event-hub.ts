// Fan-out of one task's live events to every stream watching it. Each
// subscriber has its own queue, so a slow reader never drops events for the
// others; a subscriber that goes away (abort) just stops receiving.

interface Subscriber<T> {
  queue: T[];
  wake?: () => void;
  ended: boolean;
}

export class EventHub<T> {
  private readonly subscribers = new Set<Subscriber<T>>();
  private closedFlag = false;

  get closed(): boolean {
    return this.closedFlag;
  }

  publish(event: T): void {
    if (this.closedFlag) return;
    for (const sub of this.subscribers) {
      sub.queue.push(event);
      sub.wake?.();
    }
  }

  close(): void {
    this.closedFlag = true;
    for (const sub of this.subscribers) {
      sub.ended = true;
      sub.wake?.();
    }
  }

  /** Events published from now on, until close() or signal abort. */
  subscribe(signal?: AbortSignal): AsyncIterableIterator<T> {
    const sub: Subscriber<T> = { queue: [], ended: this.closedFlag };
    this.subscribers.add(sub);
    const end = () => {
      sub.ended = true;
      sub.queue.length = 0;
      this.subscribers.delete(sub);
      sub.wake?.();
    };
    signal?.addEventListener("abort", end, { once: true });
    if (signal?.aborted) end();
    const iterator: AsyncIterableIterator<T> = {
      next: async (): Promise<IteratorResult<T>> => {
        for (;;) {
          const event = sub.queue.shift();
          if (event !== undefined) return { value: event, done: false };
          if (sub.ended) {
            this.subscribers.delete(sub);
            signal?.removeEventListener("abort", end);
            return { value: undefined, done: true };
          }
          await new Promise<void>((resolve) => (sub.wake = resolve));
          sub.wake = undefined;
        }
      },
      return: (): Promise<IteratorResult<T>> => {
        end();
        signal?.removeEventListener("abort", end);
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }
}
