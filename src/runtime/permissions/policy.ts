// The permission decision for one tool call, before anyone is asked.
// Order: deny rules, read-only, ask rules, modes, allow rules (incl. the
// session's allow_always answers), then ask (or deny in dont_ask mode, or
// allow when the server auto-approves, except cloud mutations).
import { ConfigError } from "../errors.js";
import type { AnyTool } from "../tools/types.js";
import type { Workspace } from "../tools/workspace.js";
import { ruleApplies, type PermissionRule } from "./rules.js";

export const PERMISSION_MODES = ["default", "accept_edits", "bypass", "dont_ask"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

const MODE_ALIASES: Record<string, PermissionMode> = {
  default: "default",
  accept_edits: "accept_edits",
  acceptedits: "accept_edits",
  bypass: "bypass",
  bypass_permissions: "bypass",
  bypasspermissions: "bypass",
  dont_ask: "dont_ask",
  dontask: "dont_ask",
};

export function parsePermissionMode(value: unknown, where: string): PermissionMode {
  const key = typeof value === "string" ? value.trim().toLowerCase().replace(/-/g, "_") : "";
  const mode = MODE_ALIASES[key];
  if (!mode)
    throw new ConfigError(
      `${where}: unknown permission mode ${JSON.stringify(value)} (${PERMISSION_MODES.join(", ")}).`,
    );
  return mode;
}

export interface PermissionSettings {
  mode: PermissionMode;
  allow: PermissionRule[];
  deny: PermissionRule[];
  ask: PermissionRule[];
  /** Server flag: approve what would be asked (audited); cloud mutations are denied instead. */
  autoApprove: boolean;
}

export type PermissionDecision =
  | { behavior: "allow"; reason: string; autoApproved: boolean; audited: boolean }
  | { behavior: "deny"; reason: string; autoApproved: boolean }
  | { behavior: "ask" };

export function decidePermission(
  tool: AnyTool,
  input: Record<string, unknown>,
  workspace: Workspace,
  settings: PermissionSettings,
  sessionRules: readonly PermissionRule[],
): PermissionDecision {
  const content = tool.ruleContent?.(input, workspace);
  const exactOnly = tool.isCloudMutation === true || !tool.supportsBlanketAllow;
  const deny = settings.deny.find((r) => ruleApplies(r, tool.name, content));
  if (deny) return { behavior: "deny", reason: `deny_rule:${deny.raw}`, autoApproved: false };

  const readOnly = tool.isReadOnly(input);
  const askRule = settings.ask.find((r) => ruleApplies(r, tool.name, content));
  if (readOnly && !askRule)
    return { behavior: "allow", reason: "read_only", autoApproved: false, audited: false };

  if (!askRule) {
    if (settings.mode === "bypass" && !tool.isCloudMutation) {
      return { behavior: "allow", reason: "mode:bypass", autoApproved: true, audited: true };
    }
    if (settings.mode === "accept_edits" && tool.isFileEdit) {
      return { behavior: "allow", reason: "mode:accept_edits", autoApproved: true, audited: true };
    }
    const allow = settings.allow.find((r) => ruleApplies(r, tool.name, content, exactOnly));
    if (allow)
      return { behavior: "allow", reason: `allow_rule:${allow.raw}`, autoApproved: true, audited: true };
    const session = sessionRules.find((r) => ruleApplies(r, tool.name, content, exactOnly));
    if (session)
      return { behavior: "allow", reason: `session_rule:${session.raw}`, autoApproved: true, audited: true };
  }

  if (settings.mode === "dont_ask") return { behavior: "deny", reason: "mode:dont_ask", autoApproved: false };
  if (settings.autoApprove) {
    if (tool.isCloudMutation)
      return { behavior: "deny", reason: "auto_approve:cloud_mutation", autoApproved: true };
    return { behavior: "allow", reason: "auto_approve", autoApproved: true, audited: true };
  }
  return { behavior: "ask" };
}

/** The session rule an allow_always answer adds: the bare tool, or the exact operation for cloud mutations. */
export function sessionRuleFor(
  tool: AnyTool,
  input: Record<string, unknown>,
  workspace: Workspace,
): PermissionRule | undefined {
  if (tool.isCloudMutation || !tool.supportsBlanketAllow) {
    const content = tool.ruleContent?.(input, workspace);
    return content === undefined
      ? undefined
      : { raw: `${tool.name}(${content})`, tool: tool.name, pattern: content };
  }
  return { raw: tool.name, tool: tool.name };
}
