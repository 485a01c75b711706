// Turns through AgentSession with the scripted provider: permissions and
// their answers, the audit log, parallel read-only tools, questions, schema
// errors, workspace escapes, limits, large results and sanitised errors.
import { expect } from "chai";
import { readFile, readdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { createAgentRuntime, type RuntimeOptions } from "../../src/runtime/index.js";
import type { RuntimeEvent } from "../../src/runtime/seam.js";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import {
  allowAlways,
  allowOnce,
  capturingLogger,
  deny,
  ofType,
  removeTempDirs,
  silentLogger,
  tempDir,
  storedDoc,
  storedJsonRows,
  failWritesOf,
  TOOLS_SCRIPT,
  turn,
  openToolSession,
  type ToolSession,
} from "./helpers.js";

type Env = ToolSession;

/** V8's full collection, without starting node with --expose-gc. */
function gcFunction(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

async function setup(options: Partial<RuntimeOptions> = {}): Promise<Env> {
  return openToolSession(await tempDir(), await tempDir("iac-ws-"), { runtime: options });
}

function auditLines(env: Env): Array<Record<string, unknown>> {
  return storedJsonRows(env.configDir, env.session.sessionId, "permission-audit") as Array<
    Record<string, unknown>
  >;
}

function toolResult(events: RuntimeEvent[], name: string) {
  return ofType(events, "tool_result").find((e) => e.name === name);
}

describe("runtime: turns through AgentSession", () => {
  let env: Env;
  afterEach(async () => {
    await env?.runtime.close();
    await removeTempDirs();
  });

  it("streams text, thinking and usage, and ends the turn without tools", async () => {
    env = await setup();
    const events = await turn(env.session, "[THINK] hello");
    const types = events.map((e) => e.type);
    expect(types[0]).to.equal("message_start");
    expect(types.at(-1)).to.equal("message_end");
    expect(ofType(events, "thinking_delta").map((e) => e.text)).to.deep.equal(["Let me ", "think."]);
    expect(ofType(events, "text_delta").map((e) => e.text)).to.deep.equal(["Hello ", "there."]);
    const end = ofType(events, "message_end")[0];
    expect(end).to.include({ stopReason: "end_turn", text: "Hello there." });
    expect(end.usage).to.deep.include({
      inputTokens: 42,
      outputTokens: 7,
      totalTokens: 49,
      cachedInputTokens: 2,
    });
    expect(end.usage?.provider).to.equal("scripted");
    const usage = storedJsonRows(env.configDir, env.session.sessionId, "usage");
    expect(usage).to.have.length(1);
    expect(usage[0]).to.include({
      inputTokens: 42,
      outputTokens: 7,
      provider: "scripted",
    });
  });

  it("asks before write_file; allow_once writes the file and the model hears it", async () => {
    env = await setup();
    const events = await turn(env.session, "[WRITE] please", {
      answer: allowOnce,
      overrides: { language: "en" },
    });
    const [required] = ofType(events, "input_required");
    expect(required.request).to.include({
      kind: "permission",
      toolName: "write_file",
      title: "Write notes.yaml.",
      prompt: "Write notes.yaml. Allow once?",
      effect: "file_change",
      target: "notes.yaml",
      isReadOnly: false,
      language: "en",
    });
    expect(required.request.inputId).to.match(/^permission-[0-9a-f]{32}$/);
    expect(required.request.options.map((o) => o.id)).to.deep.equal(["allow_once", "allow_always", "deny"]);
    expect(required.request.safeSummary).to.equal(
      'write_file: {"path":"notes.yaml","content":{"type":"string","length":5}}',
    );
    expect(required.request.responseSchema).to.deep.include({ required: ["decision"] });
    expect(ofType(events, "input_received")[0]).to.include({
      decision: "allow_once",
      inputId: required.request.inputId,
    });
    expect(await readFile(path.join(env.cwd, "notes.yaml"), "utf8")).to.equal("a: 1\n");
    const result = toolResult(events, "write_file");
    expect(result?.isError).to.equal(false);
    expect(result?.artifact).to.deep.equal({
      filename: "notes.yaml",
      mediaType: "application/yaml",
      content: "a: 1\n",
    });
    expect(ofType(events, "message_end").at(-1)?.text).to.equal("notes.yaml is written.");
    expect(env.session.pendingInputs()).to.deep.equal([]);
  });

  it("deny leaves the file absent and tells the model", async () => {
    env = await setup();
    const events = await turn(env.session, "[WRITE]", { answer: deny });
    const result = toolResult(events, "write_file");
    expect(result).to.include({ isError: true, result: "Permission denied." });
    expect(await readdir(env.cwd)).to.deep.equal([]);
    expect(ofType(events, "message_end").at(-1)?.text).to.equal("I could not write notes.yaml.");
    const audit = auditLines(env);
    expect(audit).to.have.length(1);
    expect(audit[0]).to.include({ toolName: "write_file", decision: "deny", reason: "user:deny" });
  });

  it("allow_always is not asked again in the session, and survives a restart", async () => {
    env = await setup();
    const first = await turn(env.session, "[WRITE] one", { answer: allowAlways });
    expect(ofType(first, "input_required")).to.have.length(1);
    const second = await turn(env.session, "[WRITE] two", { answer: deny });
    expect(ofType(second, "input_required")).to.have.length(0);
    expect(ofType(second, "permission_decided")[0]).to.include({
      allowed: true,
      reason: "session_rule:write_file",
    });
    const audit = auditLines(env);
    expect(audit.map((a) => a.reason)).to.deep.equal(["user:allow_always", "session_rule:write_file"]);
    expect(audit.every((a) => typeof a.inputFingerprint === "string" && !("input" in a))).to.equal(true);

    const sessionId = env.session.sessionId;
    await env.runtime.close();
    env.runtime = await createAgentRuntime({
      configDir: env.configDir,
      env: {},
      scriptFile: TOOLS_SCRIPT,
      logger: silentLogger(),
    });
    env.session = await env.runtime.openSession({ contextId: "ctx-1", cwd: env.cwd, sessionId });
    const third = await turn(env.session, "[WRITE] three");
    expect(ofType(third, "input_required")).to.have.length(0);
  });

  it("localises the permission request per turn", async () => {
    env = await setup();
    const events = await turn(env.session, "[WRITE]", { answer: deny, overrides: { language: "zh" } });
    const request = ofType(events, "input_required")[0].request;
    expect(request.language).to.equal("zh");
    expect(request.prompt).to.equal("写入 notes.yaml。是否允许一次？");
    expect(request.options.map((o) => o.label)).to.deep.equal(["允许一次", "本会话内始终允许", "拒绝"]);
    const fr = await turn(env.session, "[WRITE]", { answer: deny, overrides: { language: "fr-CA" } });
    expect(ofType(fr, "input_required")[0].request.prompt).to.equal(
      "Écrire notes.yaml. Autoriser une fois ?",
    );
  });

  it("rejects an answer that does not fit, keeping the input pending", async () => {
    env = await setup();
    const events: RuntimeEvent[] = [];
    const iterator = env.session.runTurn(
      { text: "[WRITE]", images: [], overrides: {} },
      new AbortController().signal,
    );
    for await (const event of iterator) {
      events.push(event);
      if (event.type !== "input_required") continue;
      const inputId = event.request.inputId;
      expect(() => env.session.answerInput({ inputId, kind: "ask_user_question", selectedId: "x" })).to.throw(
        /permission answer/,
      );
      expect(() =>
        env.session.answerInput({ inputId, kind: "permission", decision: "always" as "allow_once" }),
      ).to.throw(/allow_once, allow_always or deny/);
      expect(
        env.session.answerInput({ inputId: "permission-unknown", kind: "permission", decision: "deny" }),
      ).to.equal(false);
      expect(env.session.pendingInputs().map((r) => r.inputId)).to.deep.equal([inputId]);
      expect(env.session.answerInput({ inputId, kind: "permission", decision: "deny" })).to.equal(true);
      expect(env.session.answerInput({ inputId, kind: "permission", decision: "deny" })).to.equal(false);
    }
    expect(toolResult(events, "write_file")?.isError).to.equal(true);
  });

  it("auto-approves writes when the server flag is on (audited)", async () => {
    env = await setup({ autoApprovePermissions: true });
    const events = await turn(env.session, "[WRITE]");
    expect(ofType(events, "input_required")).to.have.length(0);
    expect(ofType(events, "permission_decided")[0]).to.include({
      allowed: true,
      autoApproved: true,
      reason: "auto_approve",
    });
    expect(await readFile(path.join(env.cwd, "notes.yaml"), "utf8")).to.equal("a: 1\n");
    expect(auditLines(env)[0]).to.include({
      decision: "allow_once",
      reason: "auto_approve",
      autoApproved: true,
    });
  });

  it("fails closed: an allow whose audit record cannot be committed is a deny", async () => {
    env = await setup({ autoApprovePermissions: true });
    // The store's commits fail while they hold an audit row, as a full disk fails them.
    const undo = failWritesOf(env.configDir, "permission-audit");
    try {
      const events = await turn(env.session, "[WRITE]");
      expect(ofType(events, "permission_decided")[0]).to.include({ allowed: false, reason: "audit_failed" });
      expect(toolResult(events, "write_file")).to.include({ isError: true, result: "Permission denied." });
      expect(await readdir(env.cwd)).to.deep.equal([]);
    } finally {
      undo();
    }
    // Once the disk is back, the record that was not kept lands with the deny that replaced it.
    await env.runtime.close();
    const lines = auditLines(env);
    expect(lines.map((l) => [l.decision, l.reason])).to.deep.equal([
      ["allow_once", "auto_approve"],
      ["deny", "audit_failed"],
    ]);
  });

  it("fails closed for a user's allow_once too", async () => {
    env = await setup();
    const undo = failWritesOf(env.configDir, "permission-audit");
    try {
      const events = await turn(env.session, "[WRITE]", { answer: allowOnce });
      // The allow cannot be kept: the call does not run, the model hears it was denied.
      expect(toolResult(events, "write_file")).to.include({ isError: true, result: "Permission denied." });
      expect(await readdir(env.cwd)).to.deep.equal([]);
    } finally {
      undo();
    }
  });

  it("applies deny and allow rules, dont_ask and accept_edits modes", async () => {
    env = await setup({ permissionRules: { deny: ["write_file(*.yaml)"] } });
    let events = await turn(env.session, "[WRITE]");
    expect(ofType(events, "permission_decided")[0]).to.include({
      allowed: false,
      reason: "deny_rule:write_file(*.yaml)",
    });
    await env.runtime.close();

    env = await setup({ permissionRules: { allow: ["write_file(notes.*)"] } });
    events = await turn(env.session, "[WRITE]");
    expect(ofType(events, "permission_decided")[0]).to.include({
      allowed: true,
      reason: "allow_rule:write_file(notes.*)",
    });
    await env.runtime.close();

    env = await setup({ permissionMode: "dont_ask" });
    events = await turn(env.session, "[WRITE]");
    expect(ofType(events, "permission_decided")[0]).to.include({ allowed: false, reason: "mode:dont_ask" });
    await env.runtime.close();

    env = await setup({ permissionMode: "accept_edits" });
    events = await turn(env.session, "[WRITE]");
    expect(ofType(events, "permission_decided")[0]).to.include({
      allowed: true,
      reason: "mode:accept_edits",
    });
    await env.runtime.close();

    env = await setup({ permissionMode: "bypass", permissionRules: { ask: ["write_file"] } });
    events = await turn(env.session, "[WRITE]", { answer: deny });
    expect(ofType(events, "input_required")).to.have.length(1);
  });

  it("runs consecutive read-only calls in one parallel batch without asking", async () => {
    env = await setup();
    await writeFile(path.join(env.cwd, "a.txt"), "alpha\n");
    await writeFile(path.join(env.cwd, "b.txt"), "beta\n");
    const events = await turn(env.session, "[PARALLEL]");
    expect(ofType(events, "input_required")).to.have.length(0);
    const decided = ofType(events, "permission_decided");
    expect(decided.map((d) => d.reason)).to.deep.equal(["read_only", "read_only", "read_only"]);
    const results = ofType(events, "tool_result");
    expect(results).to.have.length(3);
    expect(results.every((r) => !r.isError)).to.equal(true);
    // All three results follow all three decisions: they ran as one batch.
    const lastDecision = events.lastIndexOf(decided[2]);
    expect(events.indexOf(results[0])).to.be.greaterThan(lastDecision);
    const conversation = (
      env.session as unknown as {
        conversation(): Array<{
          role: string;
          content: Array<{ type: string; toolUseId?: string; content?: string }>;
        }>;
      }
    ).conversation();
    const resultsMessage = conversation.find((m) => m.content.some((b) => b.type === "tool_result"));
    expect(resultsMessage?.content.map((b) => b.content)).to.deep.equal(["alpha", "beta", "a.txt\nb.txt"]);
  });

  it("asks the user a question and feeds the answer back", async () => {
    env = await setup();
    const events = await turn(env.session, "[ASK]", {
      answer: (request) => {
        expect(request).to.include({
          kind: "ask_user_question",
          title: "The agent has a question.",
          allowFreeText: true,
        });
        expect(request.inputId).to.equal(`ask-${request.toolUseId}`);
        expect(request.options).to.deep.equal([
          { id: "hz", label: "Hangzhou", description: "cn-hangzhou" },
          { id: "sh", label: "Shanghai" },
        ]);
        return { kind: "ask_user_question", selectedId: "sh" };
      },
    });
    expect(ofType(events, "input_received")[0]).to.include({
      kind: "ask_user_question",
      decision: "answered",
    });
    const result = toolResult(events, "ask_user_question");
    expect(result?.result).to.deep.equal({ selected_id: "sh", selected_label: "Shanghai", free_text: null });
    expect(ofType(events, "message_end").at(-1)?.text).to.equal("Thanks for answering.");
  });

  it("a cancelled question is an error result for the model", async () => {
    env = await setup();
    const events = await turn(env.session, "[ASK]", {
      answer: () => ({ kind: "ask_user_question", cancelled: true }),
    });
    expect(toolResult(events, "ask_user_question")).to.include({
      isError: true,
      result: "The user cancelled the question.",
    });
  });

  it("feeds schema violations back to the model without asking or running the tool", async () => {
    env = await setup();
    await writeFile(path.join(env.cwd, "a.txt"), "alpha\n");
    const events = await turn(env.session, "[BAD-INPUT]");
    const [bad, good] = ofType(events, "tool_result");
    expect(bad.isError).to.equal(true);
    expect(String(bad.result)).to.match(
      /^Invalid input for read_file: input must have required property 'path'; input must NOT have additional properties \(file\)/,
    );
    expect(good).to.include({ isError: false });
    expect(ofType(events, "message_end").at(-1)?.text).to.equal("Fixed.");
  });

  it("rejects a write through ../ before asking anything", async () => {
    env = await setup();
    const events = await turn(env.session, "[ESCAPE]");
    expect(ofType(events, "input_required")).to.have.length(0);
    expect(toolResult(events, "write_file")).to.include({
      isError: true,
      result: "The path is outside the workspace.",
    });
    const parent = path.dirname(env.cwd);
    expect(await readdir(parent)).to.not.include("outside.txt");
  });

  it("stops at the max-turns limit", async () => {
    env = await setup({ maxTurns: 3 });
    const events = await turn(env.session, "[LOOP]");
    const ends = ofType(events, "message_end");
    expect(ends.map((e) => e.stopReason)).to.deep.equal(["tool_use", "tool_use", "tool_use", "max_turns"]);
  });

  it("previews large results to the model and stores them in full", async () => {
    env = await setup({ largeResultChars: 1000 });
    const big = "x".repeat(5000);
    await writeFile(path.join(env.cwd, "big.txt"), big);
    const events = await turn(env.session, "[BIG]");
    const result = toolResult(events, "read_file");
    expect(result?.result).to.deep.include({ truncated: true, originalLength: 5000 });
    const stored = storedDoc(env.configDir, env.session.sessionId, `tool-result/${result?.toolUseId}`);
    expect(stored).to.equal(big);
  });

  it("sends sanitised, localised errors to clients and the details to the logs", async () => {
    const { logger, lines } = capturingLogger();
    env = await setup({ logger });
    const events = await turn(env.session, "[AUTH-ERROR]", { overrides: { language: "de" } });
    expect(ofType(events, "message_end")[0]).to.include({ stopReason: "stream_error", text: "partial" });
    const [error] = ofType(events, "error");
    expect(error).to.include({ kind: "authentication", code: "MODEL_AUTHENTICATION_FAILED" });
    expect(error.message).to.equal(t("de", error.errorId as string));
    expect(error.errorId).to.match(/^err_/);
    expect(JSON.stringify(events)).to.not.match(/sk-|alice|vendor/);
    const logged = lines.find((l) => l.includes(error.errorId as string)) ?? "";
    expect(logged).to.include("401 from vendor");
    expect(logged).to.not.include("supersecretvalue");

    const fatal = await turn(env.session, "[FATAL-ERROR]");
    const rejected = ofType(fatal, "error")[0];
    expect(rejected).to.include({ kind: "fatal", code: "MODEL_REQUEST_REJECTED" });
    expect(rejected.message).to.equal(
      `The model provider could not process the request (error ${String(rejected.errorId)}).`,
    );
    expect(JSON.stringify(fatal)).to.not.match(/qwen-x|alice/);
  });

  it("refuses a second turn while one is running", async () => {
    env = await setup();
    const controller = new AbortController();
    const iterable = env.session.runTurn({ text: "[SLOW]", images: [], overrides: {} }, controller.signal);
    const first = iterable[Symbol.asyncIterator]();
    expect((await first.next()).value).to.include({ type: "message_start" });
    const second = await turn(env.session, "hello");
    expect(second).to.deep.equal([
      { type: "error", kind: "fatal", message: "A turn is already running in this session." },
    ]);
    controller.abort();
    const rest: RuntimeEvent[] = [];
    for (let r = await first.next(); !r.done; r = await first.next()) rest.push(r.value);
    expect(rest.at(-1)).to.include({ type: "message_end", stopReason: "cancelled" });
  });

  it("lets a closed session go: the next open restores it from the store, the closed one refuses turns", async () => {
    env = await setup();
    await turn(env.session, "hello");
    const closed = env.session;
    await closed.close();
    const reopened = await env.runtime.openSession({
      contextId: "ctx-1",
      cwd: env.cwd,
      sessionId: closed.sessionId,
    });
    expect(reopened).to.not.equal(closed);
    const conversation = (reopened as unknown as { conversation(): Array<{ role: string }> }).conversation();
    expect(conversation.map((m) => m.role)).to.deep.equal(["user", "assistant"]);
    // Opened again while open: the same session.
    expect(
      await env.runtime.openSession({ contextId: "ctx-1", cwd: env.cwd, sessionId: closed.sessionId }),
    ).to.equal(reopened);
    const refused = await turn(closed, "hello again");
    expect(ofType(refused, "error")[0]).to.include({ kind: "fatal" });
  });

  it("keeps no closed session in memory (an evicted context's session can be collected)", async () => {
    env = await setup();
    const collect = gcFunction();
    // The session is referenced only inside this call.
    const ref = await (async () => {
      const session = await env.runtime.openSession({ contextId: "ctx-2", cwd: env.cwd });
      await turn(session, "hello");
      await session.close();
      return new WeakRef(session);
    })();
    await new Promise((resolve) => setImmediate(resolve));
    collect();
    expect(ref.deref()).to.equal(undefined);
  });

  it("confines reads: symlinks leaving the workspace are rejected", async () => {
    env = await setup();
    const outside = await tempDir("iac-outside-");
    await writeFile(path.join(outside, "secret.txt"), "top secret");
    await symlink(path.join(outside, "secret.txt"), path.join(env.cwd, "a.txt"));
    await writeFile(path.join(env.cwd, "b.txt"), "beta\n");
    const events = await turn(env.session, "[PARALLEL]");
    const [a, b] = ofType(events, "tool_result");
    expect(a).to.include({ isError: true, result: "The path leaves the workspace through a symbolic link." });
    expect(b.isError).to.equal(false);
    expect(JSON.stringify(events)).to.not.include("top secret");
  });
});

function t(lang: string, errorId: string): string {
  const texts: Record<string, string> = {
    de: `Der Modellanbieter braucht gültige Zugangsdaten: Prüfen Sie den API-Schlüssel und versuchen Sie es erneut (Fehler ${errorId}).`,
  };
  return texts[lang];
}
