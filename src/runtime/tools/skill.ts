// The `skill` tool: its description lists the skills of the turn (name,
// description, when to use), and a call with a name returns that skill's
// instructions. Read-only (it reads SKILL.md files discovery already
// found), so it is allowed without asking. Made per turn: the list depends
// on the workspace.
import type { SkillCatalog } from "../skills/discovery.js";
import type { Skill } from "../skills/skill-file.js";
import { readOnlyDescription } from "./describe.js";
import type { Tool } from "./types.js";

export const SKILL_TOOL = "skill";

interface SkillInput {
  name: string;
}

/** Skills described in full in the tool's description; the others by name only (the prompt stays small). */
export const MAX_DESCRIBED = 40;
/** A described skill's line is cut after this many characters. */
const MAX_LINE = 400;

/** One line per skill, as the tool description shows it. */
export function skillLine(skill: Skill): string {
  const when = skill.whenToUse ? ` When to use: ${skill.whenToUse}` : "";
  const line = `- ${skill.name}: ${skill.description}${when}`;
  return line.length > MAX_LINE ? `${line.slice(0, MAX_LINE - 1)}…` : line;
}

function description(skills: SkillCatalog): string {
  const intro =
    "Loads a skill: the instructions (a playbook) for a kind of task. Before working on a task a skill " +
    "covers, call this tool with the skill's name and follow the instructions it returns.";
  if (skills.size === 0) return `${intro}\n\nNo skills are available.`;
  const all = [...skills.values()];
  const lines = all.slice(0, MAX_DESCRIBED).map(skillLine);
  const rest = all.slice(MAX_DESCRIBED).map((skill) => skill.name);
  if (rest.length > 0) lines.push(`- also: ${rest.join(", ")}`);
  return `${intro}\n\nAvailable skills:\n${lines.join("\n")}`;
}

/** What the model reads for a loaded skill: where it comes from, the tools it uses, its instructions. */
export function skillContent(skill: Skill): string {
  const tools =
    skill.allowedTools.length > 0
      ? `Tools this skill allows: ${skill.allowedTools.join(", ")}.`
      : "This skill names no tools.";
  return `Skill "${skill.name}" (${skill.source}). ${tools}\n\n${skill.body}`;
}

/** One tool per catalog: discovery hands out the same catalog while nothing changed (a second at most). */
const toolsByCatalog = new WeakMap<SkillCatalog, Tool<SkillInput>>();

export function skillTool(skills: SkillCatalog): Tool<SkillInput> {
  let tool = toolsByCatalog.get(skills);
  if (!tool) {
    tool = buildSkillTool(skills);
    toolsByCatalog.set(skills, tool);
  }
  return tool;
}

function buildSkillTool(skills: SkillCatalog): Tool<SkillInput> {
  return {
    name: SKILL_TOOL,
    description: description(skills),
    inputSchema: {
      type: "object",
      additionalProperties: false,
      required: ["name"],
      properties: {
        name: {
          type: "string",
          minLength: 1,
          maxLength: 64,
          description: "The skill's name, as listed in this tool's description.",
        },
      },
    },
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    supportsBlanketAllow: true,
    describe: (input, lang) => readOnlyDescription(SKILL_TOOL, lang, input.name),
    run(input) {
      const skill = skills.get(input.name);
      if (!skill) {
        const known = [...skills.keys()];
        return Promise.resolve({
          content: `Unknown skill "${input.name}". ${known.length > 0 ? `Available skills: ${known.join(", ")}.` : "No skills are available."}`,
          isError: true,
        });
      }
      return Promise.resolve({
        content: skillContent(skill),
        data: { name: skill.name, source: skill.source, allowedTools: skill.allowedTools },
      });
    },
  };
}
