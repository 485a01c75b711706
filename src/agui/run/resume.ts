// A resume run (agui-iaccode.md §5.5-§5.8): checking that the execution can
// still be resumed (bound task, not expired, the same task, context and session
// on the A2A side), checking the answers against the pending interrupts and
// their response schemas before anything is sent, then sending each answer on
// its own A2A stream, recording it durably once A2A accepts it, catching up
// with the pipeline journal once the last stream is open (subscribe first, then
// read: the reference's read-then-send lost what was published in between),
// and following the last stream as the continuation of the run (subscribing
// again when it ends before the turn says what comes next).
import { readItem, sessionIdOf, TERMINAL_STATES, type A2aItem } from "../upstream/a2a-items.js";
import { A2aCallError } from "../../a2a/client/errors.js";
import { backupNotReady, MSG, RunFailure } from "../errors.js";
import {
  answerDigest,
  appliedDigest,
  hasExpired,
  lastAppliedDigest,
  markTerminal,
  recordApplied,
  type ResumeAnswer,
} from "../threads/execution.js";
import {
  answerPart,
  answerText,
  cancelCancelsTask,
  checkStructuredPayload,
  isPermission,
  payloadMatches,
  responseSchemaFor,
  shownToolCallId,
  toolResultText,
} from "./interrupts.js";
import type { RunState } from "./run-state.js";
import type { RunStream } from "./stream.js";
import type { ExecutionState } from "../threads/thread-store.js";

/**
 * Every resolved answer must carry a payload matching its interrupt's response
 * schema; selections and confirmations are checked further (also cancelled
 * selections), each refusal naming resume[i] of the request (`all`).
 */
function checkPayloads(ex: ExecutionState, all: ResumeAnswer[], entries: ResumeAnswer[]): void {
  for (const e of entries) {
    const value = ex.pending[e.interruptId].value;
    if (e.status === "resolved" && (e.payload === undefined || e.payload === null))
      throw new RunFailure("RESUME_PAYLOAD_INVALID", MSG.payloadRequired);
    const structured = checkStructuredPayload(value, e, `resume[${all.indexOf(e)}].payload`);
    if (e.status !== "resolved") continue;
    if (!payloadMatches(responseSchemaFor(value), e.payload))
      throw new RunFailure("RESUME_PAYLOAD_INVALID", MSG.payloadInvalid);
    if (!structured && !isPermission(value) && !answerText(value, e.payload))
      throw new RunFailure("RESUME_PAYLOAD_INVALID", MSG.noAnswer);
  }
}

export class Resume {
  constructor(
    private readonly run: RunState,
    private readonly stream: RunStream,
  ) {}

  async resume(): Promise<void> {
    const { doc, request } = this.run.admission;
    const entries = request.resume ?? [];
    const ex = doc.execution;
    await this.checkResumable(entries);
    this.run.active.accepting = true;
    await this.ensureRestored();
    const snapshot = await this.taskSnapshot();
    const knownBefore = new Set(Object.keys(ex.pending));
    const discovered = await this.stream.newInputs(snapshot);

    const ids = entries.map((e) => e.interruptId);
    if (new Set(ids).size !== ids.length || entries.length === 0) {
      throw new RunFailure(
        "INCOMPLETE_RESUME",
        entries.length ? MSG.duplicateInterruptIds : MSG.incompleteResume,
      );
    }
    for (const e of entries) {
      if (ex.pending[e.interruptId]) continue;
      const applied = appliedDigest(doc, e.interruptId);
      if (applied === undefined) throw new RunFailure("UNKNOWN_INTERRUPT", MSG.unknownInterrupt);
      if (applied !== answerDigest(e)) throw new RunFailure("RESUME_ALREADY_APPLIED", MSG.alreadyApplied);
    }
    const answered = new Set(ids);
    const missing = Object.keys(ex.pending).filter((id) => !answered.has(id));
    if (missing.length) {
      if (missing.some((id) => knownBefore.has(id)))
        throw new RunFailure("INCOMPLETE_RESUME", MSG.incompleteResume);
      // Only interrupts the snapshot just revealed are unanswered: show them all, apply nothing.
      if (discovered) {
        await this.pipelineCatchUp();
        await this.stream.commitInterrupt();
        return;
      }
    }
    const toApply = entries.filter((e) => ex.pending[e.interruptId]);
    checkPayloads(ex, entries, toApply);
    if (!toApply.length) throw new RunFailure("RESUME_ALREADY_APPLIED", MSG.alreadyApplied);
    const cancelledQuestion = toApply.find(
      (e) => e.status === "cancelled" && cancelCancelsTask(ex.pending[e.interruptId].value),
    );
    if (cancelledQuestion) {
      const taskId = ex.taskId;
      for (const e of toApply) recordApplied(doc, e);
      markTerminal(doc);
      await this.run.core.cancelUpstream(taskId);
      await this.run.core.saveBestEffort(doc);
      throw new RunFailure("CANCELLED", MSG.cancelledByResponse);
    }
    await this.applyAnswers(toApply);
  }

  /** A bound task with pending interrupts that have not expired; else why the resume cannot run. */
  private async checkResumable(entries: ResumeAnswer[]): Promise<void> {
    const { doc } = this.run.admission;
    const ex = doc.execution;
    if (!ex.taskId || !Object.keys(ex.pending).length) {
      const expired = new Set(ex.expiredInterruptIds ?? []);
      if (entries.some((e) => expired.has(e.interruptId)))
        throw new RunFailure("EXECUTION_EXPIRED", MSG.expired);
      if (entries.length && entries.every((e) => lastAppliedDigest(doc, e.interruptId) !== undefined)) {
        throw new RunFailure("RESUME_ALREADY_APPLIED", MSG.alreadyApplied);
      }
      throw new RunFailure("EXECUTION_LOST", MSG.taskUnavailable);
    }
    if (hasExpired(doc, this.run.core.now())) {
      await this.run.core.expire(doc);
      throw new RunFailure("EXECUTION_EXPIRED", MSG.expired);
    }
  }

