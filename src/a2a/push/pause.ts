// A sleep that stop() can cut short: the push loops rest between polls and
// must not hold a shutdown for the rest of a pause.
export class Pause {
  private wake?: () => void;

  sleep(ms: number): Promise<void> {
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

  interrupt(): void {
    this.wake?.();
  }
}
