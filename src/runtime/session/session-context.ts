// The parts of one session that its turn loop, tool rounds, permission
// checks and compaction share; RuntimeSession builds them once. What the
// permission gate reads is declared beside it (GateParts), and the session's
// lifetime beside the waiting round that reads it, so neither imports this.
import type { Conversation } from "./conversation.js";
import type { GateParts, PermissionGate } from "./permission-gate.js";
import type { SessionLifetime } from "./waiting-round.js";

export interface SessionContext extends GateParts {
  readonly conversation: Conversation;
  readonly permissions: PermissionGate;
  /** Closed when the session closes (shutdown, eviction), which is not a cancelled turn. */
  readonly lifetime: SessionLifetime;
}
