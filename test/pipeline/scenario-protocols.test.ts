// The demo scenarios that fail on purpose, over every door: A2A streaming on
// each binding (JSON-RPC, HTTP+JSON, gRPC, through @a2a-js/sdk) and AG-UI
// (@ag-ui/client, every run through the strict stream verifier). A demo-mode
// server in this process (nothing configured: the bundled script and the
// simulated ROS endpoint). For each pair, the journal
// (GET /iac-code/pipeline/state?afterSequence=0) against what the client
// received: 0 missing, 0 duplicated (over AG-UI, of the types it shows as
// CUSTOM); then the outcome and the texts the user reads.
import { expect } from "chai";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { TaskState, type StreamResponse } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { HttpAgent, type Interrupt } from "@ag-ui/client";
import type { RunningA2aServer } from "../../src/a2a/server.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { PIPELINE_CUSTOM_TYPES } from "../../src/agui/run/pipeline-steps.js";
import type { PipelineEnvelope } from "../../src/runtime/seam.js";
import { BINDINGS, sdkClient, type Binding } from "../a2a-bindings/fixtures/server.js";
import { agentRun } from "../agui/harness.js";
import type { WireEvent } from "../agui/helpers.js";
import { adapterSettings } from "../e2e/helpers.js";
import { envelopesOf, iacOf, request, stateOf, type Meta } from "./sdk-stream.js";
import { removeTempDirs, tempDir } from "../runtime/helpers.js";
import { answerFor, type ResumeEntry } from "./answers.js";
import { startDemoA2a } from "./helpers.js";

interface Scenario {
  tag: string;
  /** The candidates chosen at each selection, in order (default: the first option each time). */
  choices?: string[];
  /** Over A2A, "stop" is sent to the running task when this event is seen (AG-UI has no such message). */
  stopAt?: string;
  end: "completed" | "failed";
  /** Types the journal holds, in this order (others in between). */
  story: string[];
  /** What the user reads (the journal's envelopes). */
  texts(journal: PipelineEnvelope[]): void;
}

const data = (e: PipelineEnvelope | undefined) => (e?.data ?? {}) as Meta;
const all = (journal: PipelineEnvelope[], type: string) => journal.filter((e) => e.eventType === type);
const selections = (journal: PipelineEnvelope[]) =>
  all(journal, "input_required").filter((e) => data(e).kind === "candidate_selection");

const SCENARIOS: Scenario[] = [
  {
    tag: "[demo:deploy-fails]",
    choices: ["1", "0"],
    end: "completed",
    story: ["stack_current_changed", "rollback_completed", "cleanup_started", "cleanup_progress",
      "cleanup_completed", "input_required", "stack_current_changed", "pipeline_completed"], // prettier-ignore
    texts(journal) {
      const failed = all(journal, "stack_current_changed").map((e) => data(e).stackStatus);
      expect(failed).to.deep.equal(["CREATE_FAILED", "CREATE_COMPLETE"]);
      expect(data(selections(journal)[1]).prompt).to.match(
        /^Choose again: The stack \S+ ended CREATE_FAILED: .*QuotaExceeded/,
      );
    },
  },
  {
    tag: "[demo:cleanup-fails]",
    choices: ["1"],
    end: "failed",
    story: ["rollback_completed", "cleanup_started", "cleanup_failed", "step_failed", "pipeline_completed"],
    texts(journal) {
      expect(String(data(all(journal, "cleanup_failed")[0]).lastError)).to.contain("deletion protection");
      expect(String(data(all(journal, "step_failed")[0]).error)).to.not.equal("");
      const reason = String(data(all(journal, "pipeline_completed")[0]).reason);
      expect(reason).to.contain("The selling pipeline failed.");
      expect(reason).to.contain("metadata.iac_code.cleanupOnly: true");
    },
  },
  {
    tag: "[demo:candidate-fails]",
    end: "completed",
    story: ["candidate_step_failed", "candidate_failed", "input_required", "pipeline_completed"],
    texts(journal) {
      const [selection] = selections(journal);
      expect((data(selection).options as unknown[]).length).to.equal(1);
      expect(String(data(all(journal, "candidate_failed")[0]).error)).to.contain("ros_validate_template");
    },
  },
  {
    tag: "[demo:slow-deploy]",
    stopAt: "stack_instances_progress",
    end: "completed",
    story: ["stack_instances_progress", "pipeline_completed"],
    texts(journal) {
      expect(all(journal, "tool_progress")).to.not.deep.equal([]);
    },
  },
  {
    tag: "[demo:long-context]",
    end: "completed",
    story: ["context_compaction_started", "context_compacted", "pipeline_completed"],
    texts(journal) {
      expect(data(all(journal, "context_compacted")[0]).compactedTokens).to.be.a("number");
    },
  },
];

