/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// A2A server + real runtime over HTTP: a turn waiting for permission survives a
// restart of the server (graceful in-process, and a SIGKILLed `iac-code a2a`
// process) on the same persistence and config dirs, and the answer after the
// restart resumes it and writes the file; cancelled turns leave no file behind.
import { expect } from "chai";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parsePermissionAuditLine } from "../../src/contract/index.js";
import { openStream, resultOf, rpc, stateOf, userMessage, type AnyJson } from "../a2a/helpers.js";
import {
  answer,
  answerMessage,
  auditLines,
  cleanEnv,
  iacOf,
  isInputRequest,
  removeDir,
  SCRIPTS,
  sendToEnd,
  sendUntilInput,
  startCli,
  startE2eServer,
  tempDir,
  tempLeftovers,
  texts,
  toolTrace,
  type CliChild,
  type E2eServer,
} from "./helpers.js";

const VPC_YAML =
  "ROSTemplateFormatVersion: '2015-09-01'\nResources:\n  Vpc:\n    Type: ALIYUN::ECS::VPC\n    Properties:\n      CidrBlock: 192.168.0.0/16\n";

describe("e2e: A2A + runtime, restart while waiting for permission", function () {
  this.timeout(60_000);

  it("a graceful restart keeps the question; the answer on the new server resumes the turn and writes the file", async () => {
    const a = await startE2eServer({ script: "e2e-a2a.yaml" });
    let b: E2eServer | undefined;
    try {
      const waiting = await sendUntilInput(a.url, "[WRITE] before the restart");
      await a.close();
      expect(existsSync(path.join(a.workspace, "vpc.yaml"))).to.equal(false);

      b = await startE2eServer({ script: "e2e-a2a.yaml", dir: a.dir });
      const got = (await rpc(b.url, "GetTask", { id: waiting.taskId })).body.result as AnyJson;
      expect(got.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
      expect(got.metadata.iac_code.input.inputId).to.equal(waiting.envelope.inputId);

      const events = await answer(b.url, waiting, "allow_once");
      expect(resultOf(events[0]).task.id).to.equal(waiting.taskId);
      expect(texts(events)).to.include("MODEL-SAW-WRITE: vpc.yaml is in your workspace.");
      expect(stateOf(events.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
      expect(readFileSync(path.join(b.workspace, "vpc.yaml"), "utf8")).to.equal(VPC_YAML);

      const sessionId = iacOf(events.at(-1)!)!.iacCodeSessionId as string;
      expect(sessionId).to.equal(waiting.events.map((e) => iacOf(e)?.iacCodeSessionId).find(Boolean));
      expect(
        (await auditLines(b.state, sessionId)).map((l) => [l.decision, l.reason, l.inputId]),
      ).to.deep.equal([["allow_once", "user:allow_once", waiting.envelope.inputId]]);
    } finally {
      await b?.close();
      if (!b) await a.close();
      removeDir(a.dir);
    }
  });

  it("an allow_always given before a restart still holds for the same context after it", async () => {
    const a = await startE2eServer({ script: "e2e-a2a.yaml" });
    let b: E2eServer | undefined;
    try {
      const waiting = await sendUntilInput(a.url, "[ALWAYS-1]");
      expect(texts(await answer(a.url, waiting, "allow_always"))).to.include("first.yaml written.");
      await a.close();

      b = await startE2eServer({ script: "e2e-a2a.yaml", dir: a.dir });
      const events = await sendToEnd(b.url, "[ALWAYS-2]", { contextId: waiting.contextId });
      expect(events.some((e) => iacOf(e)?.input !== undefined)).to.equal(false);
      expect(texts(events)).to.include("second.yaml written.");
      expect(readFileSync(path.join(b.workspace, "second.yaml"), "utf8")).to.equal("b: 2\n");
      const sessionId = iacOf(events.at(-1)!)!.iacCodeSessionId as string;
      expect((await auditLines(b.state, sessionId)).map((l) => l.reason)).to.deep.equal([
        "user:allow_always",
        "session_rule:write_file",
      ]);
    } finally {
      await b?.close();
      if (!b) await a.close();
      removeDir(a.dir);
    }
  });

  it("`iac-code a2a` killed with SIGKILL while waiting: a new process takes the answer and writes the file", async () => {
    const dir = tempDir();
    const workspace = path.join(dir, "workspace");
    mkdirSync(workspace, { recursive: true });
    const configFile = path.join(dir, "a2a-server.yml");
    writeFileSync(
      configFile,
      [
        "port: 0",
        `persistence-dir: ${JSON.stringify(path.join(dir, "persist"))}`,
        `allowed-cwds: [${JSON.stringify(dir)}]`,
        `script: ${JSON.stringify(path.join(SCRIPTS, "e2e-a2a.yaml"))}`,
        "provider: scripted",
        "",
      ].join("\n"),
    );
    const env = cleanEnv(dir, { IAC_CODE_CONFIG_DIR: path.join(dir, "config") });
    let first: CliChild | undefined;
    let second: CliChild | undefined;
    try {
      first = await startCli(["a2a", "--config", configFile], env);
      const waiting = await sendUntilInput(first.url, "[WRITE] before the crash", {
        metadata: { iac_code: { cwd: workspace } },
      });
      await first.stop("SIGKILL");

      second = await startCli(["a2a", "--config", configFile], env);
      const events = await answer(second.url, waiting, "allow_once");
      expect(texts(events)).to.include("MODEL-SAW-WRITE: vpc.yaml is in your workspace.");
      expect(readFileSync(path.join(workspace, "vpc.yaml"), "utf8")).to.equal(VPC_YAML);
      expect(tempLeftovers(workspace)).to.deep.equal([]);
    } finally {
      await first?.stop("SIGKILL");
      await second?.stop();
      removeDir(dir);
    }
  });
});

describe("e2e: A2A + runtime, cancelled turns", function () {
  this.timeout(60_000);
  let s: E2eServer;

  beforeEach(async () => {
    s = await startE2eServer({ script: "e2e-a2a.yaml" });
  });
  afterEach(async () => {
    await s.close();
    removeDir(s.dir);
  });

  it("CancelTask during a long stream (a write_file call already streamed) leaves no file, half or whole", async () => {
    const stream = await openStream(s.url, "SendStreamingMessage", { message: userMessage("[SLOW-WRITE]") });
    const before = await stream.until((e) => iacOf(e)?.tool?.status === "input_complete");
    const task = resultOf(before[0]).task as AnyJson;
    expect(toolTrace(before).at(-1)).to.deep.include({ name: "write_file", status: "input_complete" });

    const canceled = await rpc(s.url, "CancelTask", { id: task.id });
    expect((canceled.body.result as AnyJson).status.state).to.equal("TASK_STATE_CANCELED");
    // Once CancelTask has answered, the context is free at once: the next turn is not
    // refused as busy and gets a normal answer from the model.
    const next = await sendToEnd(s.url, "[AFTER-CANCEL]", { contextId: task.contextId });
    expect(texts(next)).to.include("Still here after the cancel.");
    expect(stateOf(next.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");

    const rest = await stream.rest();
    expect(stateOf(rest.at(-1)!)).to.equal("TASK_STATE_CANCELED");
    expect(rest.some((e) => iacOf(e)?.input !== undefined)).to.equal(false);
    expect(existsSync(path.join(s.workspace, "slow.yaml"))).to.equal(false);
    expect(tempLeftovers(s.workspace)).to.deep.equal([]);
  });

  it("CancelTask while the write waits for permission denies it as cancelled (audited) and writes nothing", async () => {
    const stream = await openStream(s.url, "SendStreamingMessage", {
      message: userMessage("[WRITE] cancel"),
    });
    const events = await stream.until(isInputRequest);
    const envelope = iacOf(events.at(-1)!)!.input as AnyJson;
    const task = resultOf(events[0]).task as AnyJson;
    const waiting = { taskId: task.id as string, contextId: task.contextId as string, envelope, events };
    const canceled = await rpc(s.url, "CancelTask", { id: waiting.taskId });
    expect((canceled.body.result as AnyJson).status.state).to.equal("TASK_STATE_CANCELED");
    // The open stream ends canceled; no answer is announced (nobody answered).
    const rest = await stream.rest();
    expect(rest.map(stateOf)).to.deep.equal(["TASK_STATE_CANCELED"]);
    expect(rest.some((e) => iacOf(e)?.inputReceived !== undefined)).to.equal(false);
    const got = (await rpc(s.url, "GetTask", { id: waiting.taskId })).body.result as AnyJson;
    expect(got.status.state).to.equal("TASK_STATE_CANCELED");
    expect(existsSync(path.join(s.workspace, "vpc.yaml"))).to.equal(false);
    expect(tempLeftovers(s.workspace)).to.deep.equal([]);

    const sessionId = waiting.events.map((e) => iacOf(e)?.iacCodeSessionId).find(Boolean) as string;
    expect(
      (await auditLines(s.state, sessionId)).map((l) => [l.decision, l.reason, l.inputId]),
    ).to.deep.equal([["cancelled", "cancelled", waiting.envelope.inputId]]);
    const serverAudit = await s.server.state.audit.entries();
    expect(serverAudit.map((l) => [l.taskId, l.decision, l.reason])).to.deep.equal([
      [waiting.taskId, "cancelled", "task_canceled"],
    ]);
    // The answer comes too late: the task is terminal.
    const late = await answer(s.url, waiting, "allow_once");
    expect(late).to.have.length(1);
    expect(late[0].error).to.deep.include({
      code: -32602,
      message: "permission_resume_invalid: pending permission is not active.",
    });
    expect(existsSync(path.join(s.workspace, "vpc.yaml"))).to.equal(false);
  });

  it("the runtime's audit line and the server's audit entry of one cancelled permission validate against one contract", async () => {
    const waiting = await sendUntilInput(s.url, "[WRITE] cancel");
    await rpc(s.url, "CancelTask", { id: waiting.taskId });
    const sessionId = waiting.events.map((e) => iacOf(e)?.iacCodeSessionId).find(Boolean) as string;
    // Both read raw: the runtime's from its JSONL file, the server's from its SQLite state store.
    const runtimeLines = (await auditLines(s.state, sessionId)) as unknown[];
    const serverEntries = (await s.server.state.audit.entries()) as unknown[];
    expect(runtimeLines).to.have.length(1);
    expect(serverEntries).to.have.length(1);
    for (const line of [...runtimeLines, ...serverEntries]) {
      const parsed = parsePermissionAuditLine(line);
      expect(parsed.ok, JSON.stringify(parsed)).to.equal(true);
    }
    const same = { sessionId, toolUseId: waiting.envelope.toolUseId, inputId: waiting.envelope.inputId };
    expect(runtimeLines[0]).to.deep.include({ ...same, decision: "cancelled", autoApproved: false });
    expect(serverEntries[0]).to.deep.include({
      ...same,
      taskId: waiting.taskId,
      contextId: waiting.contextId,
      decision: "cancelled",
      reason: "task_canceled",
      autoApproved: false,
    });
  });

  it("CancelTask right after allowing a large write: the file is whole or absent, never torn", async () => {
    // The script is generated: an 8 MiB file content does not belong in a fixture file.
    const content = `big: ${"a".repeat(8 * 1024 * 1024)}\n`;
    const script = path.join(s.dir, "big-write.json");
    writeFileSync(
      script,
      JSON.stringify({
        version: 1,
        rules: [
          { when: { lastToolResult: { tool: "write_file" } }, reply: [{ text: "BIG-WRITE-FINISHED" }] },
          { reply: [{ toolCall: { name: "write_file", input: { path: "big.yaml", content } } }] },
        ],
      }),
    );
    const big = await startE2eServer({ script, dir: path.join(s.dir, "big") });
    try {
      const waiting = await sendUntilInput(big.url, "write the big file");
      const stream = await openStream(big.url, "SendStreamingMessage", {
        message: answerMessage(waiting, "allow_once"),
      });
      await stream.until((e) => iacOf(e)?.inputReceived !== undefined);
      const canceled = await rpc(big.url, "CancelTask", { id: waiting.taskId });
      expect((canceled.body.result as AnyJson).status.state).to.equal("TASK_STATE_CANCELED");
      const rest = await stream.rest();
      expect(stateOf(rest.at(-1)!)).to.equal("TASK_STATE_CANCELED");
      expect(texts(rest)).to.not.include("BIG-WRITE-FINISHED");
      // Wherever the cancel landed (before the tool, during the write, after the rename),
      // nothing partial is left: the target is absent or whole, and no temporary file remains.
      const target = path.join(big.workspace, "big.yaml");
      if (existsSync(target)) expect(readFileSync(target, "utf8") === content).to.equal(true);
      expect(tempLeftovers(big.workspace)).to.deep.equal([]);
    } finally {
      await big.close();
    }
  });
});
