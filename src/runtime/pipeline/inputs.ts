// The inputs a pipeline waits for, whoever raised them: permissions and
// questions of the steps' tool rounds (one round per step attempt, several
// at once when candidates run in parallel) and the pipeline's own waits
// (candidate selection, pause confirmation). The registry lists what is
// published and routes each answer to its owner; the gate lets one input be
// outstanding at a time, because a task shows one input request at a time.
import type { InputAnswer, InputRequest } from "../seam.js";

export class InputRegistry {
  private readonly open = new Map<string, { request: InputRequest; answer: (a: InputAnswer) => boolean }>();

  /** The input is published; `answer` takes its answer (false when it no longer waits). */
  publish(request: InputRequest, answer: (a: InputAnswer) => boolean): void {
    this.open.set(request.inputId, { request, answer });
  }

  settle(inputId: string): void {
    this.open.delete(inputId);
  }

  pending(): InputRequest[] {
    return [...this.open.values()].map((e) => e.request);
  }

  answer(answer: InputAnswer): boolean {
    const entry = this.open.get(answer.inputId);
    if (!entry) return false;
    const taken = entry.answer(answer);
    if (taken) this.open.delete(answer.inputId);
    return taken;
  }
}

/** A FIFO mutex: parallel candidates ask their questions one after the other. */
export class InputGate {
  private busy = false;
  private readonly queue: Array<() => void> = [];

  /** Resolves when the caller holds the gate; rejects when the signal aborts first. */
  acquire(signal: AbortSignal): Promise<void> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const at = this.queue.indexOf(grant);
        if (at >= 0) this.queue.splice(at, 1);
        reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.queue.push(grant);
    });
  }

  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.busy = false;
  }
}
