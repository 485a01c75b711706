// A message on a context the primary store no longer holds (its state was
// lost, the persistence dir replaced) restores the context from its session
// backup first (a2a-iaccode.md §12.3), so the turn continues the same session
// and conversation. A backup that cannot be read now is SESSION_BACKUP_NOT_READY:
// a retryable error the AG-UI adapter maps onto its own code.
import { t } from "../../../i18n/index.js";
import { BackupNotReadyError, type SessionBackups } from "../../stores/session-backup.js";
import { isValidA2aId } from "../request/ids.js";
import { A2AError } from "../request/errors.js";

export const SESSION_BACKUP_NOT_READY = "SESSION_BACKUP_NOT_READY";

/** The error of a backup that cannot be read now (JSON-RPC data: ErrorInfo metadata code + retryable). */
export function backupNotReady(contextId: string): A2AError {
  return new A2AError("InternalError", t("en", "a2a.backupNotReady"), {
    code: SESSION_BACKUP_NOT_READY,
    retryable: "true",
    contextId,
  });
}

/**
 * Restores `contextId` from its backup when it is neither in memory nor in
 * the primary store; "current", "restored" or "missing" (no backup either:
 * the message starts a new context as usual).
 */
export async function restoreFromBackup(
  backups: SessionBackups | undefined,
  contextId: string | undefined,
  contexts: { loaded(contextId: string): unknown },
): Promise<"current" | "restored" | "missing"> {
  if (!backups || !contextId || !isValidA2aId(contextId) || contexts.loaded(contextId)) return "current";
  try {
    return await backups.ensureRestored(contextId);
  } catch (error) {
    if (error instanceof BackupNotReadyError) throw backupNotReady(contextId);
    throw error;
  }
}
