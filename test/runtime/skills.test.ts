// Skills on disk: SKILL.md front matter (what is refused, with the file and
// the field), discovery in the config dir, the workspace from the cwd up to
// the git root and the bundled skills, which one wins a name, the caches,
// the bundled skills themselves (their example templates pass the local ROS
// validator), and the skill tool's list and results.
import { expect } from "chai";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { bundledPipeline, loadPipeline } from "../../src/runtime/pipeline/loader.js";
import { bundledSkills, discoverSkills, skillPlaces } from "../../src/runtime/skills/discovery.js";
import { parseSkillFile } from "../../src/runtime/skills/skill-file.js";
import { MAX_DESCRIBED, skillTool } from "../../src/runtime/tools/skill.js";
import { validateRosTemplate } from "../../src/runtime/tools/ros-validator.js";
import { Workspace } from "../../src/runtime/tools/workspace.js";
import { capturingLogger, removeTempDirs, silentLogger, tempDir } from "./helpers.js";

function skillText(name: string, description: string, body = `Instructions of ${name}.`, extra = ""): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n${body}\n`;
}

async function putSkill(place: string, dir: string, text: string): Promise<string> {
  const file = path.join(place, dir, "SKILL.md");
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  return file;
}

const BUNDLED = [
  "iac-aliyun",
  "iac-aliyun-architecture",
  "iac-aliyun-cost",
  "iac-aliyun-deploying",
  "iac-aliyun-intent",
  "iac-aliyun-template-generating",
  "terraform_ros_conversion",
];

describe("skills: SKILL.md front matter", () => {
  it("reads name, description, when_to_use, allowed_tools and the body", () => {
    const parsed = parseSkillFile(
      "---\nname: vpc-helper\ndescription: Builds VPCs.\nwhen_to_use: A VPC is asked for.\n" +
        "allowed_tools: [write_file, ros_validate_template]\nmodel: ignored\n---\n\n# VPCs\nUse /16.\n",
    );
    expect(parsed).to.deep.equal({
      ok: true,
      skill: {
        name: "vpc-helper",
        description: "Builds VPCs.",
        whenToUse: "A VPC is asked for.",
        allowedTools: ["write_file", "ros_validate_template"],
        body: "# VPCs\nUse /16.",
      },
    });
  });

  const refusals: Array<[string, string, string]> = [
    ["no front matter", "# Just text\n", "(front matter)"],
    ["front matter never closed", "---\nname: a\ndescription: b\n", "(front matter)"],
    ["YAML that does not parse", "---\nname: [a\n---\nbody\n", "(front matter)"],
    ["a list instead of fields", "---\n- a\n- b\n---\nbody\n", "(front matter)"],
    ["no name", "---\ndescription: b\n---\nbody\n", "name"],
    ["a name with capitals and spaces", "---\nname: My Skill\ndescription: b\n---\nbody\n", "name"],
    ["no description", "---\nname: a\n---\nbody\n", "description"],
    ["an empty description", "---\nname: a\ndescription: '  '\n---\nbody\n", "description"],
    ["a description that is a list", "---\nname: a\ndescription: [x]\n---\nbody\n", "description"],
    ["when_to_use a number", "---\nname: a\ndescription: b\nwhen_to_use: 3\n---\nbody\n", "when_to_use"],
    [
      "allowed_tools a string",
      "---\nname: a\ndescription: b\nallowed_tools: bash\n---\nbody\n",
      "allowed_tools",
    ],
    [
      "allowed_tools with a number",
      "---\nname: a\ndescription: b\nallowed_tools: [1]\n---\nbody\n",
      "allowed_tools",
    ],
    ["no instructions", "---\nname: a\ndescription: b\n---\n\n", "(body)"],
    ["a file over 64 KiB", skillText("a", "b", "x".repeat(70_000)), "(file)"],
  ];
  for (const [what, text, field] of refusals) {
    it(`refuses ${what}, naming ${field}`, () => {
      const parsed = parseSkillFile(text);
      expect(parsed.ok).to.equal(false);
      if (!parsed.ok) expect(parsed.field).to.equal(field);
    });
  }
});

describe("skills: discovery", () => {
  afterEach(removeTempDirs);

  /** A config dir, and a git repository with a sub-directory as the cwd. */
  async function layout() {
    const base = await tempDir("iac-skills-");
    const configDir = path.join(base, "config");
    const repo = path.join(base, "outer", "repo");
    const cwd = path.join(repo, "services", "web");
    await mkdir(path.join(repo, ".git"), { recursive: true });
    await mkdir(cwd, { recursive: true });
    return { base, configDir, repo, cwd };
  }

  it("finds skills in the config dir, in skills/ and .iac-code/skills/ from the cwd up to the git root, and bundled", async () => {
    const { base, configDir, repo, cwd } = await layout();
    await putSkill(path.join(configDir, "skills"), "mine", skillText("mine", "From the config dir."));
    await putSkill(path.join(repo, "skills"), "repo-wide", skillText("repo-wide", "At the git root."));
    await putSkill(path.join(repo, ".iac-code", "skills"), "hidden", skillText("hidden", "In .iac-code."));
    await putSkill(path.join(repo, "services", "skills"), "middle", skillText("middle", "Between."));
    await putSkill(path.join(cwd, "skills"), "local", skillText("local", "In the cwd."));
    // Above the git root: not the workspace's.
    await putSkill(path.join(base, "outer", "skills"), "outside", skillText("outside", "Above the repo."));

    const skills = discoverSkills({ configDir, cwd, logger: silentLogger() });
    const where = (name: string) => skills.get(name)?.source;
    expect(where("mine")).to.equal("config");
    expect(where("repo-wide")).to.equal("workspace");
    expect(where("hidden")).to.equal("workspace");
    expect(where("middle")).to.equal("workspace");
    expect(where("local")).to.equal("workspace");
    expect(skills.has("outside")).to.equal(false);
    for (const name of BUNDLED) expect(where(name), name).to.equal("bundled");
    expect(skills.get("local")).to.include({
      description: "In the cwd.",
      body: "Instructions of local.",
      file: path.join(cwd, "skills", "local", "SKILL.md"),
    });
  });

  it("without a git root, looks in the cwd only", async () => {
    const base = await tempDir("iac-skills-nogit-");
    const cwd = path.join(base, "project");
    await putSkill(path.join(base, "skills"), "parent", skillText("parent", "In the parent."));
    await putSkill(path.join(cwd, ".iac-code", "skills"), "here", skillText("here", "In the cwd."));
    const places = skillPlaces(path.join(base, "config"), cwd).map((p) => p.dir);
    expect(places).to.deep.equal([
      places[0],
      path.join(cwd, ".iac-code", "skills"),
      path.join(cwd, "skills"),
      path.join(base, "config", "skills"),
    ]);
    const skills = discoverSkills({ configDir: path.join(base, "config"), cwd, logger: silentLogger() });
    expect(skills.has("here")).to.equal(true);
    expect(skills.has("parent")).to.equal(false);
  });

  it("gives a name to the reference's last place: bundled, then nearer the cwd, .iac-code/skills/ over skills/, then the config dir", async () => {
    const { configDir, repo, cwd } = await layout();
    // "a": config dir against the cwd.
    await putSkill(path.join(configDir, "skills"), "a", skillText("a", "config a"));
    await putSkill(path.join(cwd, "skills"), "a", skillText("a", "cwd a"));
    // "b": the cwd against the git root.
    await putSkill(path.join(repo, "skills"), "b", skillText("b", "root b"));
    await putSkill(path.join(cwd, ".iac-code", "skills"), "b", skillText("b", "cwd b"));
    // "c": skills/ against .iac-code/skills/ in one directory.
    await putSkill(path.join(repo, ".iac-code", "skills"), "c", skillText("c", "root hidden c"));
    await putSkill(path.join(repo, "skills"), "c", skillText("c", "root plain c"));
    // A bundled name: the workspace cannot replace it (the directory name does not matter, the name does).
    await putSkill(path.join(repo, "skills"), "our-playbook", skillText("iac-aliyun", "Our own playbook."));
    // Two directories of one place with the same name: the first in name order.
    await putSkill(path.join(cwd, "skills"), "d1", skillText("d", "first d"));
    await putSkill(path.join(cwd, "skills"), "d2", skillText("d", "second d"));

    const skills = discoverSkills({ configDir, cwd, logger: silentLogger() });
    expect(skills.get("a")?.description).to.equal("cwd a");
    expect(skills.get("b")?.description).to.equal("cwd b");
    expect(skills.get("c")?.description).to.equal("root hidden c");
    expect(skills.get("iac-aliyun")?.source).to.equal("bundled");
    expect(skills.get("d")?.description).to.equal("first d");
  });

  it("warns with the file and the field when a SKILL.md is refused, skips it, and keeps the others", async () => {
    const { configDir, cwd } = await layout();
    const bad = await putSkill(
      path.join(cwd, "skills"),
      "broken",
      "---\nname: broken\n---\nNo description.\n",
    );
    const badYaml = await putSkill(path.join(configDir, "skills"), "yaml", "---\nname: [oops\n---\nx\n");
    await putSkill(path.join(cwd, "skills"), "good", skillText("good", "Fine."));
    // A config-dir skill refused: a workspace skill of the same name is used instead.
    await putSkill(path.join(configDir, "skills"), "shadow", "---\nname: good\ndescription: 5\n---\nx\n");
    const { logger, lines } = capturingLogger();
    const skills = discoverSkills({ configDir, cwd, logger });
    expect(skills.has("broken")).to.equal(false);
    expect(skills.get("good")?.description).to.equal("Fine.");
    const warnings = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 40);
    const byFile = new Map(warnings.map((w) => [w.skillFile, w]));
    expect(byFile.get(bad)).to.include({ field: "description" });
    expect(byFile.get(bad)?.msg).to.include(bad).and.include("description is missing");
    expect(byFile.get(badYaml)).to.include({ field: "(front matter)" });
    expect(byFile.get(badYaml)?.msg).to.include("is not valid YAML");
    expect(byFile.get(path.join(configDir, "skills", "shadow", "SKILL.md"))).to.include({
      field: "description",
    });
    expect(warnings).to.have.length(3);

    // Another cwd over the same places: the files are unchanged, so they are not parsed (or warned about) again.
    const sub = path.join(cwd, "sub");
    await mkdir(sub);
    await putSkill(path.join(sub, "skills"), "fresh", skillText("fresh", "New here."));
    const before = lines.length;
    const again = discoverSkills({ configDir, cwd: sub, logger });
    expect(again.get("fresh")?.description).to.equal("New here.");
    expect(again.get("good")?.description).to.equal("Fine.");
    expect(
      lines
        .slice(before)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.level === 40),
    ).to.deep.equal([]);
  });
});

describe("skills: bundled", () => {
  afterEach(removeTempDirs);

  it("ships the iac-aliyun playbook, terraform_ros_conversion and the selling step skills", () => {
    const skills = bundledSkills();
    expect([...skills.keys()].sort()).to.deep.equal(BUNDLED);
    for (const skill of skills.values()) {
      expect(skill.source).to.equal("bundled");
      expect(skill.description.length, skill.name).to.be.greaterThan(20);
      expect(skill.whenToUse, skill.name).to.be.a("string");
      expect(skill.allowedTools.length, skill.name).to.be.greaterThan(0);
    }
    const playbook = skills.get("iac-aliyun")?.body ?? "";
    for (const topic of [
      "## 3. Parameters",
      "AllowedPattern",
      "## 4. Regions",
      "cn-hangzhou",
      "ros_estimate_template_cost",
    ])
      expect(playbook).to.include(topic);
    expect(skills.get("terraform_ros_conversion")?.body).to.include("Transform: Aliyun::OpenTofu-v1.8");
  });

  it("has example templates that pass the local ROS validator (the Terraform one as a Workspace)", () => {
    const skills = bundledSkills();
    for (const name of ["iac-aliyun", "terraform_ros_conversion"]) {
      const blocks = [...(skills.get(name)?.body ?? "").matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]);
      expect(blocks, name).to.have.length(1);
      const report = validateRosTemplate(blocks[0]);
      expect(report.findings, name).to.deep.equal([]);
      expect(report.valid).to.equal(true);
    }
    const broken = validateRosTemplate(
      "ROSTemplateFormatVersion: '2015-09-01'\nTransform: Aliyun::OpenTofu-v1.8\nWorkspace:\n  README.md: hi\n",
    );
    expect(broken.valid).to.equal(false);
    expect(broken.findings.map((f) => f.message)).to.include("Workspace has no .tf file.");
  });

  it("backs every skill a selling step names, and the loader refuses a step naming an unknown one", async () => {
    const selling = bundledPipeline("selling");
    const named = [
      ...(selling?.steps ?? []),
      ...[...(selling?.subPipelines.values() ?? [])].flatMap((sub) => sub.steps),
    ].flatMap((step) => (step.def.skill ? [[step.id, step.def.skill]] : []));
    expect(Object.fromEntries(named)).to.deep.equal({
      intent_parsing: "iac-aliyun-intent",
      architecture_planning: "iac-aliyun-architecture",
      template_generating: "iac-aliyun-template-generating",
      cost_estimating: "iac-aliyun-cost",
      deploying: "iac-aliyun-deploying",
    });
    const dir = await tempDir("iac-skills-pipeline-");
    await writeFile(
      path.join(dir, "pipeline.yaml"),
      "name: tiny\nsteps:\n  - id: only\n    conclusion_field: done\n    skill: no-such-skill\n",
    );
    expect(() => loadPipeline(dir)).to.throw("/steps/0/skill: no bundled skill no-such-skill");
  });
});

describe("skills: the skill tool", () => {
  afterEach(removeTempDirs);

  it("lists the skills with description and when to use, and returns a skill's body with its tools", async () => {
    const cwd = await tempDir("iac-skills-tool-");
    await putSkill(
      path.join(cwd, "skills"),
      "team",
      skillText(
        "team",
        "Our conventions.",
        "Tag everything with team=infra.",
        "when_to_use: Any template.\n",
      ),
    );
    const skills = discoverSkills({ configDir: path.join(cwd, "no-config"), cwd, logger: silentLogger() });
    const teamSkill = skills.get("team");
    expect(teamSkill).to.not.equal(undefined);
    const tool = skillTool(skills);
    expect(tool.description).to.include("- team: Our conventions. When to use: Any template.");
    expect(tool.description).to.include(`- iac-aliyun: ${skills.get("iac-aliyun")?.description}`);
    expect(tool.isReadOnly({ name: "team" })).to.equal(true);
    expect(tool.supportsBlanketAllow).to.equal(true);

    const workspace = await Workspace.open(cwd);
    const ctx = {
      workspace,
      signal: new AbortController().signal,
      toolUseId: "t1",
      language: "en" as const,
      progress: () => undefined,
      askUser: () => Promise.reject(new Error("no questions")),
    };
    const team = await tool.run({ name: "team" }, ctx);
    expect(team.isError).to.equal(undefined);
    expect(team.content).to.equal(
      'Skill "team" (workspace). This skill names no tools.\n\nTag everything with team=infra.',
    );
    const playbook = await tool.run({ name: "iac-aliyun" }, ctx);
    expect(playbook.content).to.match(
      /^Skill "iac-aliyun" \(bundled\)\. Tools this skill allows: read_file, write_file, /,
    );
    expect(playbook.data).to.deep.include({ name: "iac-aliyun", source: "bundled" });
    const missing = await tool.run({ name: "nope" }, ctx);
    expect(missing.isError).to.equal(true);
    expect(missing.content).to.match(/^Unknown skill "nope"\. Available skills: .*\bteam\b/);

    expect(skillTool(new Map()).description).to.include("No skills are available.");

    // Many skills: the first MAX_DESCRIBED in full (long lines cut), the rest by name only.
    const many = new Map(
      Array.from({ length: MAX_DESCRIBED + 3 }, (_v, i) => {
        const name = `s${String(i).padStart(2, "0")}`;
        return [name, { ...teamSkill!, name, description: "d".repeat(i === 0 ? 2000 : 5) }] as const;
      }),
    );
    const listed = skillTool(many)
      .description.split("\n")
      .filter((l) => l.startsWith("- "));
    expect(listed).to.have.length(MAX_DESCRIBED + 1);
    expect(listed[0]).to.have.length(400);
    expect(listed.at(-1)).to.equal(`- also: s${MAX_DESCRIBED}, s${MAX_DESCRIBED + 1}, s${MAX_DESCRIBED + 2}`);
  });
});
