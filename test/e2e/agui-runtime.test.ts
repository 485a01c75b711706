// AG-UI + A2A + real runtime over HTTP: the official @ag-ui/client 1.0
// HttpAgent talks to the AG-UI adapter, which talks to the A2A server (bearer
// token, raw-thinking exposure), which runs the real runtime with a scripted
// model. Every event passes schemaIndex["agui/event"] and the client's
// verifier without a console.warn.
import { expect } from "chai";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { HttpAgent, type Interrupt } from "@ag-ui/client";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import type { WireEvent as AguiEvent } from "../agui/helpers.js";
import { agentRun } from "../agui/harness.js";
import { types } from "../agui/helpers.js";
import { auditLines, removeDir, startE2eServer, type E2eServer, adapterSettings } from "./helpers.js";

const TOKEN = "e2e-a2a-bearer-token";

type Outcome = { type: string; interrupts?: Interrupt[] };

const outcomeOf = (events: AguiEvent[]): Outcome => {
  const last = events.at(-1)!;
  expect(last.type).to.equal("RUN_FINISHED");
  return last.outcome as Outcome;
};

const textOf = (events: AguiEvent[], type = "TEXT_MESSAGE_CONTENT"): string =>
  events
    .filter((e) => e.type === type)
    .map((e) => e.delta as string)
    .join("");

