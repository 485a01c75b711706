// The scripted provider (matching, chunking, split tool arguments, errors,
// delays), the bundled demo mode, and context compaction.
import { expect } from "chai";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ConfigError, ProviderError } from "../../src/runtime/errors.js";
import { createAgentRuntime, loadDemoScript, resolveRuntimeConfig } from "../../src/runtime/index.js";
import type { Message } from "../../src/runtime/messages.js";
import { createTurnProvider } from "../../src/runtime/providers/factory.js";
import { parseScript } from "../../src/runtime/providers/script-format.js";
import { ScriptedProvider } from "../../src/runtime/providers/scripted.js";
import type { ProviderEvent } from "../../src/runtime/providers/types.js";
import { validateRosTemplate } from "../../src/runtime/tools/ros-validator.js";
import type { RuntimeEvent } from "../../src/runtime/seam.js";
import { allowOnce, deny, ofType, removeTempDirs, silentLogger, tempDir, turn } from "./helpers.js";

const msg = (
  role: "user" | "assistant",
  content: Message["content"],
  id = `${role}-${Math.random()}`,
): Message => ({
  id,
  role,
  content,
  createdAt: "t",
});

async function replay(
  provider: ScriptedProvider,
  messages: Message[],
  kind: "stream" | "complete" = "stream",
  signal = new AbortController().signal,
) {
  const out: ProviderEvent[] = [];
  for await (const event of provider.stream({ system: "s", messages, tools: [], kind, signal }))
    out.push(event);
  return out;
}

const SCRIPT = `
version: 1
defaults: { chunkSize: 4 }
rules:
  - name: regex
    when: { userTextPattern: "^deploy \\\\d+$" }
    reply: [{ text: "pattern" }]
  - when: { userText: "[T]", toolsCalled: [glob], toolsNotCalled: [grep], lastToolResult: { tool: glob, isError: false, contains: "a.yaml" }, round: 1 }
    reply: [{ text: "after glob" }]
  - when: { userText: "[T]" }
    reply:
      - thinking: "abcdefgh"
        signature: sig
      - toolCall: { name: glob, input: { pattern: "**/*.yaml" }, argumentChunks: 3 }
      - usage: { inputTokens: 1, outputTokens: 2 }
  - when: { userText: "[E]" }
    reply: [{ text: "x" }, { error: { kind: retryable, message: "boom" } }]
  - when: { userText: "[D]" }
    reply: [{ delayMs: 100000 }]
  - when: { kind: complete }
    reply: [{ text: "summary" }]
    stopReason: max_tokens
fallback: [{ text: ["fall", "back"] }]
`;

