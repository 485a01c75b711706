// Permission rules: `tool` or `tool(pattern)`. A pattern is a glob matched
// against the tool's rule content (a workspace-relative path for file tools,
// `create:<stack name>` for ros_stack, ...). Cloud mutations accept exact
// patterns only, never a bare tool name or a wildcard. aliyun_api rules name
// an operation as `aliyun_api(<product>:<Action>)`; the product is compared
// in lower case, and an allow rule must name one operation exactly.
import { ConfigError } from "../errors.js";
import { globToRegExp } from "../tools/glob.js";

export interface PermissionRule {
  raw: string;
  tool: string;
  pattern?: string;
}

const RULE = /^([A-Za-z0-9_:.-]+)(?:\((.*)\))?$/s;

const ALIYUN_API = "aliyun_api";
const ALIYUN_OPERATION = /^([A-Za-z0-9-]+):([A-Za-z0-9*?]+)$/;

/** aliyun_api(ECS:DeleteInstance) and aliyun_api(ecs:DeleteInstance) are one rule. */
function aliyunApiRule(text: string, pattern: string, list: RuleList | undefined): PermissionRule {
  const match = ALIYUN_OPERATION.exec(pattern);
  const exact = match !== null && !/[*?]/.test(match[2]);
  if (!match || (list === "allow" && !exact)) {
    throw new ConfigError(
      `Invalid permission rule ${JSON.stringify(text)}: aliyun_api rules name one operation as aliyun_api(<product>:<Action>), e.g. aliyun_api(ecs:DeleteInstance)${list === "allow" ? "; allow rules take no wildcard" : ""}.`,
    );
  }
  return { raw: text, tool: ALIYUN_API, pattern: `${match[1].toLowerCase()}:${match[2]}` };
}

export type RuleList = "allow" | "deny" | "ask";

export function parseRule(raw: string, list?: RuleList): PermissionRule {
  const text = typeof raw === "string" ? raw.trim() : "";
  const match = RULE.exec(text);
  if (!match || (match[2] !== undefined && match[2].trim() === "")) {
    throw new ConfigError(`Invalid permission rule ${JSON.stringify(raw)}: expected tool or tool(pattern).`);
  }
  if (match[1] === ALIYUN_API) {
    // Reads are allowed anyway; a bare allow rule would pre-approve nothing, so it is refused.
    if (match[2] === undefined && list === "allow") return aliyunApiRule(text, "", list);
    if (match[2] !== undefined) return aliyunApiRule(text, match[2].trim(), list);
  }
  return match[2] === undefined
    ? { raw: text, tool: match[1] }
    : { raw: text, tool: match[1], pattern: match[2].trim() };
}

export function parseRules(list: unknown, where: string, kind?: RuleList): PermissionRule[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new ConfigError(`${where} must be a list of rules.`);
  return list.map((item) => {
    if (typeof item !== "string") throw new ConfigError(`${where} must contain strings.`);
    return parseRule(item, kind);
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
