// The selling pipeline over A2A, driven by the official @a2a-js/sdk client:
// activation per request (metadata.iac_code.runMode / pipelineName /
// candidatePresentation), the envelopes in metadata.iac_code.pipeline and
// pipelineBatch (sequence grows by one, every envelope matches its contract,
// the task state follows the envelope status), the candidate selection as an
// input request answered with a data part, completion as TASK_STATE_COMPLETED,
// GET /iac-code/pipeline/state, and an unknown pipeline refused up front.
import { expect } from "chai";
import { SendMessageRequest, TaskState, type StreamResponse } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  type Client,
} from "@a2a-js/sdk/client";
import { schemaIndex, violations } from "../../src/contract/index.js";
import type { PipelineEnvelope } from "../../src/runtime/seam.js";
import { removeTempDirs } from "../runtime/helpers.js";
import { startPipelineA2a, type PipelineA2a } from "./helpers.js";

type Meta = Record<string, unknown>;

function message(parts: unknown[], extra: Record<string, unknown> = {}): SendMessageRequest {
  return SendMessageRequest.fromJSON({
    message: { messageId: `m-${Math.random().toString(16).slice(2)}`, role: "ROLE_USER", parts, ...extra },
  });
}

/** metadata.iac_code of a stream event. */
function iacOf(event: StreamResponse): Meta | undefined {
  const p = event.payload;
  if (p?.$case === "statusUpdate") return p.value.metadata?.iac_code as Meta | undefined;
  if (p?.$case === "task") return p.value.metadata?.iac_code as Meta | undefined;
  return undefined;
}

function stateOf(event: StreamResponse): TaskState | undefined {
  return event.payload?.$case === "statusUpdate" ? event.payload.value.status?.state : undefined;
}

/** The envelopes of a stream event (single or batched). */
function envelopesOf(event: StreamResponse): PipelineEnvelope[] {
  if (event.payload?.$case !== "statusUpdate") return [];
  const iac = iacOf(event) ?? {};
  if (iac.pipeline) return [iac.pipeline as PipelineEnvelope];
  return (iac.pipelineBatch as { events?: PipelineEnvelope[] } | undefined)?.events ?? [];
}

const STATE_OF_STATUS: Record<string, TaskState> = {
  working: TaskState.TASK_STATE_WORKING,
  input_required: TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
};

