// kill -9 while a pipeline waits for the candidate selection: the A2A server
// (`iac-code a2a`, a child process with the scripted pipeline and the local
// ROS endpoint) dies without any shutdown; a new process on the same
// directories and port takes the AG-UI resume: the run starts with the
// pipeline's ACTIVITY_SNAPSHOT, continues where it was (pipeline_resumed), and
// no pipeline event is shown twice across the runs.
import { expect } from "chai";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HttpAgent, type Interrupt } from "@ag-ui/client";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { agentRun } from "../agui/harness.js";
import type { WireEvent } from "../agui/helpers.js";
import { cleanEnv, sendUntilInput, startCli, type CliChild } from "../e2e/helpers.js";
import { openStream, rpc, stateOf, userMessage } from "../a2a/helpers.js";
import { RosEndpointFixture } from "../fixtures/ros-endpoint.js";
import { removeTempDirs, tempDir } from "../runtime/helpers.js";
import { AK, PIPELINE_SCRIPT, SECRET } from "./helpers.js";
import { freePort } from "../fixtures/free-port.js";

const pipelineEvents = (events: WireEvent[]) =>
  events
    .filter((e) => e.type === "CUSTOM" && e.name === "iac-code.pipeline.v1")
    .map((e) => e.value as { eventId: string; eventType: string; sequence: number });

