// Permission rules: `tool` or `tool(pattern)`. A pattern is a glob matched
// against the tool's rule content (a workspace-relative path for file tools,
// `create:<stack name>` for ros_stack, ...). Cloud mutations accept exact
// patterns only, never a bare tool name or a wildcard.
import { ConfigError } from "../errors.js";
import { globToRegExp } from "../tools/glob.js";

export interface PermissionRule {
  raw: string;
  tool: string;
  pattern?: string;
}

const RULE = /^([A-Za-z0-9_:.-]+)(?:\((.*)\))?$/s;

export function parseRule(raw: string): PermissionRule {
  const text = typeof raw === "string" ? raw.trim() : "";
  const match = RULE.exec(text);
  if (!match || (match[2] !== undefined && match[2].trim() === "")) {
    throw new ConfigError(`Invalid permission rule ${JSON.stringify(raw)}: expected tool or tool(pattern).`);
  }
  return match[2] === undefined
    ? { raw: text, tool: match[1] }
    : { raw: text, tool: match[1], pattern: match[2].trim() };
}

export function parseRules(list: unknown, where: string): PermissionRule[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new ConfigError(`${where} must be a list of rules.`);
  return list.map((item) => {
    if (typeof item !== "string") throw new ConfigError(`${where} must contain strings.`);
    return parseRule(item);
  });
}

/**
 * Whether a rule applies to a call. `exactOnly` (cloud mutations) requires a
 * pattern equal to the content; otherwise a bare rule covers every call and a
 * pattern is a glob.
 */
export function ruleApplies(
  rule: PermissionRule,
  toolName: string,
  content: string | undefined,
  exactOnly = false,
): boolean {
  if (rule.tool !== toolName) return false;
  if (rule.pattern === undefined) return !exactOnly;
  if (content === undefined) return false;
  if (exactOnly) return rule.pattern === content;
  return globToRegExp(rule.pattern).test(content);
}
