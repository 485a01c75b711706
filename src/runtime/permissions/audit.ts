// The permission audit log: one JSON line per decision in the session's
// permission-audit log of the runtime store, in the shape the A2A server's
// audit uses too (schemas/audit/permission-audit-line.json). Inputs are
// fingerprinted, never stored. Writing is the gate of an allow: record()
// returns false when the line could not be committed and the caller then
// denies (fail closed).
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import type { PermissionAuditLine } from "../../contract/index.js";
import type { StoreLog, RuntimeStore } from "../store/runtime-store.js";

/** What the gate decided; record() adds the time and the input's fingerprint. */
export type AuditEntry = Omit<
  PermissionAuditLine,
  "ts" | "inputFingerprint" | "sessionId" | "taskId" | "contextId" | "owner"
> & {
  sessionId: string;
  input: Record<string, unknown>;
};

/** One line of the permission-audit log. */
export type AuditLine = PermissionAuditLine;

export function fingerprint(value: unknown): string {
  return `sha256:${createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16)}`;
}

export class AuditLog {
  constructor(
    private readonly store: RuntimeStore,
    private readonly log: StoreLog,
    readonly logger: Logger,
  ) {}

  async record(entry: AuditEntry): Promise<boolean> {
    const { input, ...rest } = entry;
    const line: AuditLine = { ts: new Date().toISOString(), ...rest, inputFingerprint: fingerprint(input) };
    try {
      this.log.append([JSON.stringify(line)]);
      await this.store.commit();
      return true;
    } catch (error) {
      this.logger.error(
        { err: (error as NodeJS.ErrnoException).code ?? String(error), toolUseId: entry.toolUseId },
        "permission audit record could not be written",
      );
      // The record stays staged and may land once the store recovers: the deny that replaced it
      // lands right after it, so the log never shows an allow that did not happen alone.
      if (line.decision !== "deny") {
        this.log.append([
          JSON.stringify({ ...line, decision: "deny", reason: "audit_failed", autoApproved: false }),
        ]);
      }
      return false;
    }
  }
}
