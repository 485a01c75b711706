/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// kill -9 while a pipeline works (its candidates are being evaluated, no
// interrupt outstanding): the restarted A2A server continues the run by
// itself (pipeline_resumed, the candidates' steps go on, the selection is
// asked), the journal numbering goes on with no event twice, and the answer
// completes it. A run whose turn used per-request credentials cannot go on
// without them (they are never stored): it ends FAILED with the reason.
import { expect } from "chai";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { PipelineEnvelope } from "../../src/runtime/seam.js";
import { openStream, resultOf, rpc, userMessage, type AnyJson } from "../a2a/helpers.js";
import { cleanEnv, iacOf, startCli, type CliChild } from "../e2e/helpers.js";
import { RosEndpointFixture } from "../fixtures/ros-endpoint.js";
import { removeTempDirs, tempDir } from "../runtime/helpers.js";
import { AK, PIPELINE_SCRIPT, SECRET } from "./helpers.js";
import { freePort } from "../fixtures/free-port.js";

const envelopesOf = (event: Record<string, unknown>): PipelineEnvelope[] => {
  const iac = (iacOf(event) ?? {}) as {
    pipeline?: PipelineEnvelope;
    pipelineBatch?: { events: PipelineEnvelope[] };
  };
  return iac.pipeline ? [iac.pipeline] : (iac.pipelineBatch?.events ?? []);
};

async function taskOf(url: string, id: string): Promise<AnyJson> {
  const reply = await rpc(url, "GetTask", { id });
  expect(reply.body.error, JSON.stringify(reply.body.error)).to.equal(undefined);
  return reply.body.result as AnyJson;
}

/** Polls GetTask until the task leaves WORKING. */
async function settled(url: string, id: string): Promise<AnyJson> {
  for (let i = 0; i < 200; i++) {
    const task = await taskOf(url, id);
    if (task.status.state !== "TASK_STATE_WORKING") return task;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`task ${id} still WORKING`);
}

describe("pipeline: kill -9 while it works, no interrupt outstanding", function () {
  this.timeout(90_000);
  let ros: RosEndpointFixture;
  let a2a: CliChild | undefined;
  let dir: string;
  let config: string;
  let env: NodeJS.ProcessEnv;
  let workspace: string;

  beforeEach(async () => {
    ros = await RosEndpointFixture.start({ [AK]: SECRET });
    dir = await tempDir("iac-pipeline-revive-");
    workspace = path.join(dir, "workspace");
    mkdirSync(workspace, { recursive: true });
    config = path.join(dir, "a2a-server.yml");
    writeFileSync(
      config,
      [
        `port: ${await freePort()}`,
        `persistence-dir: ${path.join(dir, "persist")}`,
        "provider: scripted",
        `script: ${PIPELINE_SCRIPT}`,
        "mode: pipeline",
      ].join("\n"),
    );
    env = cleanEnv(dir, {
      IAC_CODE_CONFIG_DIR: path.join(dir, "config"),
      IACCODE_A2A_ALLOWED_CWDS: dir,
      ALIBABA_CLOUD_ACCESS_KEY_ID: AK,
      ALIBABA_CLOUD_ACCESS_KEY_SECRET: SECRET,
      IAC_CODE_ROS_ENDPOINT: ros.url,
    });
    a2a = await startCli(["a2a", "--config", config], env);
  });
  afterEach(async () => {
    await a2a?.stop();
    await ros?.close();
    a2a = undefined;
  });
  after(removeTempDirs);

  /** Starts the pipeline and kills the server once the candidates are being evaluated. */
  async function killWhileEvaluating(metadata: Record<string, unknown>) {
    const stream = await openStream(a2a!.url, "SendStreamingMessage", {
      message: userMessage("Deploy a small web app", {
        metadata: { iac_code: { cwd: workspace, ...metadata } },
      }),
    });
    const before = await stream.until((e) => envelopesOf(e).some((v) => v.eventType === "candidate_started"));
    const task = resultOf(before[0]).task as AnyJson;
    a2a!.child.kill("SIGKILL");
    await new Promise((resolve) => a2a!.child.once("exit", resolve));
    stream.stop();
    a2a = await startCli(["a2a", "--config", config], env);
    return {
      taskId: task.id as string,
      contextId: task.contextId as string,
      before: before.flatMap(envelopesOf),
    };
  }

  it("the restarted server goes on by itself, to each wait in turn; the answers complete the run", async () => {
    const { taskId, contextId, before } = await killWhileEvaluating({});
    // The revived run works on without any message, until it waits for someone.
    const kinds: string[] = [];
    let task = await settled(a2a!.url, taskId);
    while (task.status.state === "TASK_STATE_INPUT_REQUIRED") {
      const input = task.metadata.iac_code.input as AnyJson;
      kinds.push(input.kind as string);
      const choice = input.kind === "permission" ? { decision: "allow_once" } : { selectedId: "0" };
      const reply = await rpc(a2a!.url, "SendMessage", {
        message: userMessage("", {
          taskId,
          contextId,
          parts: [{ mediaType: "application/json", data: { schemaVersion: 1, kind: input.kind,
            requestTaskId: taskId, inputId: input.inputId, toolUseId: input.toolUseId, ...choice } }],
        }),
      }); // prettier-ignore
      expect(reply.body.error, JSON.stringify(reply.body.error)).to.equal(undefined);
      task = await settled(a2a!.url, taskId);
    }
    expect(task.status.state).to.equal("TASK_STATE_COMPLETED");
    expect(kinds).to.include("candidate_selection");

    const journal = (await (
      await fetch(new URL(`iac-code/pipeline/state?taskId=${taskId}&afterSequence=0`, a2a!.url))
    ).json()) as { events: PipelineEnvelope[] };
    const types = journal.events.map((e) => e.eventType);
    expect(types).to.include("pipeline_resumed");
    expect(journal.events.map((e) => e.sequence)).to.deep.equal(journal.events.map((_e, i) => i + 1));
    // What was published before the kill is the start of the journal, unchanged.
    expect(journal.events.slice(0, before.length).map((e) => e.eventId)).to.deep.equal(
      before.map((e) => e.eventId),
    );
    expect(types.filter((t) => t === "candidate_started")).to.have.length(2);
    expect(types.filter((t) => t === "candidate_completed")).to.have.length(2);
    expect(types.at(-2)).to.equal("pipeline_completed");
    expect(ros.callsOf("CreateStack")).to.have.length(1);
  });

  it("a run whose turn brought its own credentials ends FAILED with the reason: they were never stored", async () => {
    const { taskId } = await killWhileEvaluating({
      alibaba_cloud_access_key_id: AK,
      alibaba_cloud_access_key_secret: SECRET,
    });
    const task = await taskOf(a2a!.url, taskId);
    expect(task.status.state).to.equal("TASK_STATE_FAILED");
    expect(task.status.message.parts[0].text).to.equal(
      "Task was interrupted by process exit and cannot be revived automatically.",
    );
    expect(JSON.stringify(task)).to.not.contain(SECRET);
  });
});
