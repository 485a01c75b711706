// A hard interrupt whose target is the parallel step that is running does not
// roll the run back: it restarts candidates (all, or candidate:N) at a step
// of their sub-pipeline (the first by default), with the user's message as
// feedback; candidates out of scope keep what they did. The runner asks, the
// running parallel step (candidates.ts) applies: it stops the candidates in
// scope, says so (candidate_restart_requested) and runs them again.

export interface RestartRequest {
  /** "all" or "candidate:N". */
  scope: string;
  /** The sub-pipeline step they start again at; undefined: the first. */
  targetStep?: string;
  reason: string;
}

/** The link between the runner (which classifies messages) and the running parallel step. */
export class CandidateRestarts {
  private handler: ((request: RestartRequest) => boolean) | undefined;

  /** The running parallel step takes requests until `done` is called. */
  listen(handler: (request: RestartRequest) => boolean): () => void {
    this.handler = handler;
    return () => {
      if (this.handler === handler) this.handler = undefined;
    };
  }

  /** True when a parallel step is running and took the request. */
  request(request: RestartRequest): boolean {
    return this.handler?.(request) ?? false;
  }

  get listening(): boolean {
    return this.handler !== undefined;
  }
}

/** Whether a candidate index is in a scope ("all" or "candidate:N"). */
export function inScope(scope: string, index: number): boolean {
  return scope === "all" || scope === `candidate:${index}`;
}
