// A workspace that changes under the tools: a dangling symbolic link, a file
// removed while a permission waits, a permission error. Each is a tool error
// the model reads (relative path, no server path) and the turn goes on.
import { expect } from "chai";
import { rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { fsToolError } from "../../src/runtime/tools/fs-errors.js";
import { Workspace } from "../../src/runtime/tools/workspace.js";
import {
  allowOnce,
  ofType,
  openToolSession,
  removeTempDirs,
  tempDir,
  turn,
  type ToolSession,
} from "./helpers.js";

describe("runtime: file system failures are tool errors", () => {
  let env: ToolSession;
  afterEach(async () => {
    await env?.runtime.close();
    env = undefined as unknown as ToolSession;
    await removeTempDirs();
  });

  it("write_file onto a dangling symbolic link: a tool error, and the turn continues", async () => {
    env = await openToolSession(await tempDir(), await tempDir("iac-ws-"));
    await symlink(path.join(env.cwd, "gone", "target.yaml"), path.join(env.cwd, "notes.yaml"));
    const events = await turn(env.session, "[WRITE]", { answer: allowOnce });
    const result = ofType(events, "tool_result").find((e) => e.name === "write_file");
    expect(result?.isError).to.equal(true);
    expect(result?.result).to.equal(
      "notes.yaml does not exist (it may have been removed, or be a symbolic link to nothing).",
    );
    expect(JSON.stringify(events)).to.not.include(env.cwd);
    // The model got the error and answered: the turn ended normally.
    expect(ofType(events, "message_end").at(-1)?.text).to.equal("I could not write notes.yaml.");
    expect(ofType(events, "error")).to.have.length(0);
  });

  it("read_file of a dangling link and of a removed file: tool errors, the other calls still run", async () => {
    env = await openToolSession(await tempDir(), await tempDir("iac-ws-"));
    await symlink(path.join(env.cwd, "nowhere.txt"), path.join(env.cwd, "a.txt"));
    await writeFile(path.join(env.cwd, "b.txt"), "beta\n");
    const events = await turn(env.session, "[PARALLEL]");
    const [a, b, list] = ofType(events, "tool_result");
    expect(a.isError).to.equal(true);
    expect(String(a.result)).to.match(/a\.txt/);
    expect(b.isError).to.equal(false);
    expect(list.isError).to.equal(false);
    expect(ofType(events, "message_end").at(-1)?.text).to.equal("Read both files.");
    await rm(path.join(env.cwd, "b.txt"));
  });

  it("maps permission and other errno failures to readable, workspace-relative texts", async () => {
    const workspace = await Workspace.open(await tempDir("iac-ws-"));
    const error = (code: string, file?: string) =>
      Object.assign(new Error(`${code}: raw`), { code, ...(file ? { path: file } : {}) });
    expect(
      fsToolError(error("EACCES", path.join(workspace.root, "dir", "x.yaml")), workspace)?.message,
    ).to.equal("dir/x.yaml cannot be accessed: permission denied.");
    expect(fsToolError(error("ELOOP", "/etc/passwd"), workspace)?.message).to.equal(
      "A path is a loop of symbolic links.",
    );
    expect(fsToolError(error("ENOENT"), workspace)?.message).to.match(/^A path does not exist/);
    expect(fsToolError(new Error("boom"), workspace)).to.equal(undefined);
  });
});
