// The workspace file tools run directly: confinement (.., absolute paths,
// symlinks), read ranges and caps, atomic writes with artifacts, exact edits,
// listing, glob and grep.
import { expect } from "chai";
import { chmod, mkdir, readFile, readdir, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../../src/runtime/errors.js";
import {
  editFileTool,
  globTool,
  grepTool,
  listFilesTool,
  readFileTool,
  writeFileTool,
} from "../../src/runtime/tools/files.js";
import { globToRegExp } from "../../src/runtime/tools/glob.js";
import type { ToolContext } from "../../src/runtime/tools/types.js";
import { Workspace } from "../../src/runtime/tools/workspace.js";
import { removeTempDirs, tempDir } from "./helpers.js";

async function failure(run: Promise<unknown>): Promise<string> {
  try {
    await run;
  } catch (error) {
    expect(error).to.be.instanceOf(ToolError);
    return (error as Error).message;
  }
  throw new Error("expected a ToolError");
}

describe("runtime: workspace tools", () => {
  let cwd: string;
  let outside: string;
  let ctx: ToolContext;
  beforeEach(async () => {
    cwd = await tempDir("iac-ws-");
    outside = await tempDir("iac-outside-");
    ctx = {
      workspace: await Workspace.open(cwd),
      signal: new AbortController().signal,
      toolUseId: "t1",
      language: "en",
      progress: () => undefined,
      askUser: () => Promise.reject(new Error("unused")),
    };
  });
  afterEach(removeTempDirs);

  it("rejects .., foreign absolute paths and symlink escapes; accepts absolute paths inside", async () => {
    await writeFile(path.join(outside, "secret.txt"), "s");
    await symlink(outside, path.join(cwd, "link"));
    expect(await failure(readFileTool.run({ path: "../x" }, ctx))).to.equal(
      "The path is outside the workspace.",
    );
    expect(await failure(readFileTool.run({ path: path.join(outside, "secret.txt") }, ctx))).to.equal(
      "The path is outside the workspace.",
    );
    expect(await failure(readFileTool.run({ path: "link/secret.txt" }, ctx))).to.equal(
      "The path leaves the workspace through a symbolic link.",
    );
    expect(await failure(writeFileTool.run({ path: "link/new.txt", content: "x" }, ctx))).to.equal(
      "The path leaves the workspace through a symbolic link.",
    );
    expect(await readdir(outside)).to.deep.equal(["secret.txt"]);
    expect(await failure(writeFileTool.run({ path: "a\0b", content: "x" }, ctx))).to.equal(
      "The path contains a NUL character.",
    );
    expect(await failure(writeFileTool.run({ path: ".", content: "x" }, ctx))).to.equal(
      "The path names the workspace itself, not a file.",
    );
    await writeFile(path.join(cwd, "in.txt"), "inside");
    expect((await readFileTool.run({ path: path.join(cwd, "in.txt") }, ctx)).content).to.equal("inside");
    expect(await failure(readFileTool.run({ path: "missing.txt" }, ctx))).to.equal(
      "No such file or directory: missing.txt",
    );
  });

  it("reads line ranges and refuses binary files and directories", async () => {
    await writeFile(path.join(cwd, "lines.txt"), "one\ntwo\nthree\nfour\n");
    const range = await readFileTool.run({ path: "lines.txt", offset: 2, limit: 2 }, ctx);
    expect(range.content).to.equal("two\nthree");
    expect(range.data).to.deep.equal({
      path: "lines.txt",
      startLine: 2,
      endLine: 3,
      totalLines: 4,
      truncated: false,
    });
    expect(await failure(readFileTool.run({ path: "lines.txt", offset: 9 }, ctx))).to.equal(
      "lines.txt has 4 lines; offset 9 is past the end.",
    );
    await writeFile(path.join(cwd, "bin.dat"), Buffer.from([1, 0, 2]));
    expect(await failure(readFileTool.run({ path: "bin.dat" }, ctx))).to.equal(
      "bin.dat is a binary file (3 bytes).",
    );
    await mkdir(path.join(cwd, "dir"));
    expect(await failure(readFileTool.run({ path: "dir" }, ctx))).to.equal(
      "dir is a directory; use list_files.",
    );
  });

  it("writes atomically, creating directories, keeping the mode, and returns template artifacts", async () => {
    const created = await writeFileTool.run({ path: "templates/vpc.yml", content: "a: 1\n" }, ctx);
    expect(created.content).to.equal("Created templates/vpc.yml (5 bytes).");
    expect(created.artifact).to.deep.equal({
      filename: "vpc.yml",
      mediaType: "application/yaml",
      content: "a: 1\n",
    });
    await chmod(path.join(cwd, "templates", "vpc.yml"), 0o600);
    const again = await writeFileTool.run({ path: "templates/vpc.yml", content: "a: 2\n" }, ctx);
    expect((await stat(path.join(cwd, "templates", "vpc.yml"))).mode & 0o777).to.equal(0o600);
    expect(again.data).to.deep.equal({ path: "templates/vpc.yml", bytes: 5, created: false });
    expect(await readFile(path.join(cwd, "templates", "vpc.yml"), "utf8")).to.equal("a: 2\n");
    expect(await readdir(path.join(cwd, "templates"))).to.deep.equal(["vpc.yml"]);
    const notes = await writeFileTool.run({ path: "notes.md", content: "# hi" }, ctx);
    expect(notes.artifact).to.equal(undefined);
    expect((await writeFileTool.run({ path: "main.tf", content: "x" }, ctx)).artifact?.mediaType).to.equal(
      "text/plain",
    );
    expect((await writeFileTool.run({ path: "t.json", content: "{}" }, ctx)).artifact?.mediaType).to.equal(
      "application/json",
    );
    await mkdir(path.join(cwd, "adir"));
    expect(await failure(writeFileTool.run({ path: "adir", content: "x" }, ctx))).to.equal(
      "adir is a directory.",
    );
  });

  it("describes writes for permission requests and matches rules on the relative path", () => {
    const description = writeFileTool.describe({ path: "./a/b.yaml", content: "" }, "ja", ctx.workspace);
    expect(description).to.deep.equal({
      title: "a/b.yaml に書き込みます。",
      purpose: "ワークスペースにこのファイルを作成または上書きします。",
      effect: "file_change",
      target: "a/b.yaml",
    });
    expect(
      writeFileTool.ruleContent?.({ path: path.join(cwd, "x.yaml"), content: "" }, ctx.workspace),
    ).to.equal("x.yaml");
    expect(writeFileTool.ruleContent?.({ path: "../x", content: "" }, ctx.workspace)).to.equal(undefined);
  });

  it("edits with an exact, unique match", async () => {
    await writeFile(path.join(cwd, "t.yaml"), "a: 1\nb: 1\nc: 2\n");
    expect(
      await failure(editFileTool.run({ path: "t.yaml", old_string: ": 1", new_string: ": 3" }, ctx)),
    ).to.equal(
      "old_string matches 2 times in t.yaml; add surrounding context to make it unique, or set replace_all.",
    );
    expect(
      await failure(editFileTool.run({ path: "t.yaml", old_string: "zzz", new_string: "y" }, ctx)),
    ).to.equal("old_string was not found in t.yaml.");
    expect(
      await failure(editFileTool.run({ path: "t.yaml", old_string: "a", new_string: "a" }, ctx)),
    ).to.equal("old_string and new_string are identical.");
    const one = await editFileTool.run({ path: "t.yaml", old_string: "c: 2", new_string: "c: $&" }, ctx);
    expect(one.content).to.equal("Edited t.yaml: 1 replacement(s).");
    expect(await readFile(path.join(cwd, "t.yaml"), "utf8")).to.equal("a: 1\nb: 1\nc: $&\n");
    const all = await editFileTool.run(
      { path: "t.yaml", old_string: ": 1", new_string: ": 9", replace_all: true },
      ctx,
    );
    expect(all.data).to.deep.equal({ path: "t.yaml", replacements: 2 });
    expect(all.artifact?.content).to.equal("a: 9\nb: 9\nc: $&\n");
  });

  it("lists, globs and greps inside the workspace only", async () => {
    await mkdir(path.join(cwd, "sub", "deep"), { recursive: true });
    await mkdir(path.join(cwd, "node_modules", "pkg"), { recursive: true });
    await writeFile(path.join(cwd, "a.yaml"), "Type: ALIYUN::ECS::VPC\n");
    await writeFile(path.join(cwd, "sub", "b.yaml"), "Type: ALIYUN::ECS::VSwitch\nname: x\n");
    await writeFile(path.join(cwd, "sub", "deep", "c.json"), '{"Type": "ALIYUN::RDS::DBInstance"}');
    await writeFile(path.join(cwd, "node_modules", "pkg", "d.yaml"), "Type: ALIYUN::ECS::VPC\n");
    await writeFile(path.join(outside, "e.yaml"), "Type: ALIYUN::ECS::VPC\n");
    await symlink(outside, path.join(cwd, "out"));

    expect((await listFilesTool.run({}, ctx)).content).to.equal("a.yaml\nnode_modules/\nout\nsub/");
    expect((await listFilesTool.run({ path: "sub" }, ctx)).content).to.equal("b.yaml\ndeep/");
    const yaml = await globTool.run({ pattern: "**/*.yaml" }, ctx);
    expect([...(yaml.data as { matches: string[] }).matches].sort()).to.deep.equal(["a.yaml", "sub/b.yaml"]);
    expect((await globTool.run({ pattern: "*.{yaml,json}", path: "sub/deep" }, ctx)).content).to.equal(
      "sub/deep/c.json",
    );
    expect((await globTool.run({ pattern: "*.txt" }, ctx)).content).to.equal("No files matched.");

    const grep = await grepTool.run({ pattern: "ALIYUN::ECS::V\\w+" }, ctx);
    expect(grep.content.split("\n").sort()).to.deep.equal([
      "a.yaml:1: Type: ALIYUN::ECS::VPC",
      "sub/b.yaml:1: Type: ALIYUN::ECS::VSwitch",
    ]);
    expect((await grepTool.run({ pattern: "rds", ignore_case: true, glob: "*.json" }, ctx)).content).to.equal(
      'sub/deep/c.json:1: {"Type": "ALIYUN::RDS::DBInstance"}',
    );
    expect((await grepTool.run({ pattern: "name", path: "sub/b.yaml" }, ctx)).content).to.equal(
      "sub/b.yaml:2: name: x",
    );
    expect(await failure(grepTool.run({ pattern: "(" }, ctx))).to.match(/^Invalid regular expression: /);
  });

  it("compiles glob patterns", () => {
    expect(globToRegExp("**/*.yaml").test("a.yaml")).to.equal(true);
    expect(globToRegExp("**/*.yaml").test("x/y/a.yaml")).to.equal(true);
    expect(globToRegExp("*.yaml").test("x/a.yaml")).to.equal(false);
    expect(globToRegExp("src/**").test("src/a/b")).to.equal(true);
    expect(globToRegExp("file?.[ch]").test("file1.c")).to.equal(true);
    expect(globToRegExp("[!a]*").test("abc")).to.equal(false);
    expect(globToRegExp("a.{yml,yaml}").test("a.yaml")).to.equal(true);
    expect(globToRegExp("a+b(c)").test("a+b(c)")).to.equal(true);
  });
});
