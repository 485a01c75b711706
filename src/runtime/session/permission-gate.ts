// Whether a tool call may run. The policy decides first (deny/ask/allow
// rules, modes, read-only, auto-approve); otherwise the user is asked
// through the waiting round. An allow counts only once its audit line is
// written (fail closed); an allow_always answer becomes a session rule,
// saved so that it holds after a restart.
import type { Logger } from "pino";
import { errorMessage } from "../errors.js";
import type { AuditEntry, AuditLog } from "../permissions/audit.js";
import { permissionRequest } from "../permissions/input-requests.js";
import { decidePermission, sessionRuleFor, type PermissionDecision } from "../permissions/policy.js";
import type { PermissionRule } from "../permissions/rules.js";
import type { InputRequest, RuntimeEvent } from "../seam.js";
import type { Workspace } from "../tools/workspace.js";
import type { SessionDeps } from "./deps.js";
import type { PendingRound, RoundDecision, SessionData } from "./store.js";
import type { RunnableCall } from "./tool-call.js";
import type { Turn } from "./turn.js";
import type { WaitingRound } from "./waiting-round.js";

/** The parts of a session the gate reads; SessionContext (which holds the gate) extends them. */
export interface GateParts {
  readonly sessionId: string;
  readonly deps: SessionDeps;
  /** The runtime's logger bound to the session id. */
  readonly logger: Logger;
  readonly workspace: Workspace;
  readonly store: SessionData;
  readonly audit: AuditLog;
  readonly rounds: WaitingRound;
}

function decided(call: RunnableCall, allowed: boolean, autoApproved: boolean, reason: string): RuntimeEvent {
  return {
    type: "permission_decided",
    toolUseId: call.use.id,
    toolName: call.tool.name,
    allowed,
    autoApproved,
    reason,
  };
}

export class PermissionGate {
  constructor(
    private readonly session: GateParts,
    /** The allow_always answers of this session. */
    private rules: PermissionRule[],
  ) {}

  /**
   * Decides one call, asking the user when the policy says so. A request
   * already in the round (restored after a restart) is not decided again:
   * its answer is used, or the same request is published again.
   */
  async *decide(
    turn: Turn,
    round: PendingRound,
    call: RunnableCall,
  ): AsyncGenerator<RuntimeEvent, RoundDecision> {
    const { workspace, rounds } = this.session;
    let entry = round.inputs.find(
      (e) => e.request.kind === "permission" && e.request.toolUseId === call.use.id,
    );
    if (!entry) {
      const decision = decidePermission(
        call.tool,
        call.input,
        workspace,
        this.session.deps.config.permissions,
        this.rules,
      );
      if (decision.behavior !== "ask") return yield* this.withoutAsking(call, decision);
      entry = {
        request: permissionRequest({
          toolUseId: call.use.id,
          toolName: call.tool.name,
          input: call.input,
          description: call.tool.describe(call.input, turn.lang, workspace),
          isReadOnly: call.tool.isReadOnly(call.input),
          lang: turn.lang,
        }),
      };
      round.inputs.push(entry);
      if (!(await rounds.persist(round))) {
        // Without a durable record the wait could not survive a restart: fail safe.
        round.inputs.pop();
        await this.audit(call, { decision: "deny", reason: "state_unavailable", autoApproved: false });
        yield decided(call, false, false, "state_unavailable");
        return { allowed: false, reason: "state_unavailable" };
      }
    }
    if (!entry.answer) yield { type: "input_required", request: entry.request };
    const answer = await rounds.wait(turn.signal, entry);
    const decision = answer.kind === "permission" ? answer.decision : "deny";
    const cancelled = turn.signal.aborted;
    const inputId = entry.request.inputId;
    if (!cancelled) {
      yield { type: "input_received", inputId, toolUseId: call.use.id, kind: "permission", decision };
    }
    if (decision === "deny") {
      const reason = cancelled ? "cancelled" : "user:deny";
      await this.audit(call, {
        decision: cancelled ? "cancelled" : "deny",
        reason,
        autoApproved: false,
        inputId,
      });
      return { allowed: false, reason };
    }
    const reason = `user:${decision}`;
    if (!(await this.audit(call, { decision, reason, autoApproved: false, inputId }))) {
      return { allowed: false, reason: "audit_failed" };
    }
    if (decision === "allow_always") await this.remember(call);
    return { allowed: true, reason };
  }

  /** Audits the denial of a permission nobody answered: the user sent a new message instead. */
  async supersede(request: InputRequest): Promise<void> {
    await this.session.audit.record({
      sessionId: this.session.sessionId,
      toolUseId: request.toolUseId,
      toolName: request.toolName,
      decision: "cancelled",
      reason: "superseded",
      autoApproved: false,
      inputId: request.inputId,
      input: {},
    });
  }

  private async *withoutAsking(
    call: RunnableCall,
    decision: Exclude<PermissionDecision, { behavior: "ask" }>,
  ): AsyncGenerator<RuntimeEvent, RoundDecision> {
    let allowed = decision.behavior === "allow";
    let reason = decision.reason;
    const { autoApproved } = decision;
    if (decision.behavior === "allow" && decision.audited) {
      if (!(await this.audit(call, { decision: "allow_once", reason, autoApproved }))) {
        allowed = false;
        reason = "audit_failed";
      }
    } else if (decision.behavior === "deny") {
      await this.audit(call, { decision: "deny", reason, autoApproved });
    }
    yield decided(call, allowed, autoApproved, reason);
    return { allowed, reason };
  }

  private audit(
    call: RunnableCall,
    entry: Pick<AuditEntry, "decision" | "reason" | "autoApproved" | "inputId">,
  ): Promise<boolean> {
    return this.session.audit.record({
      sessionId: this.session.sessionId,
      toolUseId: call.use.id,
      toolName: call.tool.name,
      input: call.input,
      ...entry,
    });
  }

  private async remember(call: RunnableCall): Promise<void> {
    const rule = sessionRuleFor(call.tool, call.input, this.session.workspace);
    if (!rule || this.rules.some((r) => r.raw === rule.raw)) return;
    this.rules = [...this.rules, rule];
    await this.session.store
      .saveSessionRules(this.rules)
      .catch((error: unknown) =>
        this.session.logger.warn({ err: errorMessage(error) }, "session rules not saved"),
      );
  }
}