function expectInOrder(journal: PipelineEnvelope[], story: string[]): void {
  const types = journal.map((e) => e.eventType);
  let at = 0;
  for (const type of story) {
    const found = types.indexOf(type, at);
    expect(found, `${type} after position ${at} in ${types.join(" ")}`).to.be.greaterThan(-1);
    at = found + 1;
  }
}

/** The data part answering an A2A input request the way the scenario wants. */
function a2aAnswer(input: Meta, taskId: string, choose: () => string | undefined): Meta {
  const base = {
    schemaVersion: 1,
    kind: input.kind,
    requestTaskId: taskId,
    inputId: input.inputId,
    toolUseId: input.toolUseId,
  };
  const options = (input.options ?? []) as Array<{ id: string; label: string }>;
  switch (input.kind) {
    case "permission":
      return { ...base, decision: "allow_once" };
    case "cloud_resource_selection": {
      const selector = input.selector as { id: string; source: Meta };
      return { ...base, status: "selected", selectorId: selector.id, value: options[0].id, label: options[0].label,
        source: selector.source }; // prettier-ignore
    }
    case "deployment_confirmation":
      return { ...base, action: "confirm" };
    case "candidate_selection":
      return { ...base, selectedId: choose() ?? options[0].id };
    default:
      return { ...base, selectedId: options[0].id };
  }
}

