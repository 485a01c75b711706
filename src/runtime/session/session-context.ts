// The parts of one session that its turn loop, tool rounds, permission
// checks and compaction share; RuntimeSession builds them once.
import type { Logger } from "pino";
import type { AuditLog } from "../permissions/audit.js";
import type { Workspace } from "../tools/workspace.js";
import type { Conversation } from "./conversation.js";
import type { SessionDeps } from "./deps.js";
import type { PermissionGate } from "./permission-gate.js";
import type { SessionData } from "./store.js";
import type { WaitingRound } from "./waiting-round.js";

/** Whether the session was closed (shutdown, eviction): read when a wait ends, never waited on. */
export interface SessionLifetime {
  readonly closed: boolean;
}

export interface SessionContext {
  readonly sessionId: string;
  readonly deps: SessionDeps;
  /** The runtime's logger bound to the session id. */
  readonly logger: Logger;
  readonly workspace: Workspace;
  readonly store: SessionData;
  readonly audit: AuditLog;
  readonly conversation: Conversation;
  readonly rounds: WaitingRound;
  readonly permissions: PermissionGate;
  /** Closed when the session closes (shutdown, eviction), which is not a cancelled turn. */
  readonly lifetime: SessionLifetime;
}
