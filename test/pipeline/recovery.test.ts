// A pipeline that waits for the candidate selection survives its process:
// the run, its journal and its wait are on disk; a new process lists the
// wait, publishes it again (no duplicated event) and continues with the
// answer, or with a plain message naming a candidate. Also: loading errors
// name their path, unknown pipelines and modes are refused.
import { expect } from "chai";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { createAgentRuntime } from "../../src/runtime/index.js";
import { ConfigError } from "../../src/runtime/errors.js";
import { loadPipeline } from "../../src/runtime/pipeline/loader.js";
import type { RuntimeEvent } from "../../src/runtime/seam.js";
import { drive, ofType, removeTempDirs, silentLogger, tempDir, turn } from "../runtime/helpers.js";
import { envelopes, pipelineWorld, storyOf, type PipelineWorld } from "./helpers.js";

const allow = { kind: "permission" as const, decision: "allow_once" as const };

/** Runs a pipeline turn until it waits for the selection, then stops the process (the runtime). */
async function untilSelection(world: PipelineWorld): Promise<RuntimeEvent[]> {
  return turn(world.session, "Deploy a small web app", {
    overrides: { runMode: "pipeline" },
    answer: (request) => (request.kind === "permission" ? allow : undefined),
    onEvent: (event) => {
      if (event.type === "input_required" && event.request.kind === "candidate_selection")
        void world.runtime.close();
    },
  });
}

describe("pipeline engine: restart while waiting for the selection", function () {
  this.timeout(30_000);
  const worlds: PipelineWorld[] = [];
  afterEach(async () => {
    for (const w of worlds.splice(0)) await w.close();
    await removeTempDirs();
  });

  async function restart(first: PipelineWorld): Promise<PipelineWorld> {
    const second = await pipelineWorld({
      dir: first.dir,
      ros: first.ros,
      sessionId: first.session.sessionId,
    });
    worlds.push(second);
    return second;
  }

  it("publishes the same wait again and continues with its answer, numbering on", async () => {
    const first = await pipelineWorld();
    worlds.push(first);
    const before = envelopes(await untilSelection(first));
    const waiting = before.at(-1)!;
    expect(waiting.eventType).to.equal("input_required");
    const second = await restart(first);
    const state = await second.runtime.pipelineState!(second.session.sessionId);
    expect(state!.snapshot).to.include({ status: "waiting_input", lastSequence: waiting.sequence });
    const [pending] = second.session.pendingInputs();
    expect(pending).to.include({
      kind: "candidate_selection",
      inputId: (waiting.data as { inputId: string }).inputId,
    });

    const events = await drive(second.session.resumeTurn({}, new AbortController().signal), second.session, {
      answer: (request) =>
        request.kind === "candidate_selection" ? { kind: "candidate_selection", selectedId: "0" } : allow,
    });
    const republished = ofType(events, "input_required")[0];
    expect(republished.request.inputId).to.equal(pending.inputId);
    expect(republished.pipeline).to.equal(undefined);
    const after = envelopes(events);
    expect(after[0]).to.include({ eventType: "pipeline_resumed", sequence: waiting.sequence + 1 });
    const ids = new Set(before.map((e) => e.eventId));
    expect(after.filter((e) => ids.has(e.eventId))).to.deep.equal([]);
    expect(storyOf(after).slice(-2)).to.deep.equal(["pipeline_completed", "pipeline_handoff_ready"]);
  });

  it("takes a plain message naming a candidate as the choice, and asks again when it names none", async () => {
    const first = await pipelineWorld();
    worlds.push(first);
    const waited = envelopes(await untilSelection(first)).at(-1)!.data as { inputId: string };
    const second = await restart(first);
    const again: RuntimeEvent[] = [];
    const events = await drive(
      second.session.runTurn(
        { text: "the cheapest one please", images: [], overrides: {} },
        new AbortController().signal,
      ),
      second.session,
      {
        onEvent: (event) => void (event.type === "input_required" ? again.push(event) : undefined),
        answer: (request) =>
          request.kind === "candidate_selection" ? { kind: "candidate_selection", freeText: "2" } : allow,
      },
    );
    const [asked] = ofType(again, "input_required");
    expect(asked.request.prompt).to.match(/^That answer names none of the candidates/);
    expect(asked.request.inputId).to.be.a("string").and.not.equal(waited.inputId);
    const received = envelopes(events).find((e) => e.eventType === "input_received")!;
    expect(received.data).to.include({ selectedValue: "1" });
    expect(first.ros.callsOf("CreateStack")[0].params.TemplateBody).to.contain("VSwitchB");
  });
});

describe("pipeline engine: definitions and choices that are refused", () => {
  afterEach(removeTempDirs);

  it("names the path of every problem of a pipeline.yaml", async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, "prompts"));
    await writeFile(
      path.join(dir, "pipeline.yaml"),
      [
        "name: broken",
        "steps:",
        "  - id: first",
        "    conclusion_field: one",
        "    forward: nowhere",
        "    prompt: prompts/missing.md",
        "  - id: second",
        "    conclusion_field: two",
        "    context_fields: [unknown_field]",
      ].join("\n"),
    );
    expect(() => loadPipeline(dir))
      .to.throw(ConfigError)
      .with.property("message")
      .that.contains("/steps/0/forward: unknown step nowhere")
      .and.contains("/steps/0/prompt: prompt file prompts/missing.md not found")
      .and.contains("/steps/1/context_fields/0: unknown field unknown_field");
    await writeFile(path.join(dir, "pipeline.yaml"), "name: Bad Name\nsteps: []\n");
    expect(() => loadPipeline(dir)).to.throw(
      /does not match the pipeline schema: \/name must match pattern.*\/steps must NOT have fewer than 1 items/,
    );
  });

  it("refuses an unknown pipeline name and an unknown mode", async () => {
    const dir = await tempDir();
    const options = { configDir: dir, env: { HOME: dir }, logger: silentLogger() };
    const runtime = await createAgentRuntime(options);
    try {
      expect(runtime.checkTurn!({ pipelineName: "selling" })).to.equal(undefined);
      expect(runtime.checkTurn!({ runMode: "pipeline", pipelineName: "nope" })).to.equal(
        "Unknown pipeline 'nope'. Available pipelines: selling.",
      );
      expect(runtime.info()).to.include({ mode: "normal", pipelineName: "selling" });
    } finally {
      await runtime.close();
    }
    await createAgentRuntime({ ...options, env: { HOME: dir, IAC_CODE_PIPELINE_NAME: "nope" } }).then(
      () => expect.fail("accepted"),
      (error: Error) =>
        expect(error.message).to.match(
          /^Unknown pipeline 'nope' \(IAC_CODE_PIPELINE_NAME \/ pipeline-name\)/,
        ),
    );
    await createAgentRuntime({ ...options, mode: "batch" }).then(
      () => expect.fail("accepted"),
      (error: Error) => expect(error).to.be.instanceOf(ConfigError),
    );
    const piped = await createAgentRuntime({ ...options, env: { HOME: dir, IAC_CODE_MODE: "pipeline" } });
    expect(piped.info().mode).to.equal("pipeline");
    await piped.close();
  });
});
