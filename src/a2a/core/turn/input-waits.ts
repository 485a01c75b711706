// The human-input waits of one running turn: the input the runtime waits for
// (published INPUT_REQUIRED with its envelope, counted by the observer), the
// answers checked against it and handed to the runtime, answers taken early
// for the waits a restored turn will publish again, permissions approved
// automatically (audited, fail closed), and the permission audit.
import type { JsonObject } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import { pb } from "../../../contract/index.js";
import { InvalidInputAnswerError } from "../../../runtime/errors.js";
import { checkAnswer } from "../../../runtime/permissions/input-requests.js";
import type { AgentSession, InputRequest } from "../../../runtime/seam.js";
import type { AuditEntry } from "../../stores/state.js";
import {
  answerRefusal,
  inputEnvelope,
  matchesRequest,
  type ParsedAnswer,
} from "../incoming-message/input-answer.js";
import { invalidParams } from "../request/errors.js";
import type { TaskRecord } from "../task-record.js";
import type { TurnPublisher } from "./publisher.js";

export interface WaitsDeps {
  logger: Logger;
  exposure: { toolTrace: boolean };
  autoApprovePermissions: boolean;
  audit(entry: AuditEntry): Promise<void>;
  /** Told when the live turn starts or stops waiting for an answer. */
  observer?: { waiting(delta: 1 | -1): void };
}

/** An answer the runtime does not take as given is the client's to fix: the wait stays open. */
function checked<T>(take: () => T): T {
  try {
    return take();
  } catch (error) {
    if (error instanceof InvalidInputAnswerError)
      throw invalidParams(`input_response_invalid: ${error.message}`);
    throw error;
  }
}

export class InputWaits {
  private waitingFor?: InputRequest;
  /** Inputs whose answer was announced (inputReceived) already. */
  private readonly announced = new Set<string>();
  /**
   * Waits a restored turn will publish again (a restart or another replica
   * left them on disk), and the answers already taken for them: each answer
   * goes to the runtime when its wait is published again.
   */
  private readonly restoredWaits = new Map<string, InputRequest>();
  private readonly earlyAnswers = new Map<string, ParsedAnswer>();
  /**
   * Runs before a wait is published, given that publication (execution.ts:
   * the session backup of the task as it will wait); backupBlocked metadata
   * when the backup failed.
   */
  beforeWait?: (publish: () => void) => Promise<JsonObject | undefined>;

  constructor(
    private readonly deps: WaitsDeps,
    private readonly out: TurnPublisher,
    /** Ends the turn FAILED when the runtime does not take an answer it should. */
    private readonly failUnexpectedly: (reason: string) => void,
  ) {}

  /** The input the live turn waits for (the observer counts the waits). */
  get pending(): InputRequest | undefined {
    return this.waitingFor;
  }
  set pending(request: InputRequest | undefined) {
    if (!this.waitingFor !== !request) this.deps.observer?.waiting(request ? 1 : -1);
    this.waitingFor = request;
  }

  /** The waits a restored turn will publish again: their answers are taken before they are. */
  expect(waits: readonly InputRequest[]): void {
    for (const wait of waits) this.restoredWaits.set(wait.inputId, wait);
  }

  /** The answer that resumes a restored turn: handed over when its wait is published again. */
  resumeWith(answer: ParsedAnswer): void {
    this.earlyAnswers.set(answer.answer.inputId, answer);
  }

  /** Resolves a pending input of the live turn (the answer came on the same task). */
  answer(parsed: ParsedAnswer, message: pb.Message, session: AgentSession): void {
    const restored = this.restoredWaits.get(parsed.answer.inputId);
    if (restored && !this.earlyAnswers.has(restored.inputId) && this.pending?.inputId !== restored.inputId) {
      this.takeEarly(parsed, message, restored);
      return;
    }
    const pending = this.pending;
    if (!pending) throw answerRefusal.inactive();
    if (!matchesRequest(parsed, pending)) throw answerRefusal.mismatch();
    const taken = checked(() => session.answerInput(parsed.answer));
    if (!taken) throw answerRefusal.unavailable();
    this.pending = undefined;
    this.accept(parsed, message);
  }

  /** An answer for a restored wait not published again yet: checked now, handed over when it is. */
  private takeEarly(parsed: ParsedAnswer, message: pb.Message, wait: InputRequest): void {
    if (!matchesRequest(parsed, wait)) throw answerRefusal.mismatch();
    checked(() => checkAnswer(wait, parsed.answer));
    this.earlyAnswers.set(wait.inputId, parsed);
    this.accept(parsed, message);
  }

