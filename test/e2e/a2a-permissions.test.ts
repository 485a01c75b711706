/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// A2A server + real runtime (scripted model) over HTTP: a write_file turn asks
// permission; allow_once writes the file, deny leaves it absent and the model
// is told so; allow_always is not asked again in the same context; every
// decision is a line of the session's permission audit log.
import { expect } from "chai";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { openStream, stateOf, userMessage } from "../a2a/helpers.js";
import {
  answer,
  auditLines,
  iacOf,
  removeDir,
  sendUntilInput,
  startE2eServer,
  tempLeftovers,
  texts,
  toolTrace,
  type E2eServer,
} from "./helpers.js";

describe("e2e: A2A + runtime, write_file permissions", function () {
  this.timeout(60_000);
  let s: E2eServer;

  beforeEach(async () => {
    s = await startE2eServer({ script: "e2e-a2a.yaml" });
  });
  afterEach(async () => {
    await s.close();
    removeDir(s.dir);
  });

  it("asks before writing, and allow_once writes the file; the audit log records the decision", async () => {
    const waiting = await sendUntilInput(s.url, "[WRITE] create a VPC template");
    expect(texts(waiting.events).join("")).to.include("I'll write vpc.yaml.");
    const { envelope } = waiting;
    expect(envelope).to.deep.include({
      kind: "permission",
      toolName: "write_file",
      effect: "file_change",
      target: "vpc.yaml",
      requestTaskId: waiting.taskId,
      contextId: waiting.contextId,
    });
    expect(envelope.options.map((o: { id: string }) => o.id)).to.include.members(["allow_once", "deny"]);
    // Nothing is written while the question is open.
    expect(existsSync(path.join(s.workspace, "vpc.yaml"))).to.equal(false);

    const events = await answer(s.url, waiting, "allow_once");
    const received = events.map((e) => iacOf(e)?.inputReceived).find(Boolean);
    expect(received).to.deep.equal({
      kind: "permission",
      inputId: envelope.inputId,
      toolUseId: envelope.toolUseId,
      decision: "allow_once",
    });
    const result = toolTrace(events).find((t) => t.status === "completed" && t.name === "write_file");
    expect(result?.result).to.deep.include({ path: "vpc.yaml", created: true });
    expect(texts(events)).to.include("MODEL-SAW-WRITE: vpc.yaml is in your workspace.");
    expect(stateOf(events.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(iacOf(events.at(-1)!)).to.not.have.property("input");

    expect(readFileSync(path.join(s.workspace, "vpc.yaml"), "utf8")).to.equal(
      "ROSTemplateFormatVersion: '2015-09-01'\nResources:\n  Vpc:\n    Type: ALIYUN::ECS::VPC\n    Properties:\n      CidrBlock: 192.168.0.0/16\n",
    );
    expect(tempLeftovers(s.workspace)).to.deep.equal([]);

    const sessionId = iacOf(events.at(-1)!)!.iacCodeSessionId as string;
    const lines = await auditLines(s.state, sessionId);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.deep.include({
      sessionId,
      toolName: "write_file",
      toolUseId: envelope.toolUseId,
      inputId: envelope.inputId,
      decision: "allow_once",
      reason: "user:allow_once",
      autoApproved: false,
    });
    // The input itself is fingerprinted, never stored.
    expect(lines[0].inputFingerprint).to.match(/^sha256:[0-9a-f]{16}$/);
    expect(JSON.stringify(lines[0])).to.not.include("ROSTemplateFormatVersion");
  });

  it("deny leaves no file, and the model is given the refusal (its next reply says so)", async () => {
    const waiting = await sendUntilInput(s.url, "[WRITE] create a VPC template");
    const events = await answer(s.url, waiting, "deny");
    const failed = toolTrace(events).find((t) => t.status === "failed");
    expect(failed).to.deep.include({ status: "failed", toolUseId: waiting.envelope.toolUseId });
    expect(failed?.result).to.equal("Permission denied.");
    // The scripted model answers this only after a "Permission denied." tool result.
    expect(texts(events)).to.include("MODEL-SAW-DENIAL: I did not write vpc.yaml.");
    expect(texts(events).join("")).to.not.include("MODEL-SAW-WRITE");
    expect(existsSync(path.join(s.workspace, "vpc.yaml"))).to.equal(false);
    expect(tempLeftovers(s.workspace)).to.deep.equal([]);

    const sessionId = iacOf(events.at(-1)!)!.iacCodeSessionId as string;
    expect(
      (await auditLines(s.state, sessionId)).map((l) => [l.decision, l.reason, l.inputId]),
    ).to.deep.equal([["deny", "user:deny", waiting.envelope.inputId]]);
  });

  it("allow_always is not asked twice in the same context (and a new context asks again)", async () => {
    const first = await sendUntilInput(s.url, "[ALWAYS-1]");
    expect(first.envelope.options.map((o: { id: string }) => o.id)).to.include("allow_always");
    const firstEnd = await answer(s.url, first, "allow_always");
    expect(texts(firstEnd)).to.include("first.yaml written.");
    expect(readFileSync(path.join(s.workspace, "first.yaml"), "utf8")).to.equal("a: 1\n");

    // Second turn, same context: the write goes through without a question.
    const stream = await openStream(s.url, "SendStreamingMessage", {
      message: userMessage("[ALWAYS-2]", { contextId: first.contextId }),
    });
    const second = await stream.rest();
    expect(second.some((e) => iacOf(e)?.input !== undefined)).to.equal(false);
    const decided = second.map((e) => iacOf(e)?.permission).find(Boolean);
    expect(decided).to.deep.include({ autoApproved: true, toolName: "write_file" });
    expect(texts(second)).to.include("second.yaml written.");
    expect(readFileSync(path.join(s.workspace, "second.yaml"), "utf8")).to.equal("b: 2\n");

    const sessionId = iacOf(second.at(-1)!)!.iacCodeSessionId as string;
    expect((await auditLines(s.state, sessionId)).map((l) => [l.decision, l.reason])).to.deep.equal([
      ["allow_always", "user:allow_always"],
      ["allow_once", "session_rule:write_file"],
    ]);

    // The rule belongs to that session: another context is asked again.
    const other = await sendUntilInput(s.url, "[ALWAYS-2] elsewhere");
    expect(other.contextId).to.not.equal(first.contextId);
    expect(other.envelope.toolName).to.equal("write_file");
    expect(texts(await answer(s.url, other, "allow_once"))).to.include("second.yaml written.");
  });
});
