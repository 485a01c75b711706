// Following one A2A stream through a run (agui-iaccode.md §3.3, §4, §5.2):
// learning and checking the task, context and session identities, announcing
// iac-code.session.v1, translating items into AG-UI events, collecting new
// interrupts and committing them before they are shown, and ending the run on
// the stream's last state. Shared by new runs and resumes; after an accepted
// answer, a stream that ends before the turn says what it does next is
// followed once more (agui-iaccode.md §5.9).
import { isAguiErrorCode } from "../../contract/index.js";
import { ERROR_CODE_MESSAGES } from "../../runtime/errors.js";
import type { RuntimeErrorCode } from "../../runtime/seam.js";
import {
  FAILED_STATES,
  isObject,
  readItem,
  sessionIdOf,
  statusText,
  STOP_STATES,
  TERMINAL_STATES,
  type A2aItem,
  type JsonObject,
} from "../upstream/a2a-items.js";
import { MSG, type MessageKey, RunFailure } from "../errors.js";
import { CUSTOM_SESSION, type InterruptObject } from "../events.js";
import { appliedDigest, markTerminal } from "../threads/execution.js";
import { iacMetadata } from "./inputs.js";
import { EITHER_WAY_KINDS, requiredInputs, toInterrupt } from "./interrupts.js";
import type { PendingInterrupt } from "../threads/thread-store.js";
import { RUN_OVER, type RunState } from "./run-state.js";
import { confirmationOptionsProblem, DEPLOYMENT_CONFIRMATION } from "./structured-answers.js";

type ItemOutcome = "stop" | "continue" | "interrupted";

/** How a stream went: a stop state, an interrupt committed, or its end before either ("ended"). */
type StreamOutcome = "stop" | "interrupted" | "ended";

export class RunStream {
  /** The iac-code.session.v1 event goes out once per run. */
  private sessionAnnounced = false;
  /** The last task state the stream reported (decides how the run ends). */
  private lastState: string | undefined;
  /** A failed task's status text and metadata.iac_code.error (the run's RUN_ERROR says the same). */
  private failure?: TaskFailureInfo;
  /** The task id learned from the stream's snapshot, written with the session id (learn). */
  private taskUnsaved = false;

  constructor(private readonly run: RunState) {}

  /** SendStreamingMessage params for a run; `withTask` continues the bound task. */
  messageParams(parts: JsonObject[], messageId: string, withTask: boolean): JsonObject {
    const { doc, cwd, request, language } = this.run.admission;
    const message: JsonObject = {
      messageId,
      role: "ROLE_USER",
      parts,
      contextId: doc.contextId,
      metadata: { iac_code: iacMetadata(request.iacCode, cwd, language) },
    };
    if (withTask && doc.execution.taskId) message.taskId = doc.execution.taskId;
    return { message, configuration: { acceptedOutputModes: ["text/plain"] } };
  }

