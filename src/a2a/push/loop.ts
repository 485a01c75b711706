// The push loops (the delivery worker, the relay to Redis): one async loop
// each, started once, stopped by stop(), which cuts a rest between polls short
// and waits for the round in flight.
export abstract class Loop {
  protected stopped = false;
  private running?: Promise<void>;
  private wake?: () => void;

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
  }

  protected abstract run(): Promise<void>;

  /** Sleeps ms, or less when stop() comes first. */
  protected rest(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
