// The order of a pipeline's steps and where the run is: a status per step,
// advance() along `forward`, rollback() to a step already completed (within
// max_rollbacks; the steps after it become stale), jump() for restarts.
import type { LoadedStep } from "./loader.js";

export type StepStatus = "pending" | "running" | "completed" | "stale" | "failed";

export interface StateMachineSnapshot {
  currentIndex: number;
  rollbackCount: number;
  interruptRollbackCount: number;
  stepStatuses: Record<string, StepStatus>;
  /** Attempts started per step (the next attempt number is this + 1). */
  attempts: Record<string, number>;
}

export class RollbackRefused extends Error {
  override name = "RollbackRefused";
}

export class StateMachine {
  private state: StateMachineSnapshot;

  constructor(
    private readonly steps: readonly LoadedStep[],
    private readonly maxRollbacks: number,
    private readonly maxInterruptRollbacks = 10,
    snapshot?: StateMachineSnapshot,
  ) {
    this.state = snapshot
      ? structuredClone(snapshot)
      : {
          currentIndex: 0,
          rollbackCount: 0,
          interruptRollbackCount: 0,
          stepStatuses: Object.fromEntries(steps.map((s) => [s.id, "pending"])),
          attempts: {},
        };
  }

  get current(): LoadedStep | undefined {
    return this.steps[this.state.currentIndex];
  }

  get index(): number {
    return this.state.currentIndex;
  }

  get total(): number {
    return this.steps.length;
  }

  get rollbacks(): number {
    return this.state.rollbackCount;
  }

  status(stepId: string): StepStatus {
    return this.state.stepStatuses[stepId] ?? "pending";
  }

  attempt(stepId: string): number {
    return this.state.attempts[stepId] ?? 0;
  }

  indexOf(stepId: string): number {
    return this.steps.findIndex((s) => s.id === stepId);
  }

  /** Marks the current step running; returns its new attempt number. */
  begin(): number {
    const step = this.current;
    if (!step) throw new Error("the pipeline has no current step");
    const attempt = this.attempt(step.id) + 1;
    this.state.attempts[step.id] = attempt;
    this.state.stepStatuses[step.id] = "running";
    return attempt;
  }

  /** The current step's attempt is running again (a restart continues it). */
  isRunning(): boolean {
    const step = this.current;
    return step !== undefined && this.status(step.id) === "running";
  }

  complete(): void {
    const step = this.current;
    if (step) this.state.stepStatuses[step.id] = "completed";
  }

  /** Marks a step failed: the current one, or the one named (a rollback that could not clean up). */
  fail(stepId?: string): void {
    const id = stepId ?? this.current?.id;
    if (id) this.state.stepStatuses[id] = "failed";
  }

  /** Moves along `forward` (default: the next step); false when the run is over. */
  advance(): boolean {
    const step = this.current;
    if (!step) return false;
    const forward = step.def.forward;
    if (forward === null) {
      this.state.currentIndex = this.steps.length;
      return false;
    }
    this.state.currentIndex = forward === undefined ? this.state.currentIndex + 1 : this.indexOf(forward);
    return this.state.currentIndex < this.steps.length;
  }

  /** Why a rollback to `target` cannot happen, or undefined when it can. */
  rollbackRefusal(target: string, interrupt = false): string | undefined {
    const at = this.indexOf(target);
    if (at < 0) return `there is no step ${target}`;
    if (at > this.state.currentIndex) return `${target} comes after the current step`;
    if (at < this.state.currentIndex && this.status(target) !== "completed")
      return `${target} has not been completed`;
    if (
      interrupt
        ? this.state.interruptRollbackCount >= this.maxInterruptRollbacks
        : this.state.rollbackCount >= this.maxRollbacks
    )
      return `the rollback limit (${interrupt ? this.maxInterruptRollbacks : this.maxRollbacks}) is reached`;
    return undefined;
  }

  /** Goes back to `target`; the steps after it become stale. Returns the stale step ids. */
  rollback(target: string, interrupt = false): string[] {
    const refusal = this.rollbackRefusal(target, interrupt);
    if (refusal) throw new RollbackRefused(refusal);
    if (interrupt) this.state.interruptRollbackCount++;
    else this.state.rollbackCount++;
    const at = this.indexOf(target);
    const stale: string[] = [];
    for (let i = at + 1; i < this.steps.length; i++) {
      const id = this.steps[i].id;
      if (this.status(id) !== "pending") {
        this.state.stepStatuses[id] = "stale";
        stale.push(id);
      }
    }
    this.state.stepStatuses[target] = "pending";
    this.state.currentIndex = at;
    return stale;
  }

  /** Starts again at `target` (a candidate restarted by an interrupt): it and the steps after it are pending again. */
  restartAt(target: string): void {
    const at = this.indexOf(target);
    if (at < 0) throw new Error(`there is no step ${target}`);
    for (let i = at; i < this.steps.length; i++) this.state.stepStatuses[this.steps[i].id] = "pending";
    this.state.currentIndex = at;
  }

  /** Restarts at `target` without counting a rollback (a sub-pipeline restart). */
  jump(target: string): void {
    const at = this.indexOf(target);
    if (at < 0) throw new Error(`there is no step ${target}`);
    this.state.currentIndex = at;
  }

  snapshot(): StateMachineSnapshot {
    return structuredClone(this.state);
  }
}
