// Permission rules and decision order, permission-request shaping, and the
// redaction that keeps secrets out of logs and displayed summaries.
import { expect } from "chai";
import { ConfigError, redactSecrets } from "../../src/runtime/errors.js";
import {
  checkAnswer,
  permissionRequest,
  questionRequest,
  safeSummary,
} from "../../src/runtime/permissions/input-requests.js";
import {
  decidePermission,
  sessionRuleFor,
  type PermissionSettings,
} from "../../src/runtime/permissions/policy.js";
import { parseRule, ruleApplies } from "../../src/runtime/permissions/rules.js";
import { readFileTool, writeFileTool } from "../../src/runtime/tools/files.js";
import { rosStackTool } from "../../src/runtime/tools/ros-stack.js";
import { Workspace } from "../../src/runtime/tools/workspace.js";
import { removeTempDirs, tempDir } from "./helpers.js";

function settings(
  partial: Partial<Omit<PermissionSettings, "allow" | "deny" | "ask">> & {
    allow?: string[];
    deny?: string[];
    ask?: string[];
  } = {},
): PermissionSettings {
  return {
    mode: partial.mode ?? "default",
    autoApprove: partial.autoApprove ?? false,
    allow: (partial.allow ?? []).map((r) => parseRule(r, "allow")),
    deny: (partial.deny ?? []).map((r) => parseRule(r, "deny")),
    ask: (partial.ask ?? []).map((r) => parseRule(r, "ask")),
  };
}

