// The permission audit log: one JSON line per decision in the session
// directory, in the shape the A2A server's audit uses too
// (schemas/audit/permission-audit-line.json). Inputs are fingerprinted, never
// stored. Writing is the gate of an allow: record() returns false when the
// line could not be written and the caller then denies (fail closed).
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import type { PermissionAuditLine } from "../../contract/index.js";
import { appendJsonLine, SerialQueue } from "../fs-util.js";

/** What the gate decided; record() adds the time and the input's fingerprint. */
export type AuditEntry = Omit<
  PermissionAuditLine,
  "ts" | "inputFingerprint" | "sessionId" | "taskId" | "contextId" | "owner"
> & {
  sessionId: string;
  input: Record<string, unknown>;
};

/** One line of permission-audit.jsonl. */
export type AuditLine = PermissionAuditLine;

export function fingerprint(value: unknown): string {
  return `sha256:${createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16)}`;
}

export class AuditLog {
  private readonly queue = new SerialQueue();

  constructor(
    readonly file: string,
    private readonly logger: Logger,
  ) {}

  async record(entry: AuditEntry): Promise<boolean> {
    const { input, ...rest } = entry;
    const line: AuditLine = { ts: new Date().toISOString(), ...rest, inputFingerprint: fingerprint(input) };
    try {
      await this.queue.run(() => appendJsonLine(this.file, line));
      return true;
    } catch (error) {
      this.logger.error(
        { err: (error as NodeJS.ErrnoException).code ?? String(error), toolUseId: entry.toolUseId },
        "permission audit record could not be written",
      );
      return false;
    }
  }
}
