// End-to-end runs over real HTTP: the official @ag-ui/client HttpAgent against
// the adapter, in front of the real A2A server (fixture runtime). Every stream
// passes our event contract and the client's verifier without warnings.
import { expect } from "chai";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Interrupt } from "@ag-ui/client";
import { agentRun, newAgent, startHarness, type Harness } from "./harness.js";
import { types } from "./helpers.js";

describe("agui runs over HTTP (HttpAgent -> adapter -> real A2A server)", function () {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  const fp = (h_: Harness, extra: Record<string, unknown> = {}) => ({
    iacCode: { schemaVersion: 1, rosInvocationId: "invocation-1", cwd: h_.workspace, ...extra },
  });

  it("text run: RUN_STARTED, session event, text, RUN_FINISHED success with usage", async () => {
    const agent = newAgent(h, "thread-text", "Create a VPC template");
    const { events, warnings } = await agentRun(agent, { runId: "run-1", forwardedProps: fp(h) });
    expect(warnings).to.deep.equal([]);
    expect(types(events)).to.deep.equal([
      "RUN_STARTED",
      "CUSTOM",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "RUN_FINISHED",
    ]);
    const session = events[1];
    expect(session.name).to.equal("iac-code.session.v1");
    expect(session.value).to.include({
      threadId: "thread-text",
      aguiRunId: "run-1",
      rosInvocationId: "invocation-1",
    });
    const text = events
      .filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
      .map((e) => e.delta)
      .join("");
    expect(text).to.equal("Echo: Create a VPC template");
    expect(events.at(-1)).to.deep.include({
      outcome: { type: "success" },
      usage: [{ inputTokens: 11, outputTokens: 7, totalTokens: 18 }],
    });
    expect(agent.messages.some((m) => m.role === "assistant")).to.equal(true);
    // A later normal turn reuses the thread's A2A context and iac-code session.
    agent.addMessage({ id: "u2", role: "user", content: "again" });
    const second = await agentRun(agent, { runId: "run-2", forwardedProps: fp(h) });
    const s2 = second.events.find((e) => e.type === "CUSTOM")!.value as Record<string, string>;
    const s1 = session.value as Record<string, string>;
    expect(s2.contextId).to.equal(s1.contextId);
    expect(s2.sessionId).to.equal(s1.sessionId);
    expect(s2.executionId).not.to.equal(s1.executionId);
    expect(h.runtime.sessions.size).to.equal(1);
  });

  it("reasoning run: REASONING_* events", async () => {
    const agent = newAgent(h, "thread-think", "[[think]] plan it");
    const { events } = await agentRun(agent, {
      runId: "run-1",
      forwardedProps: fp(h, { thinking: { enabled: true } }),
    });
    const reasoning = events.filter((e) => e.type.startsWith("REASONING"));
    expect(types(reasoning)).to.deep.equal([
      "REASONING_START",
      "REASONING_MESSAGE_START",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_END",
      "REASONING_END",
    ]);
    expect(reasoning[1].role).to.equal("reasoning");
  });

  it("tool run: TOOL_CALL_*, result and artifact", async () => {
    const agent = newAgent(h, "thread-tool", "[[tool]] read");
    const { events } = await agentRun(agent, { runId: "run-1", forwardedProps: fp(h) });
    expect(types(events)).to.include.members([
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "TOOL_CALL_RESULT",
    ]);
    const artifact = events.find((e) => e.type === "CUSTOM" && e.name === "iac-code.artifact.v1");
    expect(artifact?.value).to.include({ filename: "main.tf" });
  });

  it("permission interrupt -> resume allow_once writes the file; state files hold no secrets", async () => {
    const secrets = {
      llmApiKey: "sk-llm-SECRET-1",
      alibabaCloud: {
        accessKeyId: "AKID-SECRET-2",
        accessKeySecret: "AKSECRET-SECRET-3",
        securityToken: "STS-SECRET-4",
      },
    };
    const agent = newAgent(h, "thread-perm", "[[permission]] write it PRIVATE-MESSAGE-TEXT");
    const first = await agentRun(agent, { runId: "run-1", forwardedProps: fp(h, secrets) });
    const finished = first.events.at(-1)!;
    expect(finished.type).to.equal("RUN_FINISHED");
    const outcome = finished.outcome as { type: string; interrupts: Interrupt[] };
    expect(outcome.type).to.equal("interrupt");
    expect(outcome.interrupts).to.have.length(1);
    const interrupt = outcome.interrupts[0];
    expect(interrupt).to.include({
      reason: "tool_call",
      message: "Write vpc.yaml. Allow once?",
      toolCallId: "tool-write-1",
    });
    expect(Date.parse(interrupt.expiresAt!)).to.be.greaterThan(Date.now() + 500_000);
    expect(interrupt.metadata).to.include({
      title: "Write vpc.yaml",
      purpose: "Save the generated template",
      toolName: "write_file",
    });
    expect(agent.pendingInterrupts.map((i) => i.id)).to.deep.equal([interrupt.id]);
    expect(existsSync(path.join(h.workspace, "vpc.yaml"))).to.equal(false);
    // Secrets and message text never reach the state dir.
    // Every file: the thread's, and the spares that hold its earlier versions (file-replacer.ts).
    const names = readdirSync(path.join(h.stateDir, "threads"));
    const threadFiles = names.filter((f) => !f.startsWith("."));
    expect(threadFiles).to.have.length(1);
    const read = (f: string) => readFileSync(path.join(h.stateDir, "threads", f), "utf8");
    for (const text of names.map(read)) {
      for (const needle of [
        "sk-llm-SECRET-1",
        "AKID-SECRET-2",
        "AKSECRET-SECRET-3",
        "STS-SECRET-4",
        "PRIVATE-MESSAGE-TEXT",
      ]) {
        expect(text).not.to.include(needle);
      }
    }
    expect(
      (JSON.parse(read(threadFiles[0])) as { execution: { pending: object } }).execution.pending,
    ).to.have.property(interrupt.id);

    const second = await agentRun(agent, {
      runId: "run-2",
      forwardedProps: fp(h, secrets),
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }],
    });
    expect(second.warnings).to.deep.equal([]);
    expect(second.events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    expect(types(second.events)).not.to.include("TOOL_CALL_START");
    const result = second.events.find((e) => e.type === "TOOL_CALL_RESULT");
    expect(result).to.include({ toolCallId: "tool-write-1" });
    expect(readFileSync(path.join(h.workspace, "vpc.yaml"), "utf8")).to.include("ROSTemplateFormatVersion");
    expect(h.runtime.answers).to.deep.equal([
      { kind: "permission", inputId: interrupt.id, decision: "allow_once" },
    ]);
    expect(agent.pendingInterrupts).to.deep.equal([]);
  });
});
