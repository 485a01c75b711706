// The seam between the core and the other replicas of the server when they
// share one store (store: redis). One process alone has no Cluster and the
// core behaves as it always did. With one, a turn runs on the replica that
// holds its context's lease; the others follow its events, and hand it the
// cancels and input answers they receive.
import type { pb } from "../../../contract/index.js";
import type { ParsedAnswer } from "../incoming-message/input-answer.js";

/** held: this replica already had the context; acquired: newly taken (cached sessions are stale); busy: another's. */
export type LeaseResult = "held" | "acquired" | "busy";

/** What one replica asks of the replica that runs a task's turn. */
export type ReplicaCommand =
  | { type: "cancel"; taskId: string }
  | { type: "answer"; taskId: string; answer: ParsedAnswer; message: pb.Message };

export interface Cluster {
  /** Takes the context's lease for this replica (renewed while held). */
  acquire(contextId: string): Promise<LeaseResult>;
  /**
   * Gives the context's lease back after every change staged so far is
   * committed (with them, in one step, where the store can); an acquire
   * before then keeps it ("held").
   */
  release(contextId: string): Promise<void>;
  /**
   * Takes the context's lease from the replica holding it when that replica is
   * gone (no longer connected to the shared store), without waiting for the
   * lease to run out; false when it is alive or no longer holds it.
   */
  takeOver(contextId: string): Promise<boolean>;
  /** True when another replica holds the context's lease (it is alive and runs the context's turn). */
  heldElsewhere(contextId: string): Promise<boolean>;
  /** Called when this replica finds it lost a context's lease (its writes are refused from then on). */
  onLost(listener: (contextId: string) => void): void;
  /** Publishes a local turn's events, each once committed, for the replicas that follow the task. */
  relay(taskId: string, events: AsyncIterable<pb.StreamResponse>): void;
  /** Publishes the last events of a task whose turn died elsewhere, and the end of its stream. */
  publishEnd(taskId: string, events: pb.StreamResponse[]): Promise<void>;
  /** The events of a task's turn running on another replica, from now on, until that turn ends. */
  follow(
    taskId: string,
    contextId: string,
    signal: AbortSignal,
  ): Promise<AsyncIterableIterator<pb.StreamResponse>>;
  /** Hands a command to the replica holding the context; an A2AError it throws is thrown here. */
  forward(contextId: string, command: ReplicaCommand): Promise<void>;
  /** The handler of the commands other replicas send this one. */
  onCommand(handler: (command: ReplicaCommand) => Promise<void>): void;
}
