// An unbounded async queue: concurrent producers (tools running in
// parallel) push events, one consumer (the turn's generator) drains them.

export class Channel<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | undefined;

  push(item: T): void {
    this.items.push(item);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Yields queued items until `until` settles and the queue is empty. */
  async *drain(until: Promise<unknown>): AsyncGenerator<T> {
    let settled = false;
    const done = (): void => {
      settled = true;
      const wake = this.wake;
      this.wake = undefined;
      wake?.();
    };
    until.then(done, done);
    for (;;) {
      while (this.items.length > 0) yield this.items.shift() as T;
      if (settled) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}
