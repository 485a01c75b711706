// The skill tool in real turns (scripted model, real runtime and session):
// it runs without a permission prompt, the model gets the skill's body with
// the tools it allows, the workspace's skill wins over the config dir's, an
// unknown name is an error result the model reads, the system prompt names
// the skills, and a broken SKILL.md is a logged warning, not a failed turn.
import { expect } from "chai";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { RuntimeEvent } from "../../src/runtime/seam.js";
import {
  capturingLogger,
  ofType,
  openToolSession,
  removeTempDirs,
  SCRIPTS,
  tempDir,
  turn,
  type ToolSession,
} from "./helpers.js";

const SKILLS_SCRIPT = path.join(SCRIPTS, "skills.yaml");

async function putSkill(place: string, dir: string, text: string): Promise<string> {
  const file = path.join(place, dir, "SKILL.md");
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  return file;
}

const said = (events: RuntimeEvent[]): string =>
  ofType(events, "text_delta")
    .map((e) => e.text)
    .join("");

describe("skills: the skill tool in a turn", () => {
  let env: ToolSession | undefined;
  afterEach(async () => {
    await env?.runtime.close();
    env = undefined;
    await removeTempDirs();
  });

  async function open(logger = capturingLogger().logger): Promise<ToolSession> {
    const configDir = await tempDir("iac-skills-config-");
    const cwd = await tempDir("iac-skills-ws-");
    return openToolSession(configDir, cwd, { runtime: { scriptFile: SKILLS_SCRIPT, logger } });
  }

  it("loads a bundled skill without asking; the model reads its source and its tools", async () => {
    env = await open();
    const events = await turn(env.session, "[LOAD iac-aliyun]");
    expect(ofType(events, "input_required")).to.deep.equal([]);
    expect(ofType(events, "error")).to.deep.equal([]);
    const result = ofType(events, "tool_result").find((e) => e.name === "skill");
    expect(result?.isError).to.not.equal(true);
    expect(result?.result).to.deep.include({ name: "iac-aliyun", source: "bundled" });
    expect(said(events)).to.match(
      /^Loaded iac-aliyun from bundled\. Tools this skill allows: read_file, write_file, .*ros_stack, ask_user_question\.$/,
    );
  });

  it("loads the terraform_ros_conversion skill behind the advertised A2A skill", async () => {
    env = await open();
    const events = await turn(env.session, "[LOAD terraform]");
    const result = ofType(events, "tool_result").find((e) => e.name === "skill");
    expect(result?.result).to.deep.include({ name: "terraform_ros_conversion", source: "bundled" });
    // The rule matches the body's text: what the model read is the skill's instructions.
    expect(said(events)).to.equal("I have the Terraform packaging instructions.");
  });

  it("loads a config dir skill, and takes the workspace's before the config dir's of the same name", async () => {
    const workspaceSkill =
      "---\nname: shared\ndescription: The workspace's.\nallowed_tools: [grep]\n---\nWorkspace rules.\n";
    const userSkill = "---\nname: shared\ndescription: The user's.\n---\nUser rules.\n";
    env = await open();
    await putSkill(path.join(env.configDir, "skills"), "shared", userSkill);
    expect(said(await turn(env.session, "[LOAD shared]"))).to.equal(
      "Loaded shared from config. This skill names no tools.",
    );
    await env.runtime.close();

    env = await open();
    await putSkill(path.join(env.configDir, "skills"), "shared", userSkill);
    await putSkill(path.join(env.cwd, "skills"), "team", workspaceSkill);
    expect(said(await turn(env.session, "[LOAD shared]"))).to.equal(
      "Loaded shared from workspace. Tools this skill allows: grep.",
    );
  });

  it("gives the model an error result for a skill that does not exist, and the turn goes on", async () => {
    env = await open();
    const events = await turn(env.session, "[LOAD missing]");
    const result = ofType(events, "tool_result").find((e) => e.name === "skill");
    expect(result?.isError).to.equal(true);
    expect(said(events)).to.equal("That skill does not exist.");
    expect(ofType(events, "message_end").at(-1)?.stopReason).to.equal("end_turn");
  });

  it("names the skills in the system prompt", async () => {
    env = await open();
    expect(said(await turn(env.session, "[SKILLS?]"))).to.equal("The system prompt names the skills.");
  });

  it("logs a broken SKILL.md with its file and field, and the turn runs with the other skills", async () => {
    const { logger, lines } = capturingLogger();
    env = await open(logger);
    const broken = await putSkill(
      path.join(env.cwd, ".iac-code", "skills"),
      "broken",
      "---\nname: broken\ndescription: Fine.\nallowed_tools: read_file\n---\nBody.\n",
    );
    const events = await turn(env.session, "[LOAD iac-aliyun]");
    expect(ofType(events, "error")).to.deep.equal([]);
    expect(said(events)).to.match(/^Loaded iac-aliyun from bundled\./);
    const warning = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.level === 40 && l.skillFile === broken);
    expect(warning).to.include({ field: "allowed_tools" });
    expect(warning?.msg).to.equal(`Skill skipped: ${broken}: allowed_tools must be a list of tool names.`);
  });
});