describe("pipeline over A2A (@a2a-js/sdk client)", function () {
  this.timeout(60_000);
  let a2a: PipelineA2a;
  let client: Client;
  before(async () => {
    a2a = await startPipelineA2a({ file: { "auto-approve-permissions": true } });
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory()],
      }),
    );
    client = await factory.createFromUrl(a2a.url);
  });
  after(async () => {
    await a2a.close();
    await removeTempDirs();
  });

  const pipelineMeta = (extra: Meta = {}) => ({
    metadata: { iac_code: { cwd: a2a.workspace, runMode: "pipeline", ...extra } },
  });

  /** Streams a request until the turn ends or waits for input (that stream stays open: we leave it). */
  async function stream(request: SendMessageRequest): Promise<StreamResponse[]> {
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(request)) {
      events.push(event);
      const state = stateOf(event);
      if (state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_COMPLETED) break;
      if (state === TaskState.TASK_STATE_FAILED || state === TaskState.TASK_STATE_CANCELED) break;
    }
    return events;
  }

  it("runs the whole pipeline: envelopes in order, the selection as an input request, completion", async () => {
    const first = await stream(message([{ text: "Deploy a small web app" }], pipelineMeta()));
    const task = first[0].payload?.$case === "task" ? first[0].payload.value : undefined;
    expect(task?.id).to.be.a("string");
    const waiting = first.at(-1)!;
    expect(stateOf(waiting)).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
    const input = iacOf(waiting)!.input as Meta;
    expect(input).to.include({ kind: "candidate_selection", requestTaskId: task!.id, required: true });
    expect((input.options as Meta[]).map((o) => o.id)).to.deep.equal(["0", "1"]);
    expect(
      schemaIndex["a2a/input-request"].validate(input),
      JSON.stringify(violations(schemaIndex["a2a/input-request"].validate)),
    ).to.equal(true);

    const answer = await stream(
      message(
        [
          {
            mediaType: "application/json",
            data: {
              schemaVersion: 1,
              kind: "candidate_selection",
              requestTaskId: task!.id,
              inputId: input.inputId,
              toolUseId: input.toolUseId,
              selectedId: "1",
            },
          },
        ],
        { taskId: task!.id, contextId: task!.contextId },
      ),
    );
    const last = answer.at(-1)!;
    expect(stateOf(last)).to.equal(TaskState.TASK_STATE_COMPLETED);
    expect(envelopesOf(last).map((e) => e.eventType)).to.deep.equal([
      "pipeline_completed",
      "pipeline_handoff_ready",
    ]);
    expect(iacOf(last)!.pipelineBatch).to.include({
      schemaVersion: "1.0",
      extensionUri: "urn:iac-code:a2a:pipeline-events:v1",
    });

    const all = [...first, ...answer];
    const list = all.flatMap(envelopesOf);
    expect(list.map((e) => e.sequence)).to.deep.equal(list.map((_e, i) => i + 1));
    const validate = schemaIndex["a2a/pipeline-envelope"].validate;
    for (const e of list)
      expect(validate(e), `${e.eventType}: ${JSON.stringify(violations(validate))}`).to.equal(true);
    for (const event of all) {
      const envs = envelopesOf(event);
      if (envs.length)
        expect(stateOf(event), envs.at(-1)!.eventType).to.equal(STATE_OF_STATUS[envs.at(-1)!.status]);
      const meta = iacOf(event);
      if (meta && event.payload?.$case === "statusUpdate") {
        expect(
          schemaIndex["a2a/iac-code-event-metadata"].validate(meta),
          JSON.stringify(violations(schemaIndex["a2a/iac-code-event-metadata"].validate)),
        ).to.equal(true);
      }
    }
    for (const e of list) expect(e.taskId).to.equal(task!.id);
    const types = list.map((e) => e.eventType);
    expect(types).to.include.members([
      "candidate_started",
      "candidate_step_completed",
      "artifact_created",
      "stack_progress",
      "input_received",
      "candidate_selected",
    ]);
    expect(a2a.ros.callsOf("CreateStack")).to.have.length(1);

    // A client that reconnects asks for the state after its last sequence.
    const seen = list[20].sequence;
    const res = await fetch(
      new URL(`iac-code/pipeline/state?taskId=${task!.id}&afterSequence=${seen}`, a2a.url),
    );
    expect(res.status).to.equal(200);
    const state = (await res.json()) as { snapshot: Meta; events: PipelineEnvelope[] };
    expect(
      schemaIndex["a2a/pipeline-state"].validate(state),
      JSON.stringify(violations(schemaIndex["a2a/pipeline-state"].validate)),
    ).to.equal(true);
    expect(state.events.map((e) => e.eventId)).to.deep.equal(list.slice(20 + 1).map((e) => e.eventId));
    expect(state.snapshot).to.include({
      status: "completed",
      taskId: task!.id,
      lastSequence: list.at(-1)!.sequence,
    });
    const byContext = (await (
      await fetch(new URL(`iac-code/pipeline/state?contextId=${task!.contextId}`, a2a.url))
    ).json()) as { events: unknown[] };
    expect(byContext.events).to.deep.equal([]);

    // The context is normal chat again: the next message on it is an ordinary turn.
    const next = await stream(message([{ text: "thanks" }], { contextId: task!.contextId }));
    expect(next.flatMap(envelopesOf)).to.deep.equal([]);
    expect(stateOf(next.at(-1)!)).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it("rich-v1 options carry the cost items and diagrams", async () => {
    const first = await stream(
      message([{ text: "Deploy a small web app" }], pipelineMeta({ candidatePresentation: "rich-v1" })),
    );
    const input = iacOf(first.at(-1)!)!.input as { options: Meta[] };
    expect(input.options[1]).to.deep.include({ totalMonthlyCost: 12.5, currency: "CNY" });
    expect(input.options[1].costItems).to.have.length(2);
    expect(input.options[0].architectureDiagram).to.contain("graph TD");
  });

  it("CancelTask while the run waits: CANCELED, pipeline_canceled journaled, the context back to normal chat", async () => {
    const first = await stream(message([{ text: "Deploy a small web app" }], pipelineMeta()));
    const task = first[0].payload?.$case === "task" ? first[0].payload.value : undefined;
    const canceled = await client.cancelTask({ id: task!.id } as never);
    expect(canceled.status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
    const res = await fetch(new URL(`iac-code/pipeline/state?taskId=${task!.id}&afterSequence=0`, a2a.url));
    const state = (await res.json()) as { snapshot: Meta; events: PipelineEnvelope[] };
    expect(state.snapshot).to.include({ status: "canceled", outcome: "canceled" });
    expect(state.events.slice(-2).map((e) => [e.eventType, e.status])).to.deep.equal([
      ["pipeline_canceled", "canceled"],
      ["pipeline_handoff_ready", "canceled"],
    ]);
    const next = await stream(message([{ text: "thanks" }], { contextId: task!.contextId }));
    expect(next.flatMap(envelopesOf)).to.deep.equal([]);
  });

  it("a selection naming no option is refused as invalid params; the selection stays open for a right one", async () => {
    const first = await stream(message([{ text: "Deploy a small web app" }], pipelineMeta()));
    const task = first[0].payload?.$case === "task" ? first[0].payload.value : undefined;
    const input = iacOf(first.at(-1)!)!.input as Meta;
    expect(input.kind).to.equal("candidate_selection");
    const part = (selectedId: string) => ({
      mediaType: "application/json",
      data: {
        schemaVersion: 1,
        kind: "candidate_selection",
        requestTaskId: task!.id,
        inputId: input.inputId,
        toolUseId: input.toolUseId,
        selectedId,
      },
    });
    const answer = (selectedId: string) => ({
      message: {
        messageId: `m-${Math.random().toString(16).slice(2)}`,
        role: "ROLE_USER",
        taskId: task!.id,
        contextId: task!.contextId,
        parts: [part(selectedId)],
      },
    });
    const rpc = await fetch(a2a.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: answer("9") }),
    });
    const error = ((await rpc.json()) as { error: { code: number; message: string } }).error;
    expect(error.code).to.equal(-32602);
    expect(error.message).to.contain(`Unknown option 9 for input ${String(input.inputId)}`);
    const done = await stream(message([part("1")], { taskId: task!.id, contextId: task!.contextId }));
    expect(stateOf(done.at(-1)!)).to.equal(TaskState.TASK_STATE_COMPLETED);
  });

  it("refuses an unknown pipeline name before any task exists", async () => {
    const before = await client.listTasks({ pageSize: 100 } as never);
    let error: { name?: string; message?: string } | undefined;
    try {
      await client.sendMessage(message([{ text: "hello" }], pipelineMeta({ pipelineName: "buying" })));
    } catch (e) {
      error = e as typeof error;
    }
    // The SDK's name for JSON-RPC -32602 (InvalidParamsError).
    expect(error?.name).to.equal("RequestMalformedError");
    expect(error?.message).to.contain("Unknown pipeline 'buying'. Available pipelines: selling.");
    const after = await client.listTasks({ pageSize: 100 } as never);
    expect(after.tasks.length).to.equal(before.tasks.length);
  });

  it("refuses an unknown pipeline name whatever the run mode, on JSON-RPC and REST alike", async () => {
    const request = {
      message: {
        messageId: `m-${Math.random().toString(16).slice(2)}`,
        role: "ROLE_USER",
        parts: [{ text: "hello" }],
        metadata: { iac_code: { cwd: a2a.workspace, runMode: "normal", pipelineName: "buying" } },
      },
    };
    const headers = { "Content-Type": "application/json", "A2A-Version": "1.0" };
    const rpc = await fetch(a2a.url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: request }),
    });
    const error = ((await rpc.json()) as { error: { code: number; message: string } }).error;
    expect(error.code).to.equal(-32602);
    expect(error.message).to.contain("Unknown pipeline 'buying'. Available pipelines: selling.");
    const rest = await fetch(`${a2a.url}message:send`, {
      method: "POST",
      headers,
      body: JSON.stringify(request),
    });
    expect(rest.status).to.equal(400);
    expect(((await rest.json()) as { error: { message: string } }).error.message).to.contain(
      "Unknown pipeline 'buying'",
    );
  });

  it("cleanupOnly runs the pipeline's cleanup, never a model turn: the task ends with the summary", async () => {
    const events = await stream(
      message([{ text: "clean up" }], { metadata: { iac_code: { cwd: a2a.workspace, cleanupOnly: true } } }),
    );
    const last = events.at(-1)!;
    expect(stateOf(last)).to.equal(TaskState.TASK_STATE_COMPLETED);
    expect(iacOf(last)?.cleanupOnly).to.deep.include({
      requested: true,
      status: "completed",
      resourceCount: 0,
    });
    // No model turn: no agent text anywhere in the stream.
    const texts = events.flatMap((e) =>
      e.payload?.$case === "statusUpdate" ? (e.payload.value.status?.message?.parts ?? []) : [],
    );
    expect(texts).to.deep.equal([]);
  });

  it("GET /iac-code/pipeline/state refuses what it cannot answer, with the reason", async () => {
    const get = async (query: string) => {
      const res = await fetch(new URL(`iac-code/pipeline/state${query}`, a2a.url));
      return { status: res.status, body: (await res.json()) as Meta };
    };
    expect(await get("")).to.deep.equal({ status: 400, body: { error: "contextId or taskId is required" } });
    expect(await get("?contextId=x&afterSequence=-1")).to.deep.equal({
      status: 400,
      body: { error: "afterSequence must be a non-negative integer" },
    });
    expect(await get("?contextId=x&afterSequence=1e3")).to.deep.equal({
      status: 400,
      body: { error: "afterSequence must be a non-negative integer" },
    });
    expect(await get("?taskId=no-such-task")).to.deep.equal({
      status: 404,
      body: { error: "A2A task not found" },
    });
    expect(await get("?contextId=no-such-context")).to.deep.equal({
      status: 404,
      body: { error: "A2A context not found" },
    });
    const normal = await stream(
      message([{ text: "hello" }], { metadata: { iac_code: { cwd: a2a.workspace } } }),
    );
    const task = normal[0].payload?.$case === "task" ? normal[0].payload.value : undefined;
    expect(await get(`?taskId=${task!.id}`)).to.deep.equal({
      status: 404,
      body: { error: "A2A pipeline state not found" },
    });
    expect(await get(`?taskId=${task!.id}&contextId=other`)).to.deep.equal({
      status: 404,
      body: { error: "A2A task/context mismatch" },
    });
  });
});