  /**
   * The answer is the task's now: it joins the history and the task goes back
   * to WORKING with inputReceived (staged, so it is durable before the client
   * hears of it). A turn restored after a restart hands the answer to the
   * runtime when the runtime publishes the wait point again.
   */
  accept(parsed: ParsedAnswer, message: pb.Message): void {
    this.out.record.task.history.push(message);
    this.announced.add(parsed.answer.inputId);
    const received: JsonObject = {
      kind: parsed.answer.kind,
      inputId: parsed.answer.inputId,
      toolUseId: parsed.toolUseId,
    };
    if (parsed.answer.kind === "permission") received.decision = parsed.answer.decision;
    this.out.status(pb.TaskState.WORKING, { metadata: { inputReceived: received } });
  }

  /** The runtime took an answer: true the first time its receipt is announced. */
  received(inputId: string): boolean {
    if (this.pending?.inputId === inputId) this.pending = undefined;
    if (this.announced.has(inputId)) return false;
    this.announced.add(inputId);
    return true;
  }

  /**
   * The runtime waits for input: an answer taken early goes to it, a
   * permission is approved when the server approves them all, else the task
   * waits (INPUT_REQUIRED with the envelope). `pipeline`: the metadata of the
   * pipeline envelopes that came with the wait.
   */
  async required(request: InputRequest, session: AgentSession, pipeline?: JsonObject): Promise<void> {
    this.restoredWaits.delete(request.inputId);
    const early = this.earlyAnswers.get(request.inputId);
    if (early) {
      // A restored turn re-publishes what it waits for; the answer (accepted) is already here.
      this.earlyAnswers.delete(request.inputId);
      if (!session.answerInput(early.answer))
        this.failUnexpectedly("restored input wait point did not take the answer");
      return;
    }
    if (request.kind === "permission" && this.deps.autoApprovePermissions) {
      // Fail closed: an approval whose audit record cannot be written becomes a deny.
      this.announced.add(request.inputId);
      if (pipeline) this.out.status(pb.TaskState.WORKING, { metadata: pipeline });
      const audited = await this.audit(request, "allow_once", "auto-approve-permissions", true);
      const decision = audited ? "allow_once" : "deny";
      if (this.deps.exposure.toolTrace) {
        this.out.status(pb.TaskState.WORKING, {
          metadata: {
            permission: { autoApproved: audited, toolName: request.toolName, toolUseId: request.toolUseId },
          },
        });
      }
      if (!session.answerInput({ kind: "permission", inputId: request.inputId, decision }))
        this.failUnexpectedly("auto-approved permission was not taken by the runtime");
      return;
    }
    this.pending = request;
    const { id, contextId } = this.out.record.task;
    const metadata: JsonObject = { input: inputEnvelope(request, id, contextId), ...pipeline };
    if (request.kind === "permission") {
      metadata.permission = {
        autoApproved: false,
        pending: true,
        toolName: request.toolName,
        toolUseId: request.toolUseId,
      };
    }
    // A resume after a crash depends on this snapshot: the core commits it before anyone sees it.
    const publish = (extra?: JsonObject) =>
      this.out.status(pb.TaskState.INPUT_REQUIRED, { metadata: { ...metadata, ...extra }, persist: true });
    // With session backups, the wait is backed up first; a failed backup is said on the wait.
    const backupBlocked = await this.beforeWait?.(() => publish());
    publish(backupBlocked && { backupBlocked });
  }

  /**
   * A cancelled task never keeps a wait open: a permission is denied (and
   * audited), also for a runtime that does not watch the signal while it
   * waits; any other input is answered cancelled.
   */
  async cancel(pending: InputRequest, session: AgentSession): Promise<void> {
    if (pending.kind === "permission") {
      session.answerInput({ kind: "permission", inputId: pending.inputId, decision: "deny" });
      await this.audit(pending, "cancelled", "task_canceled");
    } else session.answerInput({ kind: pending.kind, inputId: pending.inputId, cancelled: true });
  }

  private async audit(
    request: InputRequest,
    decision: AuditEntry["decision"],
    reason: string,
    autoApproved = false,
  ): Promise<boolean> {
    try {
      await this.deps.audit(
        permissionAudit(this.out.record, this.out.sessionId, request, decision, reason, autoApproved),
      );
      return true;
    } catch (error) {
      const taskId = this.out.record.task.id;
      this.deps.logger.error({ err: error, taskId }, "permission audit record not written");
      return false;
    }
  }
}

/** The audit line of a permission decision the server takes itself (auto-approval, a cancel). */
export function permissionAudit(
  record: TaskRecord,
  sessionId: string | undefined,
  wait: Pick<InputRequest, "toolName" | "toolUseId" | "inputId">,
  decision: AuditEntry["decision"],
  reason: string,
  autoApproved = false,
): AuditEntry {
  return {
    ts: new Date().toISOString(),
    ...(sessionId && { sessionId }),
    taskId: record.task.id,
    contextId: record.task.contextId,
    owner: record.owner,
    toolName: wait.toolName,
    toolUseId: wait.toolUseId,
    inputId: wait.inputId,
    decision,
    reason,
    autoApproved,
  };
}