describe("pipeline demo scenarios over A2A streaming and AG-UI", function () {
  this.timeout(120_000);
  let dir: string;
  let demo: Awaited<ReturnType<typeof startDemoA2a>>;
  let a2a: RunningA2aServer;
  let agui: AguiServer;
  let n = 0;
  const workspace = () => {
    const cwd = path.join(dir, `ws-${++n}`);
    mkdirSync(cwd, { recursive: true });
    return cwd;
  };

  before(async () => {
    dir = await tempDir("iac-scenario-doors-");
    demo = await startDemoA2a(dir);
    a2a = demo.server;
    agui = await startAguiServer(adapterSettings({ url: a2a.url, dir }));
  });
  after(async () => {
    await agui?.close();
    await demo?.close();
    await removeTempDirs();
  });

  async function journal(taskId: string): Promise<PipelineEnvelope[]> {
    const res = await fetch(new URL(`iac-code/pipeline/state?taskId=${taskId}&afterSequence=0`, a2a.url));
    expect(res.status).to.equal(200);
    return ((await res.json()) as { events: PipelineEnvelope[] }).events;
  }

  /**
   * One streaming call carries the whole pipeline turn: each input request is
   * answered with a unary SendMessage while the stream goes on.
   */
  async function overA2a(binding: Binding, s: Scenario) {
    const client: Client = await sdkClient(a2a.url, binding);
    const choices = [...(s.choices ?? [])];
    const meta = { metadata: { iac_code: { cwd: workspace(), runMode: "pipeline" } } };
    const sent: Array<Promise<unknown>> = [];
    const received: StreamResponse[] = [];
    let task: { id: string; contextId: string } | undefined;
    let stopped = false;
    for await (const event of client.sendMessageStream(
      request([{ text: `I need a website ${s.tag}` }], meta),
    )) {
      received.push(event);
      if (event.payload?.$case === "task") task = event.payload.value;
      const types = envelopesOf(event).map((e) => e.eventType);
      if (s.stopAt && !stopped && types.includes(s.stopAt)) {
        stopped = true;
        sent.push(
          client.sendMessage(request([{ text: "stop" }], { taskId: task!.id, contextId: task!.contextId })),
        );
      }
      const state = stateOf(event);
      const input = iacOf(event).input as Meta | undefined;
      if (state === TaskState.TASK_STATE_INPUT_REQUIRED && input) {
        const answer = a2aAnswer(input, task!.id, () => choices.shift());
        const parts = [{ mediaType: "application/json", data: answer }];
        sent.push(client.sendMessage(request(parts, { taskId: task!.id, contextId: task!.contextId })));
      }
      if (state === TaskState.TASK_STATE_COMPLETED || state === TaskState.TASK_STATE_FAILED) break;
    }
    await Promise.all(sent);
    return { task: task!, received, last: stateOf(received.at(-1)!) };
  }

  for (const s of SCENARIOS) {
    describe(s.tag, () => {
      for (const binding of BINDINGS) {
        it(`${binding}: every journal event once, ${s.end}, what the user reads`, async () => {
          const { task, received, last } = await overA2a(binding, s);
          expect(last).to.equal(
            s.end === "completed" ? TaskState.TASK_STATE_COMPLETED : TaskState.TASK_STATE_FAILED,
          );
          const events = await journal(task.id);
          const ids = received.flatMap(envelopesOf).map((e) => e.eventId);
          expect(
            ids.filter((id, i) => ids.indexOf(id) !== i),
            "duplicated",
          ).to.deep.equal([]);
          expect(
            events.map((e) => e.eventId).filter((id) => !ids.includes(id)),
            "missing",
          ).to.deep.equal([]);
          expectInOrder(events, s.story);
          if (s.stopAt)
            expectInOrder(events, ["interrupt_received", "interrupt_classified", "input_required"]);
          s.texts(events);
        });
      }

      it("AG-UI: every shown journal event once, strict streams, the outcome, what the user reads", async () => {
        const cwd = workspace();
        const choices = [...(s.choices ?? [])];
        const props = {
          iacCode: { schemaVersion: 1, rosInvocationId: `inv-${n}`, cwd, runMode: "pipeline" },
        };
        const agent = new HttpAgent({
          url: agui.url,
          threadId: `thread-${n}`,
          initialMessages: [{ id: "u1", role: "user", content: `I need a website ${s.tag}` }],
        });
        const runs: WireEvent[][] = [];
        let resume: ResumeEntry[] | undefined;
        let taskId = "";
        for (let i = 1; i <= 20; i++) {
          const run = await agentRun(agent, {
            runId: `run-${n}-${i}`,
            forwardedProps: props,
            ...(resume ? { resume } : {}),
          });
          expect(run.warnings).to.deep.equal([]);
          runs.push(run.events);
          const session = run.events.find((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1");
          if (session) taskId = (session.value as { taskId: string }).taskId;
          const end = run.events.at(-1)!;
          if (end.type !== "RUN_FINISHED") break;
          const outcome = end.outcome as { type: string; interrupts?: Interrupt[] };
          if (outcome.type !== "interrupt") break;
          resume = outcome.interrupts!.map((it) => {
            const kind = (it.metadata as { kind?: string }).kind;
            return answerFor(it, kind === "candidate_selection" ? choices.shift() : undefined);
          });
        }
        const end = runs.at(-1)!.at(-1)!;
        if (s.end === "completed")
          expect(end).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
        else expect(end).to.deep.include({ type: "RUN_ERROR", code: "A2A_EXECUTION_FAILED" });
        const shown = runs
          .flat()
          .filter((e) => e.type === "CUSTOM" && e.name === "iac-code.pipeline.v1")
          .map((e) => e.value as PipelineEnvelope);
        const ids = shown.map((e) => e.eventId);
        expect(
          ids.filter((id, i) => ids.indexOf(id) !== i),
          "duplicated",
        ).to.deep.equal([]);
        const events = await journal(taskId);
        const expected = events.filter((e) => PIPELINE_CUSTOM_TYPES.has(e.eventType)).map((e) => e.eventId);
        expect(
          expected.filter((id) => !ids.includes(id)),
          "missing",
        ).to.deep.equal([]);
        expect(
          ids.filter((id) => !expected.includes(id)),
          "not in the journal",
        ).to.deep.equal([]);
        expectInOrder(events, s.story);
        s.texts(events);
      });
    });
  }
});
