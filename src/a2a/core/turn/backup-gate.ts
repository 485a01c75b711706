// The session backup at a turn's end (a2a-iaccode.md §12.3), before the end is
// published: a terminal end (FAILED, CANCELED, a pipeline's COMPLETED) needs a
// critical `terminal` backup, and when it fails the would-be terminal becomes
// INPUT_REQUIRED with metadata.iac_code.backupBlocked (§6.7; the task stays
// usable, a later turn's backup commits everything); the normal end of a turn
// (INPUT_REQUIRED) takes a `normal_turn_end` backup whose failure is only
// logged. A wait for input (a permission, a pipeline's question or choice)
// takes a critical `input_required` backup before it is published
// (input-waits.ts): when it fails the wait carries backupBlocked and stays
// answerable.
import type { JsonObject } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import { pb } from "../../../contract/index.js";
import type { SessionBackups } from "../../stores/session-backup.js";
import type { StoredTask } from "../../stores/state.js";
import { t } from "../../../i18n/index.js";
import { sanitizeClientText } from "../sanitize.js";
import { isTerminal, serverStatusEvent, TaskRecord } from "../task-record.js";

/** Which backup a publication needs (the reference's names). */
export type BackupKind = "normal_turn_end" | "input_required" | "terminal";

export type BackupVerdict =
  /** Backups are off. */
  | { kind: "off" }
  | { kind: "committed" }
  /** A non-critical backup failed: logged, the publication goes on. */
  | { kind: "failed" }
  /** A critical backup failed: metadata.iac_code.backupBlocked. */
  | { kind: "blocked"; backupBlocked: JsonObject };

/** The lower-case state name a blocked terminal would have had (completed, failed, canceled). */
export function stateName(state: pb.TaskState): string {
  return pb.TaskState[state].toLowerCase().replace(/_/g, "-");
}

/** Why a backup failed, as a client may read it: the error code and a sanitised text (no path). */
function errorText(error: unknown): string {
  const e = error as NodeJS.ErrnoException | null;
  const text = sanitizeClientText(e?.message ?? String(error), 300);
  return e?.code && !text.startsWith(e.code) ? `${e.code}: ${text}` : text;
}

export class BackupGate {
  constructor(
    private readonly backups: SessionBackups | undefined,
    private readonly logger: Logger,
  ) {}

  get enabled(): boolean {
    return this.backups !== undefined;
  }

  /**
   * Backs up the context with `ended` (the task as its end leaves it) before
   * that end is published; critical when the end is terminal.
   */
  turnEnd(contextId: string, ended: StoredTask): Promise<BackupVerdict> {
    const state = ended.task.status?.state ?? pb.TaskState.UNSPECIFIED;
    const terminal = isTerminal(state);
    return this.run(contextId, ended, terminal ? "terminal" : "normal_turn_end", terminal, state);
  }

  /** The critical backup of a wait (`waiting`: the task as the wait leaves it), before it is published. */
  inputRequired(contextId: string, waiting: StoredTask): Promise<BackupVerdict> {
    return this.run(contextId, waiting, "input_required", true, pb.TaskState.INPUT_REQUIRED);
  }

  /**
   * CancelTask of a task that waits with no live turn: the `terminal` backup
   * of the task as `canceled` leaves it. True when the cancel may be
   * published; false when the backup is blocked: the task then stays waiting
   * (its input kept) with backupBlocked, applied to `record` (the caller
   * stages and commits it) and returned as `blocked`.
   */
  async cancelWaiting(
    record: TaskRecord,
    canceled: pb.StreamResponse,
  ): Promise<{ ok: true } | { ok: false; blocked: pb.StreamResponse }> {
    const { task, owner, language, updatedAt, credentialNames } = record;
    const copy = new TaskRecord(
      { ...task, history: task.history.slice() },
      owner,
      language,
      updatedAt,
      credentialNames,
    );
    copy.apply(canceled, true);
    const verdict = await this.turnEnd(task.contextId, copy);
    if (verdict.kind !== "blocked") return { ok: true };
    const iac: JsonObject = { backupBlocked: verdict.backupBlocked };
    if (record.pendingInput) iac.input = record.pendingInput;
    const blocked = serverStatusEvent(
      task,
      pb.TaskState.INPUT_REQUIRED,
      t(language, "a2a.backupBlocked"),
      "backup-blocked",
      { iac_code: iac },
    );
    record.apply(blocked, true);
    return { ok: false, blocked };
  }

  private async run(
    contextId: string,
    live: StoredTask | undefined,
    reason: BackupKind,
    critical: boolean,
    state: pb.TaskState,
  ): Promise<BackupVerdict> {
    if (!this.backups) return { kind: "off" };
    try {
      await this.backups.commit(contextId, live);
      return { kind: "committed" };
    } catch (error) {
      const taskId = live?.task.id;
      if (!critical) {
        this.logger.warn({ err: error, contextId, taskId, reason }, "session backup failed");
        return { kind: "failed" };
      }
      this.logger.error({ err: error, contextId, taskId, reason }, "session backup blocked");
      return {
        kind: "blocked",
        backupBlocked: {
          reason,
          blockedTerminalState: stateName(state),
          error: errorText(error),
          recoverable: true,
        },
      };
    }
  }
}
