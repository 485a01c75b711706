// One SKILL.md: YAML front matter between two `---` lines, then the
// instructions (the body the `skill` tool returns). A file that does not
// parse, or whose front matter lacks a field or has one of the wrong kind,
// is refused with the field and why: discovery logs it and skips the skill.
import YAML from "yaml";

export const SKILL_FILE = "SKILL.md";

/** Where a skill was found, in precedence order. */
export type SkillSource = "config" | "workspace" | "bundled";

export interface Skill {
  name: string;
  description: string;
  whenToUse?: string;
  /** Tools the skill's instructions use (informational: the permission rules still apply). */
  allowedTools: string[];
  /** The instructions: the file after its front matter. */
  body: string;
  /** Absolute path of the SKILL.md. */
  file: string;
  source: SkillSource;
}

export type SkillParse =
  { ok: true; skill: Omit<Skill, "file" | "source"> } | { ok: false; field: string; message: string };

/** Skill names: what a model types and a pipeline step names. */
export const SKILL_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Larger files are refused (a skill is loaded whole into the conversation). */
export const MAX_SKILL_BYTES = 64 * 1024;
const MAX_DESCRIPTION = 1024;

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

function refuse(field: string, message: string): SkillParse {
  return { ok: false, field, message };
}

function optionalText(data: Record<string, unknown>, field: string): string | undefined | SkillParse {
  const value = data[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") return refuse(field, "must be a string");
  if (value.length > MAX_DESCRIPTION) return refuse(field, `is longer than ${MAX_DESCRIPTION} characters`);
  return value.trim() || undefined;
}

/** Parses the text of a SKILL.md. Unknown front matter keys are ignored. */
export function parseSkillFile(text: string): SkillParse {
  if (Buffer.byteLength(text, "utf8") > MAX_SKILL_BYTES)
    return refuse("(file)", `is larger than ${MAX_SKILL_BYTES} bytes`);
  const match = FRONT_MATTER.exec(text);
  if (!match)
    return refuse("(front matter)", "is missing: the file must start with a `---` line, YAML, and `---`");
  let data: unknown;
  try {
    data = YAML.parse(match[1]);
  } catch (error) {
    return refuse("(front matter)", `is not valid YAML (${(error as Error).message.split("\n")[0]})`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data))
    return refuse("(front matter)", "must be a YAML mapping of fields");
  const fields = data as Record<string, unknown>;

  const name = fields.name;
  if (name === undefined || name === null) return refuse("name", "is missing");
  if (typeof name !== "string" || !SKILL_NAME.test(name))
    return refuse(
      "name",
      "must be 1 to 64 lowercase letters, digits, '-' or '_', starting with a letter or digit",
    );

  const description = optionalText(fields, "description");
  if (typeof description === "object") return description;
  if (description === undefined) return refuse("description", "is missing (a non-empty string is required)");

  const whenToUse = optionalText(fields, "when_to_use");
  if (typeof whenToUse === "object") return whenToUse;

  const tools = fields.allowed_tools ?? [];
  if (!Array.isArray(tools) || !tools.every((t) => typeof t === "string" && t.trim() !== ""))
    return refuse("allowed_tools", "must be a list of tool names");

  const body = text.slice(match[0].length).trim();
  if (!body) return refuse("(body)", "is empty: the instructions follow the front matter");
  return {
    ok: true,
    skill: {
      name,
      description,
      ...(whenToUse ? { whenToUse } : {}),
      allowedTools: (tools as string[]).map((t) => t.trim()),
      body,
    },
  };
}