describe("runtime: scripted provider, demo mode and compaction", () => {
  afterEach(removeTempDirs);

  it("matches rules on the user text, tools called, last result, round and kind", async () => {
    const provider = new ScriptedProvider(parseScript(SCRIPT, "inline"));
    expect(provider.model).to.equal("scripted");
    const first = await replay(provider, [msg("user", [{ type: "text", text: "[T] go" }])]);
    expect(first).to.deep.equal([
      { type: "thinking_delta", text: "abcd" },
      { type: "thinking_delta", text: "efgh", signature: "sig" },
      { type: "tool_use_start", id: "call_1_0", name: "glob" },
      { type: "tool_input_delta", id: "call_1_0", partialJson: '{"patter' },
      { type: "tool_input_delta", id: "call_1_0", partialJson: 'n":"**/*' },
      { type: "tool_input_delta", id: "call_1_0", partialJson: '.yaml"}' },
      { type: "tool_use_end", id: "call_1_0", name: "glob", input: { pattern: "**/*.yaml" } },
      { type: "message_end", stopReason: "tool_use", usage: { inputTokens: 1, outputTokens: 2 } },
    ]);
    const history = [
      msg("user", [{ type: "text", text: "[T] go" }]),
      msg("assistant", [{ type: "tool_use", id: "call_1_0", name: "glob", input: {} }]),
      msg("user", [{ type: "tool_result", toolUseId: "call_1_0", content: "a.yaml", isError: false }]),
    ];
    expect((await replay(provider, history))[0]).to.deep.equal({ type: "text_delta", text: "afte" });
    // An error result does not match the follow-up rule: the first rule for [T] applies again.
    history[2] = msg("user", [
      { type: "tool_result", toolUseId: "call_1_0", content: "a.yaml", isError: true },
    ]);
    expect((await replay(provider, history))[0]).to.include({ type: "thinking_delta" });
    expect((await replay(provider, [msg("user", [{ type: "text", text: "deploy 42" }])]))[0]).to.deep.equal({
      type: "text_delta",
      text: "patt",
    });
    const fallback = await replay(provider, [msg("user", [{ type: "text", text: "other" }])]);
    expect(fallback.slice(0, 2)).to.deep.equal([
      { type: "text_delta", text: "fall" },
      { type: "text_delta", text: "back" },
    ]);
    expect(fallback[2]).to.deep.include({ type: "message_end", stopReason: "end_turn" });
    const summary = await replay(provider, [msg("user", [{ type: "text", text: "[T]" }])], "complete");
    expect(summary.at(-1)).to.deep.include({ type: "message_end", stopReason: "max_tokens" });
  });

  it("throws scripted errors after the steps before them, and aborts delays", async () => {
    const provider = new ScriptedProvider(parseScript(SCRIPT, "inline"));
    const seen: ProviderEvent[] = [];
    let error: unknown;
    try {
      for await (const e of provider.stream({
        system: "",
        messages: [msg("user", [{ type: "text", text: "[E]" }])],
        tools: [],
        kind: "stream",
        signal: new AbortController().signal,
      }))
        seen.push(e);
    } catch (e) {
      error = e;
    }
    expect(seen).to.deep.equal([{ type: "text_delta", text: "x" }]);
    expect(error).to.be.instanceOf(ProviderError);
    expect(error).to.include({ kind: "retryable", detail: "boom" });
    const controller = new AbortController();
    const pending = replay(
      provider,
      [msg("user", [{ type: "text", text: "[D]" }])],
      "stream",
      controller.signal,
    );
    controller.abort();
    expect(((await pending.catch((e: unknown) => e)) as Error).name).to.equal("AbortError");
  });

  it("rejects invalid scripts with the place of the problem", () => {
    const invalid = (text: string): string => {
      try {
        parseScript(text, "s.yaml");
      } catch (error) {
        expect(error).to.be.instanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error("expected an error");
    };
    expect(invalid("version: 2\nrules: []\n")).to.match(
      /^Script s\.yaml does not match the script format: \/version must be equal to constant/,
    );
    expect(invalid("version: 1\nrules:\n  - when: { userTextPattern: '(' }\n    reply: []\n")).to.equal(
      "Script s.yaml: rule 0 has an invalid userTextPattern",
    );
    expect(invalid("version: 1\nrules: [\n")).to.match(/^Script s\.yaml is not valid YAML or JSON: /);
    expect(invalid("version: 1\nrules:\n  - reply: [{ toolCall: { name: x } }]\n")).to.match(
      /\/rules\/0\/reply\/0/,
    );
  });

  it("runs the bundled demo: streamed text, a permission for the write, a valid VPC template", async () => {
    const configDir = await tempDir();
    const cwd = await tempDir("iac-ws-");
    const runtime = await createAgentRuntime({ configDir, env: {}, logger: silentLogger() });
    try {
      const info = runtime.info();
      expect(info).to.include({ provider: "demo", model: "demo-script", demo: true });
      expect(info.hint).to.match(/^Demo mode: no model is configured/);
      const session = await runtime.openSession({ contextId: "demo", cwd });
      const events = await turn(session, "create a VPC template", { answer: allowOnce });
      expect(ofType(events, "thinking_delta").length).to.be.greaterThan(0);
      expect(ofType(events, "text_delta").length).to.be.greaterThan(5);
      expect(ofType(events, "input_required")[0].request).to.include({
        toolName: "write_file",
        target: "vpc.yaml",
      });
      const content = await readFile(path.join(cwd, "vpc.yaml"), "utf8");
      expect(validateRosTemplate(content).valid).to.equal(true);
      const results = ofType(events, "tool_result");
      expect(results.map((r) => [r.name, r.isError])).to.deep.equal([
        ["write_file", false],
        ["ros_validate_template", false],
      ]);
      expect(results[0].artifact).to.include({ filename: "vpc.yaml", mediaType: "application/yaml" });
      expect(ofType(events, "message_end").at(-1)?.text).to.match(/^Done: vpc\.yaml holds a ROS template/);

      const denied = await turn(session, "again", { answer: deny });
      expect(ofType(denied, "message_end").at(-1)?.text).to.match(/^Understood: I did not write vpc\.yaml/);
    } finally {
      await runtime.close();
    }
  });

  it("leaves demo mode for a turn that brings its own key or model", async () => {
    const config = resolveRuntimeConfig({ configDir: await tempDir(), env: {} });
    const options = {
      config,
      idleTimeoutMs: 1000,
      retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
      logger: silentLogger(),
    };
    const script = loadDemoScript();
    expect(createTurnProvider({ ...options, script }, {})).to.include({
      name: "scripted",
      model: "demo-script",
    });
    const real = createTurnProvider({ ...options, script }, { apiKey: "sk-turn" });
    expect(real).to.include({ name: "dashscope", model: "qwen3.8-max" });
    expect(createTurnProvider({ ...options, script }, { model: "qwen-plus", apiKey: "k" })).to.include({
      model: "qwen-plus",
    });
    let error: unknown;
    try {
      createTurnProvider({ ...options, script }, { model: "qwen-plus" });
    } catch (e) {
      error = e;
    }
    expect(error).to.include({ kind: "authentication" });
  });

  it("compacts the conversation past the threshold, keeping the last turns, and restores it", async () => {
    const configDir = await tempDir();
    const cwd = await tempDir("iac-ws-");
    const script = path.join(configDir, "script.yaml");
    await writeFile(
      script,
      "version: 1\nrules:\n  - when: { kind: complete }\n    reply: [{ text: 'SUMMARY of old turns' }]\nfallback:\n  - text: '" +
        "y".repeat(400) +
        "'\n",
    );
    const options = {
      configDir,
      env: {},
      scriptFile: script,
      logger: silentLogger(),
      contextWindow: 2000,
      compactThreshold: 0.5,
      keepTurns: 1,
    };
    const runtime = await createAgentRuntime(options);
    const session = await runtime.openSession({ contextId: "c", cwd });
    const all: RuntimeEvent[] = [];
    for (let i = 0; i < 8; i++) all.push(...(await turn(session, `question ${i} ${"x".repeat(300)}`)));
    const compactions = ofType(all, "compaction");
    expect(compactions.length).to.be.greaterThan(0);
    expect(compactions[0]).to.include({ phase: "started" });
    const finished = compactions.find((c) => c.phase === "finished");
    expect(finished).to.include({ summary: "SUMMARY of old turns" });
    expect(finished?.compactedTokens).to.be.lessThan(finished?.originalTokens as number);
    const conversation = (session as unknown as { conversation(): Message[] }).conversation();
    const lastMarker = conversation.map((m) => m.kind).lastIndexOf("compaction_summary");
    expect(lastMarker).to.be.greaterThan(0);
    // The marker sits before the kept tail: the last user prompt and its answer follow it.
    expect(conversation.length - lastMarker).to.be.at.most(5);
    await runtime.close();

    const again = await createAgentRuntime(options);
    const restored = await again.openSession({ contextId: "c", cwd, sessionId: session.sessionId });
    const reloaded = (restored as unknown as { conversation(): Message[] }).conversation();
    expect(reloaded.map((m) => m.id)).to.deep.equal(conversation.map((m) => m.id));
    await again.close();
  });

  it("reports a failed compaction and carries on", async () => {
    const configDir = await tempDir();
    const script = path.join(configDir, "script.yaml");
    await writeFile(
      script,
      "version: 1\nrules:\n  - when: { kind: complete }\n    reply: [{ error: { kind: fatal } }]\nfallback:\n  - text: '" +
        "z".repeat(400) +
        "'\n",
    );
    const runtime = await createAgentRuntime({
      configDir,
      env: {},
      scriptFile: script,
      logger: silentLogger(),
      contextWindow: 1000,
      compactThreshold: 0.5,
      keepTurns: 1,
    });
    try {
      const session = await runtime.openSession({ contextId: "c", cwd: await tempDir("iac-ws-") });
      const all: RuntimeEvent[] = [];
      for (let i = 0; i < 5; i++) all.push(...(await turn(session, `q${i} ${"x".repeat(300)}`)));
      const phases = ofType(all, "compaction").map((c) => c.phase);
      expect(phases).to.include("failed");
      expect(phases).to.not.include("finished");
      expect(ofType(all, "message_end").at(-1)).to.include({ stopReason: "end_turn" });
      expect(ofType(all, "error")).to.have.length(0);
    } finally {
      await runtime.close();
    }
  });
});
