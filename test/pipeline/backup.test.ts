// Session backups in pipeline mode (a2a-iaccode.md §12.3, iaccode-runtime.md
// "Backups"): the selling pipeline over A2A (official @a2a-js/sdk client) with
// IAC_CODE_CONFIG_BACKUP_DIR. The pipeline's end and handoff are published once
// the backup holds them, each followed by backup_committed naming it; with the
// backup path unwritable the selection wait says backupBlocked and the run
// journals backup_blocked, the end becomes INPUT_REQUIRED with backup_blocked;
// writable again, the next turn commits the context with every task. Every
// envelope matches its contract and the journal's sequences have no gap.
import { expect } from "chai";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { TaskState, type StreamResponse } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  type Client,
} from "@a2a-js/sdk/client";
import { schemaIndex, violations } from "../../src/contract/index.js";
import type { PipelineEnvelope } from "../../src/runtime/seam.js";
import { removeTempDirs, tempDir } from "../runtime/helpers.js";
import { startPipelineA2a, type PipelineA2a } from "./helpers.js";
import { envelopesOf, iacOf, request, stateOf, type Meta } from "./sdk-stream.js";

const BLOCKED_TEXT = "Session backup failed. Retry after the backup path is available.";

describe("pipeline over A2A with session backups", function () {
  this.timeout(60_000);
  let a2a: PipelineA2a;
  let client: Client;
  let backup: string;

  before(async () => {
    const dir = await tempDir("iac-pipeline-backup-");
    backup = path.join(dir, "backup");
    a2a = await startPipelineA2a({
      dir,
      file: { "auto-approve-permissions": true },
      env: { IAC_CODE_CONFIG_BACKUP_DIR: backup },
      sharedStore: true,
    });
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

  /** Streams a request until the turn ends or waits for input. */
  async function stream(parts: unknown[], extra: Meta): Promise<StreamResponse[]> {
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(request(parts, extra))) {
      events.push(event);
      const state = stateOf(event);
      if (
        state !== undefined &&
        state !== TaskState.TASK_STATE_WORKING &&
        state !== TaskState.TASK_STATE_SUBMITTED
      )
        break;
    }
    return events;
  }

  const pipelineMeta = () => ({ metadata: { iac_code: { cwd: a2a.workspace, runMode: "pipeline" } } });

  function taskOf(events: StreamResponse[]): { id: string; contextId: string } {
    const first = events[0].payload;
    if (first?.$case !== "task") throw new Error("no task first");
    return first.value;
  }

  function selection(task: { id: string; contextId: string }, input: Meta): Promise<StreamResponse[]> {
    const data = {
      schemaVersion: 1,
      kind: "candidate_selection",
      requestTaskId: task.id,
      inputId: input.inputId,
      toolUseId: input.toolUseId,
      selectedId: "1",
    };
    return stream([{ mediaType: "application/json", data }], { taskId: task.id, contextId: task.contextId });
  }

  function expectValid(list: PipelineEnvelope[]): void {
    const validate = schemaIndex["a2a/pipeline-envelope"].validate;
    for (const e of list)
      expect(validate(e), `${e.eventType}: ${JSON.stringify(violations(validate))}`).to.equal(true);
  }

  async function journal(taskId: string): Promise<PipelineEnvelope[]> {
    const res = await fetch(new URL(`iac-code/pipeline/state?taskId=${taskId}&afterSequence=0`, a2a.url));
    expect(res.status).to.equal(200);
    return ((await res.json()) as { events: PipelineEnvelope[] }).events;
  }

  it("backup_committed after the end and the handoff; an unwritable backup blocks the wait and the end; recovery", async () => {
    const first = await stream([{ text: "Deploy a small web app" }], pipelineMeta());
    const task = taskOf(first);
    const waiting = first.at(-1)!;
    expect(stateOf(waiting)).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(iacOf(waiting)).to.not.have.property("backupBlocked");
    const done = await selection(task, iacOf(waiting).input as Meta);
    const end = done.at(-1)!;
    expect(stateOf(end)).to.equal(TaskState.TASK_STATE_COMPLETED);
    const ended = envelopesOf(end);
    expect(ended.map((e) => e.eventType)).to.deep.equal([
      "pipeline_completed",
      "pipeline_handoff_ready",
      "backup_committed",
      "backup_committed",
    ]);
    expect(ended[2].data).to.deep.equal({
      committedEventId: ended[0].eventId,
      committedEventType: "pipeline_completed",
      committedSequence: ended[0].sequence,
    });
    expect(ended[3].data).to.deep.include({ committedEventType: "pipeline_handoff_ready" });
    expectValid(ended);
    // The backup was written before the end was published: it holds the run up to the handoff.
    const file = JSON.parse(
      readFileSync(path.join(backup, "contexts", `${task.contextId}.json`), "utf8"),
    ) as Meta;
    const rows = JSON.stringify(file.runtime);
    expect(rows).to.include(ended[1].eventId);
    expect(rows).to.not.include(ended[2].eventId);

    // The backup path becomes unwritable; a second run on the same context.
    rmSync(backup, { recursive: true });
    writeFileSync(backup, "not a directory\n");
    const second = await stream([{ text: "Deploy another web app" }], {
      contextId: task.contextId,
      ...pipelineMeta(),
    });
    const task2 = taskOf(second);
    const wait = second.at(-1)!;
    expect(stateOf(wait)).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(iacOf(wait).backupBlocked).to.include({ reason: "input_required", recoverable: true });
    expect(iacOf(wait).input).to.include({ kind: "candidate_selection" });

    const blocked = await selection(task2, iacOf(wait).input as Meta);
    const last = blocked.at(-1)!;
    expect(stateOf(last)).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
    const update = last.payload?.$case === "statusUpdate" ? last.payload.value : undefined;
    expect(JSON.stringify(update?.status?.message?.parts[0])).to.include(BLOCKED_TEXT);
    expect(iacOf(last).backupBlocked).to.include({
      reason: "terminal",
      blockedTerminalState: "completed",
      recoverable: true,
    });
    const notices = envelopesOf(last);
    expect(notices.map((e) => e.eventType)).to.deep.equal([
      "pipeline_completed",
      "pipeline_handoff_ready",
      "backup_blocked",
    ]);
    expect(notices[2]).to.deep.include({ status: "input_required" });
    expect(notices[2].data).to.include({ reason: "terminal", recoverable: true });
    expectValid(notices);

    // The journal holds both backup_blocked notices, numbered without a gap.
    const events = await journal(task2.id);
    expect(events.filter((e) => e.eventType === "backup_blocked").map((e) => e.data.reason)).to.deep.equal([
      "input_required",
      "terminal",
    ]);
    expectValid(events);
    const sequences = events.map((e) => e.sequence);
    expect(sequences).to.deep.equal(sequences.map((_s, i) => sequences[0] + i));

    // Writable again: the next (normal) turn on the context commits every task to the backup.
    rmSync(backup);
    const next = await stream([{ text: "thanks" }], { contextId: task.contextId });
    expect(stateOf(next.at(-1)!)).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(iacOf(next.at(-1)!)).to.not.have.property("backupBlocked");
    const after = JSON.parse(
      readFileSync(path.join(backup, "contexts", `${task.contextId}.json`), "utf8"),
    ) as { tasks: Array<{ id: string }> };
    expect(after.tasks.map((t) => t.id)).to.include.members([task.id, task2.id, taskOf(next).id]);
  });
});