  /**
   * Learns and checks the task, context and session identities of an item;
   * persists what is new (the promise of that write; undefined when nothing is
   * new, as for almost every item: no await per streamed token). A stream opens
   * with its Task snapshot and names the session in the next item: the task id
   * is then written with it, once.
   */
  private learn(item: A2aItem): Promise<void> | undefined {
    const { doc } = this.run.admission;
    const ex = doc.execution;
    if (item.contextId && item.contextId !== doc.contextId)
      throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.contextChanged);
    let taskLearned = this.taskUnsaved;
    if (item.taskId) {
      if (ex.taskId && ex.taskId !== item.taskId) throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.taskChanged);
      if (!ex.taskId) {
        ex.taskId = item.taskId;
        taskLearned = true;
      }
    }
    let sessionLearned = false;
    const session = sessionIdOf(item);
    if (session) {
      if (doc.iacCodeSessionId && doc.iacCodeSessionId !== session) {
        throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.sessionChanged);
      }
      if (!doc.iacCodeSessionId) {
        doc.iacCodeSessionId = session;
        sessionLearned = true;
      }
    }
    if (!taskLearned && !sessionLearned) return undefined;
    this.taskUnsaved = item.kind === "task" && !doc.iacCodeSessionId;
    if (this.taskUnsaved) return undefined;
    return this.saveLearned(taskLearned, item);
  }

  private async saveLearned(taskLearned: boolean, item: A2aItem): Promise<void> {
    const { doc } = this.run.admission;
    try {
      await this.run.core.store.save(doc);
    } catch {
      await this.run.core.cancelUpstream(doc.execution.taskId ?? item.taskId);
      markTerminal(doc);
      throw new RunFailure(
        "STATE_PERSISTENCE_FAILED",
        taskLearned ? MSG.mappingNotCommitted : MSG.sessionNotCommitted,
      );
    }
  }

  /** Sends iac-code.session.v1 once: as soon as task and session are known, or when `force`d. */
  announceSession(force: boolean): void {
    if (this.sessionAnnounced) return;
    const { doc, request } = this.run.admission;
    if (!force && !(doc.execution.taskId && doc.iacCodeSessionId)) return;
    this.sessionAnnounced = true;
    const value: JsonObject = {
      schemaVersion: 1,
      threadId: request.threadId,
      aguiRunId: request.runId,
      executionId: doc.execution.executionId,
      contextId: doc.contextId,
      rosInvocationId: doc.execution.rosInvocationId,
    };
    if (doc.execution.taskId) value.taskId = doc.execution.taskId;
    if (doc.iacCodeSessionId) value.sessionId = doc.iacCodeSessionId;
    this.run.sink.send(this.run.tr.custom(CUSTOM_SESSION, value));
  }

  /**
   * A deployment confirmation whose options cannot be offered (§5.3) never
   * becomes an interrupt: nobody could answer it, so its task is cancelled
   * (else it would hold the context) and the run ends A2A_UNAVAILABLE.
   */
  private async refuseUnofferable(value: JsonObject): Promise<void> {
    if (value.kind !== DEPLOYMENT_CONFIRMATION) return;
    const problem = confirmationOptionsProblem(value);
    if (problem === undefined) return;
    const { doc } = this.run.admission;
    this.run.core.logger?.warn(
      { threadId: doc.threadId, taskId: doc.execution.taskId, inputId: value.inputId, option: problem },
      "deployment confirmation with options that cannot be offered",
    );
    await this.run.core.cancelUpstream(doc.execution.taskId);
    markTerminal(doc);
    await this.run.core.saveBestEffort(doc);
    if (problem < 0) throw new RunFailure("A2A_UNAVAILABLE", MSG.confirmationNoOptions);
    throw new RunFailure("A2A_UNAVAILABLE", MSG.confirmationOptionsInvalid, { index: String(problem) });
  }

  /** True when the item asks only for inputs already answered in this execution (a stale projection). */
  private onlyAnswered(item: A2aItem): boolean {
    const inputs = requiredInputs(item);
    return (
      inputs.length > 0 &&
      inputs.every(
        (i) =>
          typeof i.value.inputId === "string" &&
          appliedDigest(this.run.admission.doc, i.value.inputId) !== undefined,
      )
    );
  }

  /**
   * Adds the item's new pending inputs (answers already applied in this execution are dropped); true if any.
   * `inputs`: the item's required inputs, when the caller has them already.
   */
  async newInputs(item: A2aItem, inputs = requiredInputs(item)): Promise<boolean> {
    const { doc } = this.run.admission;
    let added = false;
    for (const input of inputs) {
      const id = input.value.inputId;
      if (typeof id !== "string" || !id) throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.interruptWithoutId);
      if (appliedDigest(doc, id) !== undefined) continue;
      const req = input.value.requestTaskId;
      if (typeof req === "string" && doc.execution.taskId && req !== doc.execution.taskId) {
        throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.otherTask);
      }
      const cx = input.value.contextId;
      if (typeof cx === "string" && cx !== doc.contextId)
        throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.otherContext);
      const existing = doc.execution.pending[id];
      if (existing) {
        if (input.sideband) existing.sideband = true;
        continue;
      }
      await this.refuseUnofferable(input.value);
      const pending: PendingInterrupt = {
        value: input.value,
        sideband: input.sideband,
        expiresAt: new Date(this.run.core.now() + this.run.core.ttlMs).toISOString(),
      };
      const toolUseId = input.value.toolUseId;
      if (EITHER_WAY_KINDS.has(String(input.value.kind)))
        pending.toolCallShown = typeof toolUseId === "string" && this.run.tr.startedToolCall(toolUseId);
      doc.execution.pending[id] = pending;
      added = true;
    }
    return added;
  }

  /** Persists the pending interrupts, then ends the run with them. */
  async commitInterrupt(): Promise<void> {
    const { doc } = this.run.admission;
    this.run.tr.finalizeSnapshots();
    this.run.syncDurable();
    try {
      await this.run.core.store.save(doc);
    } catch {
      const taskId = doc.execution.taskId;
      await this.run.core.cancelUpstream(taskId);
      markTerminal(doc);
      throw new RunFailure("STATE_PERSISTENCE_FAILED", MSG.interruptNotCommitted);
    }
    this.run.active.paused = true;
    this.run.core.scheduleExpiry(doc);
    const interrupts: InterruptObject[] = Object.values(doc.execution.pending).map(toInterrupt);
    for (const ev of this.run.tr.finishInterrupt(interrupts)) this.run.sink.send(ev);
  }

  private async handleItem(item: A2aItem): Promise<ItemOutcome> {
    const saving = this.learn(item);
    if (saving) await saving;
    this.announceSession(false);
    // A Task item is a snapshot (first event of a stream): its merged metadata
    // repeats what earlier runs showed, and input-required there is the wait
    // being answered, not the end of this run.
    const snapshot = item.kind === "task";
    if (!snapshot) for (const ev of this.run.tr.map(item)) this.run.sink.send(ev);
    // Most items ask for nothing: no await for them.
    const inputs = requiredInputs(item);
    if (inputs.length > 0 && (await this.newInputs(item, inputs))) {
      await this.commitInterrupt();
      return "interrupted";
    }
    const st = item.state;
    // Waiting only for what this execution already answered: not where the turn stands now.
    if (st === "input-required" && this.onlyAnswered(item)) return "continue";
    if (snapshot && !TERMINAL_STATES.has(st ?? "")) return "continue";
    if (st) this.lastState = st;
    if (st && FAILED_STATES.has(st)) {
      this.failure = failureOf(item);
    }
    return st && STOP_STATES.has(st) ? "stop" : "continue";
  }

  /** Handles a batch of responses in order, up to the first that is not "continue". */
  private async handleBatch(batch: unknown[]): Promise<ItemOutcome> {
    for (const raw of batch) {
      const outcome = await this.handleItem(readItem(raw));
      if (outcome !== "continue") return outcome;
    }
    return "continue";
  }

  /**
   * Reads a stream (a batch of responses per chunk read) until a stop or its
   * end, `first` being responses already read from it. After an accepted
   * answer (`lenient`) a failing stream counts as ended: what the task does
   * next is asked again.
   */
  private async drain(
    stream: AsyncIterable<unknown[]>,
    first: unknown[],
    lenient: boolean,
  ): Promise<StreamOutcome> {
    const outcome = await this.handleBatch(first);
    if (outcome !== "continue") return outcome;
    const it = stream[Symbol.asyncIterator]();
    let reading = true;
    try {
      for (;;) {
        let next: IteratorResult<unknown[]>;
        try {
          next = await it.next();
        } catch (err) {
          reading = false;
          if (!lenient || this.run.active.upstream.signal.aborted) throw err;
          this.run.core.logger?.warn(
            { err: (err as Error).message },
            "A2A stream failed after an accepted answer",
          );
          return "ended";
        }
        if (next.done) {
          reading = false;
          return "ended";
        }
        const outcome = await this.handleBatch(next.value);
        if (outcome !== "continue") return outcome;
      }
    } finally {
      // Left before its end (a stop, or a failure handling an item): the stream is closed.
      if (reading) await it.return?.();
    }
  }

  /**
   * Processes an A2A stream until it reaches a stop: a new interrupt (ends the
   * run with it), completion or the end of the turn (success), or a failure.
   * `first`: responses already read from it. `afterAnswer`: the stream of an
   * accepted answer, followed if it ends early.
   */
  async consume(stream: AsyncIterable<unknown[]>, first: unknown[] = [], afterAnswer = false): Promise<void> {
    let outcome = await this.drain(stream, first, afterAnswer);
    if (outcome === "ended" && afterAnswer) outcome = await this.followAfterAnswer();
    this.run.active.upstream.abort(RUN_OVER);
    if (outcome === "interrupted") return;
    await this.finish();
  }

  /**
   * The answer's stream ended before the turn said what comes next (§5.9):
   * subscribe to the task once, then ask for the task itself. A new input is an
   * interrupt, an end state or the end of the turn ends the run; anything else
   * means the turn is lost to this run: the task is cancelled, A2A_UNAVAILABLE.
   */
  private async followAfterAnswer(): Promise<StreamOutcome> {
    const { doc } = this.run.admission;
    const taskId = doc.execution.taskId!;
    const signals = this.run.signals();
    const followed = await this.drain(
      this.run.core.client.streamBatches("SubscribeToTask", { id: taskId }, signals),
      [],
      true,
    );
    if (followed !== "ended") return followed;
    const task = readItem({ result: { task: await this.run.core.client.getTask(taskId, signals) } });
    await this.learn(task);
    if (task.taskId !== taskId) throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.taskChanged);
    if (await this.newInputs(task)) {
      await this.commitInterrupt();
      return "interrupted";
    }
    const st = task.state;
    const turnEnded = st === "input-required" && requiredInputs(task).length === 0;
    if (st && (TERMINAL_STATES.has(st) || turnEnded)) {
      this.lastState = st;
      if (FAILED_STATES.has(st)) this.failure = failureOf(task);
      return "stop";
    }
    this.run.core.logger?.warn(
      { threadId: doc.threadId, taskId, state: st },
      "A2A task lost after an accepted answer",
    );
    await this.run.core.cancelUpstream(taskId);
    markTerminal(doc);
    await this.run.core.saveBestEffort(doc);
    throw new RunFailure("A2A_UNAVAILABLE", MSG.continuationLost);
  }

  /** Ends a run whose stream stopped without an interrupt, by its last state. */
  private async finish(): Promise<void> {
    const { doc } = this.run.admission;
    this.announceSession(true);
    const st = this.lastState;
    if (this.run.active.cancelledByExtension || st === "canceled")
      throw new RunFailure("CANCELLED", MSG.cancelled);
    if (st !== "completed" && st !== "input-required") throw this.taskFailure();
    const events = this.run.tr.finishSuccess();
    this.run.syncDurable();
    markTerminal(doc);
    await this.run.core.saveBestEffort(doc);
    for (const ev of events) this.run.sink.send(ev);
  }

  /** The RUN_ERROR of a failed task (taskFailure). */
  private taskFailure(): RunFailure {
    return taskFailure(this.failure);
  }
}

/** A failed task's status text and metadata.iac_code.error. */
export interface TaskFailureInfo {
  text: string;
  error?: Record<string, unknown>;
}

/** What a failed task item says about its failure. */
export function failureOf(item: A2aItem): TaskFailureInfo {
  return { text: statusText(item).text, error: isObject(item.iac.error) ? item.iac.error : undefined };
}

/**
 * The RUN_ERROR of a failed task: a model or runtime failure keeps its code and
 * the A2A text (localised, with the errorId of the server's log line); any
 * other failure is A2A_EXECUTION_FAILED with the task's own text when it has one.
 */
export function taskFailure(failure: TaskFailureInfo | undefined): RunFailure {
  const code = failure?.error?.code;
  const text = failure?.text || undefined;
  const errorId = failure?.error?.errorId;
  const params: Record<string, string> = typeof errorId === "string" ? { errorId } : {};
  if (isAguiErrorCode(code) && code in ERROR_CODE_MESSAGES) {
    const key = ERROR_CODE_MESSAGES[code as RuntimeErrorCode] as MessageKey;
    return new RunFailure(code, key, params, text);
  }
  return new RunFailure("A2A_EXECUTION_FAILED", MSG.executionFailed, {}, text);
}