describe("pipeline: kill -9 while waiting for the selection", function () {
  this.timeout(90_000);
  let ros: RosEndpointFixture;
  let a2a: CliChild | undefined;
  let agui: AguiServer | undefined;
  // Each test's servers stop after it (the next test starts its own: a server left running would
  // outlive the test run).
  afterEach(async () => {
    await agui?.close();
    await a2a?.stop();
    await ros?.close();
    agui = a2a = undefined;
  });
  after(removeTempDirs);

  it("a restarted server resumes the run; the resume shows the snapshot and no event twice", async () => {
    ros = await RosEndpointFixture.start({ [AK]: SECRET });
    ros.timeline = ["CREATE_COMPLETE"];
    const dir = await tempDir("iac-pipeline-kill-");
    const workspace = path.join(dir, "workspace");
    mkdirSync(workspace, { recursive: true });
    const port = await freePort();
    const config = path.join(dir, "a2a-server.yml");
    writeFileSync(
      config,
      [
        `port: ${port}`,
        `persistence-dir: ${path.join(dir, "persist")}`,
        "provider: scripted",
        `script: ${PIPELINE_SCRIPT}`,
        "token: kill-test-token",
        "mode: pipeline",
      ].join("\n"),
    );
    const env = cleanEnv(dir, {
      IAC_CODE_CONFIG_DIR: path.join(dir, "config"),
      IACCODE_A2A_ALLOWED_CWDS: dir,
      ALIBABA_CLOUD_ACCESS_KEY_ID: AK,
      ALIBABA_CLOUD_ACCESS_KEY_SECRET: SECRET,
      IAC_CODE_ROS_ENDPOINT: ros.url,
    });
    a2a = await startCli(["a2a", "--config", config], env);
    agui = await startAguiServer({
      host: "127.0.0.1",
      port: 0,
      a2aUrl: a2a.url,
      a2aToken: "kill-test-token",
      stateDir: path.join(dir, "agui-state"),
      idleShutdown: 0,
      interruptTtl: 540,
      allowedCwds: [dir],
      debug: false,
      logStdout: false,
    });
    // No runMode in the request: the server's mode (pipeline) applies.
    const props = { iacCode: { schemaVersion: 1, rosInvocationId: "inv-kill", cwd: workspace } };
    const agent = new HttpAgent({
      url: agui.url,
      threadId: "thread-kill",
      initialMessages: [{ id: "u1", role: "user", content: "Deploy a small web app" }],
    });
    // The template writes ask first (one candidate after the other), then the selection.
    const before: WireEvent[] = [];
    let selection: Interrupt | undefined;
    let resume: Array<{ interruptId: string; status: "resolved"; payload: unknown }> | undefined;
    for (let i = 1; !selection && i <= 4; i++) {
      const run = await agentRun(agent, {
        runId: `run-${i}`,
        forwardedProps: props,
        ...(resume ? { resume } : {}),
      });
      before.push(...run.events);
      const [interrupt] = (run.events.at(-1)!.outcome as { interrupts: Interrupt[] }).interrupts;
      if ((interrupt.metadata as { kind: string }).kind === "candidate_selection") selection = interrupt;
      else resume = [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }];
    }
    expect(selection).to.exist;

    a2a.child.kill("SIGKILL");
    await new Promise((resolve) => a2a!.child.once("exit", resolve));
    a2a = await startCli(["a2a", "--config", config], env);

    const second = await agentRun(agent, {
      runId: "run-after-restart",
      forwardedProps: props,
      resume: [{ interruptId: selection!.id, status: "resolved", payload: { selectedId: "1" } }],
    });
    expect(second.warnings).to.deep.equal([]);
    const events = second.events;
    // The deployment asks for permission; allowed, the run completes.
    const [deploy] = (events.at(-1)!.outcome as { interrupts: Interrupt[] }).interrupts;
    expect(deploy.metadata).to.include({ kind: "permission", toolName: "ros_deploy" });
    const third = await agentRun(agent, {
      runId: "run-deploy",
      forwardedProps: props,
      resume: [{ interruptId: deploy.id, status: "resolved", payload: { decision: "allow_once" } }],
    });
    expect(third.events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    const activity = events.filter((e) => e.type === "ACTIVITY_SNAPSHOT");
    expect(activity).to.have.length(1);
    // Read once the answer's stream is open: the run as it is then, the selection answered or not yet.
    const snapshot = (activity[0].content as { snapshot: Record<string, unknown> }).snapshot;
    expect(snapshot).to.include({ runNumber: 1 });
    expect(snapshot.status).to.be.oneOf(["waiting_input", "running"]);
    expect(snapshot.currentStepId).to.be.oneOf(["confirm_and_select", "deploying"]);
    const lastBefore = Math.max(...pipelineEvents(before).map((v) => v.sequence));
    expect(snapshot.lastSequence).to.be.at.least(lastBefore);

    const earlier = pipelineEvents(before);
    const after = pipelineEvents([...second.events, ...third.events]);
    expect(after[0].eventType).to.equal("pipeline_resumed");
    expect(after.at(-1)!.eventType).to.equal("pipeline_completed");
    const ids = [...earlier, ...after].map((v) => v.eventId);
    expect(new Set(ids).size).to.equal(ids.length);
    const sequences = [...earlier, ...after].map((v) => v.sequence);
    expect(sequences).to.deep.equal([...sequences].sort((a, b) => a - b));
    expect(ros.callsOf("CreateStack")[0].params.TemplateBody).to.contain("VSwitchB");
  });

  it("after a restart, a selection naming no option ends the turn with the reason; the context then takes the next message", async () => {
    ros = await RosEndpointFixture.start({ [AK]: SECRET });
    const dir = await tempDir("iac-pipeline-kill-bad-");
    const workspace = path.join(dir, "workspace");
    mkdirSync(workspace, { recursive: true });
    const config = path.join(dir, "a2a-server.yml");
    writeFileSync(
      config,
      [`port: ${await freePort()}`, `persistence-dir: ${path.join(dir, "persist")}`, "provider: scripted",
        `script: ${PIPELINE_SCRIPT}`, "auto-approve-permissions: true", "mode: pipeline"].join("\n"),
    ); // prettier-ignore
    const env = cleanEnv(dir, {
      IAC_CODE_CONFIG_DIR: path.join(dir, "config"),
      IACCODE_A2A_ALLOWED_CWDS: dir,
      ALIBABA_CLOUD_ACCESS_KEY_ID: AK,
      ALIBABA_CLOUD_ACCESS_KEY_SECRET: SECRET,
      IAC_CODE_ROS_ENDPOINT: ros.url,
    });
    a2a = await startCli(["a2a", "--config", config], env);
    const waiting = await sendUntilInput(a2a.url, "Deploy a small web app", { metadata: { iac_code: { cwd: workspace } } });
    expect(waiting.envelope.kind).to.equal("candidate_selection");
    a2a.child.kill("SIGKILL");
    await new Promise((resolve) => a2a!.child.once("exit", resolve));
    a2a = await startCli(["a2a", "--config", config], env);

    const bad = await openStream(a2a.url, "SendStreamingMessage", {
      message: userMessage("", {
        taskId: waiting.taskId,
        contextId: waiting.contextId,
        parts: [{ mediaType: "application/json", data: { schemaVersion: 1, kind: "candidate_selection",
          requestTaskId: waiting.taskId, inputId: waiting.envelope.inputId as string, toolUseId: waiting.envelope.toolUseId as string,
          selectedId: "9" } }],
      }),
    }); // prettier-ignore
    const events = await bad.rest();
    const last = events.at(-1)!;
    // Refused at once (invalid params), or taken and then ended: either way nothing waits on a dead answer.
    if ("error" in last) expect((last.error as { code: number }).code).to.equal(-32602);
    else expect(stateOf(last)).to.be.oneOf(["TASK_STATE_FAILED", "TASK_STATE_INPUT_REQUIRED"]);
    const next = await rpc(a2a.url, "SendMessage", {
      message: userMessage("what now?", { contextId: waiting.contextId, metadata: { iac_code: { cwd: workspace } } }),
    });
    expect(next.body.error, JSON.stringify(next.body.error)).to.equal(undefined);
    const task = (next.body.result as { task: { status: { state: string; message?: { parts: Array<{ text?: string }> } } } }).task;
    expect(JSON.stringify(task.status)).to.not.contain("A turn is already running");
  }); // prettier-ignore
});