const sessionIdOf = (events: AguiEvent[]): string =>
  (
    events.find((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1")!.value as {
      sessionId: string;
    }
  ).sessionId;

describe("e2e: AG-UI adapter + A2A server + real runtime (HttpAgent)", function () {
  this.timeout(60_000);
  let a2a: E2eServer;
  let agui: AguiServer;
  let invocation = 0;

  before(async () => {
    a2a = await startE2eServer({
      script: "e2e-agui.yaml",
      file: { token: TOKEN, "thinking-exposure": ["tool-trace", "raw-thinking"] },
    });
    agui = await startAguiServer(adapterSettings(a2a, TOKEN));
  });
  after(async () => {
    await agui?.close();
    await a2a?.close();
    if (a2a) removeDir(a2a.dir);
  });

  const agentFor = (threadId: string, text: string): HttpAgent =>
    new HttpAgent({
      url: agui.url,
      threadId,
      initialMessages: [{ id: `u-${threadId}`, role: "user", content: text }],
    });

  /** A fresh workspace per test (under the allowed root), so files of one test never show in another. */
  let workspace: string;
  let workspaces = 0;
  beforeEach(() => {
    workspace = path.join(a2a.dir, `workspace-${++workspaces}`);
    mkdirSync(workspace, { recursive: true });
  });

  const forwardedProps = (rosInvocationId: string) => ({
    iacCode: { schemaVersion: 1, rosInvocationId, cwd: workspace },
  });

  it("a permission interrupt resumed with allow_once writes the file", async () => {
    const props = forwardedProps(`inv-${++invocation}`);
    const agent = agentFor("e2e-allow-once", "[WRITE] create a VPC template");
    const first = await agentRun(agent, { runId: "run-1", forwardedProps: props });
    expect(first.warnings).to.deep.equal([]);
    expect(textOf(first.events)).to.equal("Writing vpc.yaml.");
    expect(types(first.events)).to.include.members(["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]);
    const outcome = outcomeOf(first.events);
    expect(outcome.type).to.equal("interrupt");
    expect(outcome.interrupts).to.have.length(1);
    const interrupt = outcome.interrupts![0];
    const toolCall = first.events.find((e) => e.type === "TOOL_CALL_START")!;
    expect(interrupt).to.include({ reason: "tool_call", toolCallId: toolCall.toolCallId });
    expect(interrupt.metadata).to.include({ toolName: "write_file", title: "Write vpc.yaml." });
    expect(existsSync(path.join(workspace, "vpc.yaml"))).to.equal(false);

    const second = await agentRun(agent, {
      runId: "run-2",
      forwardedProps: props,
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }],
    });
    expect(second.warnings).to.deep.equal([]);
    expect(outcomeOf(second.events).type).to.equal("success");
    const result = second.events.find((e) => e.type === "TOOL_CALL_RESULT")!;
    expect(result.toolCallId).to.equal(toolCall.toolCallId);
    expect(String(result.content)).to.include("vpc.yaml");
    expect(textOf(second.events)).to.equal("vpc.yaml is written.");
    expect(readFileSync(path.join(workspace, "vpc.yaml"), "utf8")).to.equal(
      "ROSTemplateFormatVersion: '2015-09-01'\nResources:\n  Vpc:\n    Type: ALIYUN::ECS::VPC\n",
    );
    expect(agent.pendingInterrupts).to.deep.equal([]);
    expect(
      (await auditLines(a2a.state, sessionIdOf(first.events))).map((l) => [l.decision, l.reason, l.inputId]),
    ).to.deep.equal([["allow_once", "user:allow_once", interrupt.id]]);
  });

  it("a permission interrupt resumed as cancelled is a deny: no file, and the model is told", async () => {
    const props = forwardedProps(`inv-${++invocation}`);
    const agent = agentFor("e2e-cancelled", "[WRITE] then cancel the interrupt");
    const first = await agentRun(agent, { runId: "run-1", forwardedProps: props });
    const interrupt = outcomeOf(first.events).interrupts![0];
    const second = await agentRun(agent, {
      runId: "run-2",
      forwardedProps: props,
      resume: [{ interruptId: interrupt.id, status: "cancelled" }],
    });
    expect(second.warnings).to.deep.equal([]);
    expect(outcomeOf(second.events).type).to.equal("success");
    const result = second.events.find((e) => e.type === "TOOL_CALL_RESULT")!;
    expect(String(result.content)).to.include("Permission denied.");
    expect(textOf(second.events)).to.equal("I did not write vpc.yaml.");
    expect(existsSync(path.join(workspace, "vpc.yaml"))).to.equal(false);
    expect(agent.pendingInterrupts).to.deep.equal([]);
    expect(
      (await auditLines(a2a.state, sessionIdOf(first.events))).map((l) => [l.decision, l.inputId]),
    ).to.deep.equal([["deny", interrupt.id]]);
  });

  it("allow_always: a second write in the same thread is not interrupted", async () => {
    const props = forwardedProps(`inv-${++invocation}`);
    const agent = agentFor("e2e-allow-always", "[ALWAYS-1]");
    const first = await agentRun(agent, { runId: "run-1", forwardedProps: props });
    const interrupt = outcomeOf(first.events).interrupts![0];
    const decisions = (
      interrupt.responseSchema as { properties: { decision: { enum: string[] } } } | undefined
    )?.properties.decision.enum;
    expect(decisions).to.include("allow_always");

    const second = await agentRun(agent, {
      runId: "run-2",
      forwardedProps: props,
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_always" } }],
    });
    expect(second.warnings).to.deep.equal([]);
    expect(outcomeOf(second.events).type).to.equal("success");
    expect(readFileSync(path.join(workspace, "first.yaml"), "utf8")).to.equal("a: 1\n");

    agent.addMessage({ id: "u-always-2", role: "user", content: "[ALWAYS-2]" });
    const third = await agentRun(agent, {
      runId: "run-3",
      forwardedProps: forwardedProps(`inv-${++invocation}`),
    });
    expect(third.warnings).to.deep.equal([]);
    expect(outcomeOf(third.events).type).to.equal("success");
    expect(types(third.events)).to.include.members(["TOOL_CALL_START", "TOOL_CALL_RESULT"]);
    expect(textOf(third.events)).to.equal("second.yaml written.");
    expect(readFileSync(path.join(workspace, "second.yaml"), "utf8")).to.equal("b: 2\n");
    // Same thread, same runtime session: the session rule was used, not a new question.
    expect(sessionIdOf(third.events)).to.equal(sessionIdOf(first.events));
    expect((await auditLines(a2a.state, sessionIdOf(first.events))).map((l) => l.reason)).to.deep.equal([
      "user:allow_always",
      "session_rule:write_file",
    ]);
  });

  it("a text + reasoning run: scripted thinking shows as REASONING_* events", async () => {
    const agent = agentFor("e2e-think", "[THINK] plan a VPC");
    const { events, warnings } = await agentRun(agent, {
      runId: "run-1",
      forwardedProps: forwardedProps(`inv-${++invocation}`),
    });
    expect(warnings).to.deep.equal([]);
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
    expect(textOf(events, "REASONING_MESSAGE_CONTENT")).to.equal("A VPC needs a CIDR block.");
    // Reasoning closes before the answer's text starts.
    expect(types(events).indexOf("REASONING_END")).to.be.lessThan(
      types(events).indexOf("TEXT_MESSAGE_START"),
    );
    expect(textOf(events)).to.equal("Use 192.168.0.0/16.");
    expect(events.at(-1)).to.deep.include({
      type: "RUN_FINISHED",
      outcome: { type: "success" },
      usage: [{ inputTokens: 42, outputTokens: 7, totalTokens: 49 }],
    });
  });
});
