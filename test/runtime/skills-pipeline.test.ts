// A pipeline step that names a skill (selling's intent_parsing names
// iac-aliyun-intent) gets that skill's instructions in its system prompt,
// found through the same discovery as the skill tool: the bundled one, which
// a workspace's skill of the same name cannot replace (bundled skills take
// precedence), a parse failure of which is still reported. The scripted model concludes with a summary
// that says which instructions it saw (test/fixtures/scripts/skills.yaml).
import { expect } from "chai";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { createAgentRuntime } from "../../src/runtime/index.js";
import type { AgentRuntime, PipelineEnvelope, RuntimeEvent } from "../../src/runtime/seam.js";
import { capturingLogger, ofType, removeTempDirs, SCRIPTS, tempDir, turn } from "./helpers.js";

const SKILLS_SCRIPT = path.join(SCRIPTS, "skills.yaml");

function envelopes(events: RuntimeEvent[]): PipelineEnvelope[] {
  return events.flatMap((e) => (e.type === "pipeline" ? e.envelopes : []));
}

describe("skills: a pipeline step loads its skill", () => {
  let runtime: AgentRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
    await removeTempDirs();
  });

  /** Runs the selling pipeline's first step in a fresh workspace; returns the intent's summary and the logs. */
  async function intentStep(prepare: (cwd: string) => Promise<void> = () => Promise.resolve()) {
    const dir = await tempDir("iac-skills-pipeline-");
    const cwd = path.join(dir, "workspace");
    await mkdir(cwd);
    await prepare(cwd);
    const { logger, lines } = capturingLogger();
    runtime = await createAgentRuntime({
      configDir: path.join(dir, "config"),
      env: { HOME: dir },
      homeDir: dir,
      provider: "scripted",
      scriptFile: SKILLS_SCRIPT,
      logger,
    });
    const session = await runtime.openSession({ contextId: "ctx-skills", cwd });
    const events = await turn(session, "What is a Python list?", { overrides: { runMode: "pipeline" } });
    expect(ofType(events, "error")).to.deep.equal([]);
    const list = envelopes(events);
    const completed = list.find((e) => e.eventType === "step_completed");
    expect(completed?.step?.id).to.equal("intent_parsing");
    const done = list.find((e) => e.eventType === "pipeline_completed");
    expect(done?.data).to.include({ earlyExit: true });
    const conclusion = (completed?.data as { conclusion?: { summary?: string } }).conclusion;
    return { summary: conclusion?.summary, lines };
  }

  it("puts the bundled iac-aliyun-intent instructions into the intent step's system prompt", async () => {
    const { summary } = await intentStep();
    expect(summary).to.equal("bundled intent skill");
  });

  it("keeps the bundled skill when the workspace has one of that name", async () => {
    const { summary } = await intentStep(async (cwd) => {
      const file = path.join(cwd, ".iac-code", "skills", "our-intent", "SKILL.md");
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(
        file,
        "---\nname: iac-aliyun-intent\ndescription: Our intake rules.\n---\nWORKSPACE-INTENT-PLAYBOOK: only VPCs.\n",
      );
    });
    expect(summary).to.equal("bundled intent skill");
  });

  it("keeps the bundled skill and warns when the workspace's of that name does not parse", async () => {
    let file = "";
    const { summary, lines } = await intentStep(async (cwd) => {
      file = path.join(cwd, "skills", "iac-aliyun-intent", "SKILL.md");
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, "---\nname: iac-aliyun-intent\n---\nWORKSPACE-INTENT-PLAYBOOK\n");
    });
    expect(summary).to.equal("bundled intent skill");
    const warning = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.level === 40 && l.skillFile === file);
    expect(warning).to.include({ field: "description" });
  });
});