  /**
   * Preflight, first when the session is known: the A2A server restores the
   * session from its backup if its primary store lost it (§5.5 step 2).
   * Nothing is sent and the pending interrupts stay when it cannot.
   */
  private async ensureRestored(): Promise<void> {
    const { doc } = this.run.admission;
    if (!doc.iacCodeSessionId) return;
    const body = { cwd: doc.cwd, sessionId: doc.iacCodeSessionId, taskId: doc.execution.taskId! };
    const answer = await this.run.core.client.ensureRestored(body, this.run.signals());
    if (answer.outcome === "unavailable")
      throw new RunFailure("EXECUTION_LOST", MSG.resumeSessionUnavailable);
    if (answer.outcome === "not_ready")
      throw new RunFailure("SESSION_BACKUP_NOT_READY", MSG.sessionBackupNotReady, {}, answer.message);
  }

  /** Preflight: GetTask; the task must still exist, be ours and be waiting. */
  private async taskSnapshot(): Promise<A2aItem> {
    const { doc } = this.run.admission;
    const taskId = doc.execution.taskId!;
    let snapshot: A2aItem;
    try {
      snapshot = readItem({
        result: { task: await this.run.core.client.getTask(taskId, this.run.signals()) },
      });
    } catch (err) {
      if (err instanceof A2aCallError) throw new RunFailure("EXECUTION_LOST", MSG.taskUnavailable);
      throw err;
    }
    if (snapshot.taskId !== taskId || (snapshot.contextId && snapshot.contextId !== doc.contextId)) {
      throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.taskIdentityMismatch);
    }
    const session = sessionIdOf(snapshot);
    if (session && doc.iacCodeSessionId && session !== doc.iacCodeSessionId) {
      throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.sessionChanged);
    }
    if (snapshot.state && TERMINAL_STATES.has(snapshot.state)) {
      markTerminal(doc);
      await this.run.core.saveBestEffort(doc);
      throw new RunFailure("EXECUTION_LOST", MSG.taskUnavailable);
    }
    return snapshot;
  }

  /**
   * The pipeline events this thread has not seen (after its persisted cursor),
   * with one ACTIVITY_SNAPSHOT of the run's state. Read once the answer's stream
   * is open: every event is then in the journal read or on that stream (the
   * journal is written before an event is published), and the translator drops
   * what both carry by eventId and sequence.
   */
  private async pipelineCatchUp(): Promise<void> {
    const { doc } = this.run.admission;
    const state = await this.run.core.client.pipelineState(
      doc.execution.taskId!,
      doc.execution.pipelineSequence,
      this.run.signals(),
    );
    if (!state) return;
    for (const ev of this.run.tr.recovery(state.snapshot, state.events)) this.run.sink.send(ev);
  }

  /** Sends each answer on its own stream; the last stream carries the continuation. */
  private async applyAnswers(entries: ResumeAnswer[]): Promise<void> {
    const { doc, request } = this.run.admission;
    const toolResults: Array<{ toolCallId: string; text: string }> = [];
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      const pending = doc.execution.pending[entry.interruptId];
      const value = pending.value;
      const taskId = doc.execution.taskId!;
      const part = answerPart(value, entry, taskId, doc.contextId);
      const params = this.stream.messageParams(
        [part],
        `agui-resume-${request.runId}-${entry.interruptId}`,
        true,
      );
      const last = i === entries.length - 1;
      const upstream = last ? this.run.active.upstream : new AbortController();
      const answered = this.run.core.client.sendStreamingBatches(params, this.run.signals(upstream));
      const stream = answered[Symbol.asyncIterator]();
      let first: IteratorResult<unknown[]>;
      try {
        first = await stream.next();
      } catch (err) {
        if (err instanceof A2aCallError)
          throw backupNotReady(err) ?? new RunFailure("A2A_UNAVAILABLE", MSG.interruptRejected);
        throw err;
      }
      if (first.done) {
        throw new RunFailure(
          "A2A_UNAVAILABLE",
          isPermission(value) ? MSG.permissionNotAccepted : MSG.interruptNotAccepted,
        );
      }
      const firstItem = readItem(first.value[0]);
      if (
        (firstItem.taskId && firstItem.taskId !== taskId) ||
        (firstItem.contextId && firstItem.contextId !== doc.contextId)
      ) {
        throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.taskIdentityMismatch);
      }
      // Accepted: record the answer durably before anything else is announced.
      recordApplied(doc, entry);
      try {
        await this.run.core.store.save(doc);
      } catch {
        await this.run.core.cancelUpstream(taskId);
        markTerminal(doc);
        throw new RunFailure("STATE_PERSISTENCE_FAILED", MSG.responseNotCommitted);
      }
      const toolCallId = shownToolCallId(pending);
      const text = toolResultText(pending, entry);
      if (toolCallId && text !== undefined) toolResults.push({ toolCallId, text });
      if (!last) {
        await stream.return?.(undefined);
        upstream.abort();
        continue;
      }
      this.run.active.accepting = false;
      this.stream.announceSession(true);
      await this.pipelineCatchUp();
      for (const r of toolResults)
        for (const ev of this.run.tr.answeredToolResult(r.toolCallId, r.text)) this.run.sink.send(ev);
      const rest: AsyncIterable<unknown[]> = { [Symbol.asyncIterator]: () => stream };
      await this.stream.consume(rest, first.value, true);
    }
  }
}