describe("runtime: permission policy and redaction", () => {
  let workspace: Workspace;
  before(async () => {
    workspace = await Workspace.open(await tempDir("iac-ws-"));
  });
  after(removeTempDirs);

  it("parses rules and rejects malformed ones", () => {
    expect(parseRule(" write_file ")).to.deep.equal({ raw: "write_file", tool: "write_file" });
    expect(parseRule("ros_stack(create:my stack)")).to.deep.equal({
      raw: "ros_stack(create:my stack)",
      tool: "ros_stack",
      pattern: "create:my stack",
    });
    for (const bad of ["", "write_file()", "bad name", "(x)"])
      expect(() => parseRule(bad), bad).to.throw(ConfigError);
    expect(ruleApplies(parseRule("write_file(**/*.yaml)"), "write_file", "a/b.yaml")).to.equal(true);
    expect(ruleApplies(parseRule("write_file(*.yaml)"), "write_file", "a/b.yaml")).to.equal(false);
    expect(ruleApplies(parseRule("write_file"), "edit_file", "a")).to.equal(false);
    expect(ruleApplies(parseRule("ros_stack(create:*)"), "ros_stack", "create:x", true)).to.equal(false);
    expect(ruleApplies(parseRule("ros_stack"), "ros_stack", "create:x", true)).to.equal(false);
  });

  it("decides in order: deny rule, read-only, ask rule, modes, allow rules, ask", () => {
    const write = { path: "a.yaml", content: "" };
    const read = { path: "a.yaml" };
    expect(
      decidePermission(readFileTool, read, workspace, settings({ deny: ["read_file(*.yaml)"] }), []),
    ).to.include({ behavior: "deny" });
    expect(decidePermission(readFileTool, read, workspace, settings(), [])).to.deep.equal({
      behavior: "allow",
      reason: "read_only",
      autoApproved: false,
      audited: false,
    });
    expect(
      decidePermission(readFileTool, read, workspace, settings({ ask: ["read_file"] }), []),
    ).to.deep.equal({ behavior: "ask" });
    expect(decidePermission(writeFileTool, write, workspace, settings(), [])).to.deep.equal({
      behavior: "ask",
    });
    expect(decidePermission(writeFileTool, write, workspace, settings({ mode: "bypass" }), [])).to.include({
      behavior: "allow",
      reason: "mode:bypass",
    });
    expect(
      decidePermission(
        writeFileTool,
        write,
        workspace,
        settings({ mode: "bypass", ask: ["write_file"] }),
        [],
      ),
    ).to.deep.equal({ behavior: "ask" });
    expect(
      decidePermission(
        writeFileTool,
        write,
        workspace,
        settings({ mode: "dont_ask", allow: ["write_file"] }),
        [],
      ),
    ).to.include({ behavior: "allow" });
    expect(decidePermission(writeFileTool, write, workspace, settings({ mode: "dont_ask" }), [])).to.include({
      behavior: "deny",
      reason: "mode:dont_ask",
    });
    const create = { action: "create" as const, stack_name: "s", path: "t.yaml" };
    expect(decidePermission(rosStackTool, create, workspace, settings({ mode: "bypass" }), [])).to.deep.equal(
      { behavior: "ask" },
    );
    expect(
      decidePermission(rosStackTool, { action: "get" as const, stack_id: "x" }, workspace, settings(), []),
    ).to.include({ reason: "read_only" });
    expect(sessionRuleFor(rosStackTool, create, workspace)).to.deep.equal({
      raw: "ros_stack(create:s)",
      tool: "ros_stack",
      pattern: "create:s",
    });
    expect(sessionRuleFor(writeFileTool, write, workspace)).to.deep.equal({
      raw: "write_file",
      tool: "write_file",
    });
  });

  it("shapes permission requests: bounded, redacted summaries and localised options", () => {
    const input = {
      path: "token=abc123secret.yaml",
      content: "password: hunter2",
      nested: { stack_name: "s", deep: { deeper: { x: 1 } } },
      list: [1, 2],
    };
    expect(safeSummary("write_file", input)).to.equal(
      'write_file: {"path":"token=[REDACTED]","content":{"type":"string","length":17},"nested":{"stack_name":"s","deep":{"deeper":{"type":"object"}}},"list":{"type":"array","length":2}}',
    );
    expect(safeSummary("x", { content: "y".repeat(5000), path: "p".repeat(5000) }).length).to.be.at.most(
      1200,
    );
    const request = permissionRequest({
      toolUseId: "t",
      toolName: "write_file",
      input,
      description: { title: "Write a.", purpose: "p", effect: "file_change", target: "a" },
      isReadOnly: false,
      lang: "pt",
    });
    expect(request.prompt).to.equal("Write a. Permitir uma vez?");
    expect(request.options).to.deep.equal([
      { id: "allow_once", label: "Permitir uma vez" },
      { id: "allow_always", label: "Permitir durante esta sessão" },
      { id: "deny", label: "Negar" },
    ]);
    const question = questionRequest({
      toolUseId: "q",
      question: "Zone?",
      options: [{ id: "a", label: "A" }],
      allowFreeText: false,
      lang: "es",
    });
    expect(question.freeTextPrompt).to.equal(undefined);
    expect(question.responseSchema).to.deep.include({ required: ["selectedId"] });
    expect(() =>
      checkAnswer(question, { inputId: "ask-q", kind: "ask_user_question", freeText: "x" }),
    ).to.throw("does not accept free text");
    expect(() =>
      checkAnswer(question, { inputId: "ask-q", kind: "ask_user_question", selectedId: "b" }),
    ).to.throw("Unknown option b");
    expect(() => checkAnswer(question, { inputId: "ask-q", kind: "ask_user_question" })).to.throw(
      "needs a selected option or free text",
    );
    expect(() =>
      checkAnswer(question, { inputId: "ask-q", kind: "ask_user_question", cancelled: true }),
    ).to.not.throw();
  });

  it("redacts credentials from texts", () => {
    const text = [
      "Authorization: Bearer abcdefghijklmnop",
      "x-acs-security-token: STS.NUabcdefgh123456",
      "key sk-abcdefghijklmnop and LTAI5tAbCdEfGhIjKlMn",
      "api_key=supersecret&next=1",
      'password: "hunter22"',
      "the literal my-very-own-secret value",
    ].join("\n");
    const out = redactSecrets(text, ["my-very-own-secret"]);
    for (const secret of [
      "abcdefghijklmnop",
      "NUabcdefgh123456",
      "5tAbCdEfGhIjKlMn",
      "supersecret",
      "hunter22",
      "my-very-own-secret",
    ]) {
      expect(out, secret).to.not.include(secret);
    }
    expect(out).to.include("next=1");
  });
});
