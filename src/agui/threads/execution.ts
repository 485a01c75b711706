// The execution inside a thread document: starting and rotating it, marking it
// terminal, the deadlines of its pending interrupts and the record of answers
// already applied (agui-iaccode.md §2.5, §5.7, §5.11). Pure functions on a
// ThreadDoc; the callers decide when to persist.
import { randomUUID } from "node:crypto";
import { createHash } from "node:crypto";
import { canonicalJson } from "../events.js";
import type { ExecutionState, ThreadDoc } from "./thread-store.js";

export function freshExecution(rosInvocationId: string): ExecutionState {
  return {
    executionId: randomUUID(),
    rosInvocationId,
    taskId: null,
    lastTaskId: null,
    pipelineSequence: 0,
    pipelineOpenSteps: [],
    textSnapshotDigests: [],
    pending: {},
  };
}

export function isTerminal(doc: ThreadDoc): boolean {
  return doc.terminalExecutionIds.includes(doc.execution.executionId);
}

export interface ResumeAnswer {
  interruptId: string;
  status: "resolved" | "cancelled";
  payload?: unknown;
}

/** Digest of an answer as the client sent it: {status, payload|null} in canonical JSON. */
export function answerDigest(entry: ResumeAnswer): string {
  return createHash("sha256")
    .update(canonicalJson({ status: entry.status, payload: entry.payload ?? null }), "utf8")
    .digest("hex");
}

/** Ends the current execution: no task bound any more, nothing pending. */
export function markTerminal(doc: ThreadDoc): void {
  const ex = doc.execution;
  if (!doc.terminalExecutionIds.includes(ex.executionId)) doc.terminalExecutionIds.push(ex.executionId);
  if (ex.taskId) ex.lastTaskId = ex.taskId;
  ex.taskId = null;
  ex.pending = {};
}

/** A new run on an existing thread gets a new execution; the old one, if it had a task, ends. */
export function rotateExecution(doc: ThreadDoc, rosInvocationId: string): void {
  if (!isTerminal(doc) && doc.execution.taskId) markTerminal(doc);
  const lastTaskId = doc.execution.lastTaskId;
  doc.execution = { ...freshExecution(rosInvocationId), lastTaskId };
}

export function hasPending(doc: ThreadDoc): boolean {
  return Object.keys(doc.execution.pending).length > 0;
}

/** Epoch ms of the first pending interrupt to expire, if any is pending. */
export function earliestExpiry(doc: ThreadDoc): number | undefined {
  const times = Object.values(doc.execution.pending).map((p) => Date.parse(p.expiresAt));
  return times.length ? Math.min(...times) : undefined;
}

export function hasExpired(doc: ThreadDoc, now: number): boolean {
  const at = earliestExpiry(doc);
  return at !== undefined && at <= now;
}

/** Digest of the answer applied to an interrupt of the current execution. */
export function appliedDigest(doc: ThreadDoc, interruptId: string): string | undefined {
  return doc.appliedResumeDigests.find(
    (a) => a.executionId === doc.execution.executionId && a.interruptId === interruptId,
  )?.digest;
}

/** Digest of the last answer applied to an interrupt id in any execution. */
export function lastAppliedDigest(doc: ThreadDoc, interruptId: string): string | undefined {
  const all = doc.appliedResumeDigests.filter((a) => a.interruptId === interruptId);
  return all.length ? all[all.length - 1].digest : undefined;
}

/** Records an accepted answer and drops its interrupt from the pending set. */
export function recordApplied(doc: ThreadDoc, entry: ResumeAnswer): void {
  doc.appliedResumeDigests.push({
    executionId: doc.execution.executionId,
    interruptId: entry.interruptId,
    digest: answerDigest(entry),
  });
  delete doc.execution.pending[entry.interruptId];
}
