/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- tests read free-form A2A and AG-UI JSON through `any` */
// The cloud resource selector and the deployment confirmation over AG-UI
// (agui-iaccode.md §5, checklist items 64-75), through the real adapter and
// the real A2A server, the fixture runtime asking these inputs. Our wire sends
// every answer as the A2A answer data part (not the reference's text prompts):
// the tests read what A2A received from the task's history. Where a stream must
// end early, a loopback proxy between adapter and A2A ends it as a dropped
// connection would. Every AG-UI stream passes the contract, @ag-ui/client and
// our strict verifier across the thread's runs.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { HttpAgent } from "@ag-ui/client";
import { agentRun, post, runInput, startHarness, type Harness } from "./harness.js";
import { expectValidStream, types, type WireEvent } from "./helpers.js";
import { A2aCutProxy, isStatusUpdate, type CutRule, type Frame } from "./fixtures/a2a-cut-proxy.js";
import { StructuredScript } from "./fixtures/structured-inputs.js";
import { SELECTOR_PROFILES, selectorProfile } from "../../src/agui/run/selector-profiles.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- free-form JSON read by assertions
type Json = Record<string, any>;

const SELECTION_SCHEMA = {
  oneOf: [
    {
      type: "object",
      properties: { value: { type: "string", minLength: 1 }, label: { type: "string" } },
      required: ["value"],
      additionalProperties: false,
    },
    {
      type: "object",
      properties: { freeText: { type: "string", minLength: 1 } },
      required: ["freeText"],
      additionalProperties: false,
    },
  ],
};
const VPC_SOURCE = { provider: "aliyun", product: "vpc", action: "DescribeVpcs", regionId: "cn-hangzhou" };

describe("AG-UI cloud resource selector and deployment confirmation (§10 items 64-75)", function () {
  let h: Harness;
  let proxy: A2aCutProxy;
  let script: StructuredScript;
  let seq = 0;

  /** The adapter (again) in front of the proxy, on the same state dir. */
  async function adapterViaProxy(): Promise<void> {
    await h.agui.close();
    await h.restartAdapter({ a2aUrl: proxy.url });
  }

  before(async () => {
    h = await startHarness();
    proxy = await A2aCutProxy.start();
    proxy.target = h.a2a.url;
    await adapterViaProxy();
    script = new StructuredScript(h.runtime);
  });
  after(async () => {
    await h.close();
    await proxy.close();
  });
  beforeEach(() => {
    proxy.rules.length = 0;
    proxy.onFrame = undefined;
    script.arm();
    h.runtime.refuseAnswers = 0;
  });

  const fp = () => ({ iacCode: { schemaVersion: 1, rosInvocationId: "invocation-1", cwd: h.workspace } });

  /** One AG-UI thread of the test: its first run asks what the directives say. */
  class Thread {
    readonly id = `sc-thread-${++seq}`;
    private runs = 0;
    agent: HttpAgent;
    constructor(directives: string) {
      this.agent = new HttpAgent({
        url: h.url,
        threadId: this.id,
        initialMessages: [
          { id: `u-${this.id}`, role: "user", content: `[[script:structured]] ${directives}` },
        ],
      });
    }
    /** A run through @ag-ui/client (verified). */
    async run(resume?: unknown[]): Promise<WireEvent[]> {
      const { events } = await agentRun(this.agent, {
        runId: `${this.id}-run-${++this.runs}`,
        forwardedProps: fp(),
        ...(resume ? { resume: resume as never } : {}),
      });
      return events;
    }
    /** A resume by raw POST (verified), for the adapter of the moment. */
    async post(resume: unknown[]): Promise<WireEvent[]> {
      const r = await post(
        h.url,
        runInput(h, { threadId: this.id, runId: `${this.id}-run-${++this.runs}`, resume }),
      );
      expect(r.status, r.raw).to.equal(200);
      await expectValidStream(r.events);
      return r.events;
    }
    /** After an adapter restart, the client talks to the new one. */
    reconnect(): void {
      this.agent = new HttpAgent({ url: h.url, threadId: this.id });
    }
    async doc(): Promise<Json> {
      return (await h.store.load(this.id)) as unknown as Json;
    }
    /** The thread's file as written. */
    file(): Json {
      return JSON.parse(readFileSync(h.store.fileFor(this.id), "utf8")) as Json;
    }
    async taskId(): Promise<string> {
      const ex = (await this.doc()).execution;
      return (ex.taskId ?? ex.lastTaskId) as string;
    }
    async pending(): Promise<string[]> {
      return Object.keys((await this.doc()).execution.pending);
    }
  }

  function interruptsOf(events: WireEvent[]): Json[] {
    const last = events.at(-1)!;
    expect(last.type, JSON.stringify(last)).to.equal("RUN_FINISHED");
    const outcome = last.outcome as Json;
    expect(outcome.type).to.equal("interrupt");
    return outcome.interrupts as Json[];
  }

  function expectSuccess(events: WireEvent[]): void {
    expect(events.at(-1), JSON.stringify(events.at(-1))).to.deep.include({
      type: "RUN_FINISHED",
      outcome: { type: "success" },
    });
  }

  function expectRunError(events: WireEvent[], code: string, message?: string): void {
    const last = events.at(-1)!;
    expect(last, JSON.stringify(last)).to.include({ type: "RUN_ERROR", code });
    if (message !== undefined) expect(last.message).to.equal(message);
    expect(types(events)).to.not.include("RUN_FINISHED");
  }

  const toolResults = (events: WireEvent[], toolCallId: string) =>
    events.filter((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === toolCallId);

  const sessionEvents = (events: WireEvent[]) =>
    events.filter((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1").map((e) => e.value as Json);

  /** The task as the A2A server holds it (straight to A2A, not through the proxy). */
  async function a2aTask(taskId: string): Promise<Json> {
    const res = await fetch(h.a2a.url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "A2A-Version": "1.0",
        Authorization: "Bearer a2a-secret-token",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "GetTask",
        params: { id: taskId, historyLength: 100 },
      }),
    });
    return ((await res.json()) as Json).result as Json;
  }

  /** The answer data parts A2A received on a task, in order (optionally of one kind). */
  async function received(taskId: string, kind?: string): Promise<Json[]> {
    const task = await a2aTask(taskId);
    const parts: Json[] = (task.history ?? [])
      .filter((m: Json) => m.role === "ROLE_USER")
      .flatMap((m: Json) => m.parts ?? [])
      .filter((p: Json) => p.data && typeof p.data.kind === "string")
      .map((p: Json) => p.data);
    return kind ? parts.filter((d) => d.kind === kind) : parts;
  }

  const cancels = (taskId: string) => proxy.callsFor("CancelTask", taskId).length;
  const sends = (taskId: string) => proxy.callsFor("SendStreamingMessage", taskId).length;

  /** The interrupt of a fresh thread's first run. */
  async function interrupted(
    directives: string,
  ): Promise<{ t: Thread; interrupt: Json; events: WireEvent[] }> {
    const t = new Thread(directives);
    const events = await t.run();
    const interrupts = interruptsOf(events);
    expect(interrupts).to.have.length(1);
    return { t, interrupt: interrupts[0], events };
  }

  describe("item 64: the resource selector's interrupt and its three answers", () => {
    it("projects selector, schema, message and tool call; the thread keeps the selector verbatim", async () => {
      const { t, interrupt, events } = await interrupted("[[selector]]");
      expect(interrupt).to.deep.include({
        id: "selector-1",
        reason: "input_required",
        message: "Which resource should VpcId use?",
        toolCallId: "select-1",
        responseSchema: SELECTION_SCHEMA,
      });
      expect(interrupt.metadata).to.deep.include({
        kind: "cloud_resource_selection",
        toolUseId: "select-1",
        selector: { id: "vpc.vpc", parameter: "VpcId", resourceType: "ALIYUN::ECS::VPC", source: VPC_SOURCE },
        standardOptions: [
          { id: "vpc-bp1demo0001", title: "demo-vpc (192.168.0.0/16)" },
          { id: "vpc-bp1demo0002", title: "staging-vpc (10.0.0.0/16)" },
        ],
      });
      expect(types(events)).to.include.members(["TOOL_CALL_START", "TOOL_CALL_END"]);
      const kept = t.file().execution.pending["selector-1"];
      expect(kept.value.selector).to.deep.equal(interrupt.metadata.selector);
      expect(kept.toolCallShown).to.equal(true);
    });

    const answers: Array<[string, Json, Json, string | undefined]> = [
      [
        "{value, label}",
        { status: "resolved", payload: { value: "vpc-bp1demo0002", label: "staging-vpc" } },
        { status: "selected", selectorId: "vpc.vpc", value: "vpc-bp1demo0002", label: "staging-vpc", source: VPC_SOURCE },
        "staging-vpc",
      ],
      [
        "{freeText}",
        { status: "resolved", payload: { freeText: "vpc-typedbyhand9" } },
        { status: "selected", selectorId: "vpc.vpc", value: "vpc-typedbyhand9", label: "vpc-typedbyhand9", source: VPC_SOURCE },
        "vpc-typedbyhand9",
      ],
      ["cancelled {optionsEmpty: true}", { status: "cancelled", payload: { optionsEmpty: true } }, { status: "canceled", optionsEmpty: true }, undefined],
      ["cancelled without payload", { status: "cancelled" }, { status: "canceled" }, undefined],
    ]; // prettier-ignore
    for (const [name, entry, sent, label] of answers) {
      it(`${name}: A2A gets the structured answer, the turn goes on, no cancel`, async () => {
        const { t } = await interrupted("[[selector]]");
        const taskId = await t.taskId();
        const events = await t.run([{ interruptId: "selector-1", ...entry }]);
        expectSuccess(events);
        expect(await received(taskId, "cloud_resource_selection")).to.deep.equal([
          {
            schemaVersion: 1,
            kind: "cloud_resource_selection",
            requestTaskId: taskId,
            contextId: (await t.doc()).contextId,
            inputId: "selector-1",
            toolUseId: "select-1",
            ...sent,
          },
        ]);
        const results = toolResults(events, "select-1");
        expect(results.map((e) => e.content)).to.deep.equal(label === undefined ? [] : [label]);
        expect(cancels(taskId)).to.equal(0);
        expect(proxy.callsFor("SubscribeToTask", taskId)).to.have.length(0);
        expect(await t.pending()).to.deep.equal([]);
        expect((await a2aTask(taskId)).status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
      });
    }

    it("a selector asked without a tool call the client saw has no toolCallId and gets no TOOL_CALL_RESULT", async () => {
      const { t, interrupt } = await interrupted("[[selector]] [[notool]]");
      expect(interrupt).to.not.have.property("toolCallId");
      expect(t.file().execution.pending["selector-1"].toolCallShown).to.equal(false);
      const events = await t.run([
        { interruptId: "selector-1", status: "resolved", payload: { value: "vpc-bp1demo0001" } },
      ]);
      expectSuccess(events);
      expect(toolResults(events, "select-1")).to.deep.equal([]);
    });
  });

  describe("item 65: continuation after the selector's answer", () => {
    /** Where the answer's stream ends: after inputReceived (working), after the snapshot, or on a stale input-required. */
    const boundaries: Array<[string, (taskId: string) => CutRule]> = [
      [
        "working",
        () => ({ method: "SendStreamingMessage", after: (f) => isStatusUpdate(f, "TASK_STATE_WORKING") }),
      ],
      [
        "consumed input (task snapshot)",
        () => ({ method: "SendStreamingMessage", after: (_f, i) => i === 0 }),
      ],
      [
        "consumed input (status update)",
        (taskId) => ({
          method: "SendStreamingMessage",
          after: (_f, i) => i === 0,
          replay: [staleInterrupt(taskId)],
        }),
      ],
    ];
    const continuations = ["input", "completed", "failed", "eof"] as const;

    for (const [boundary, rule] of boundaries) {
      for (const next of continuations) {
        it(`send stream ends at ${boundary}, continuation ${next}: one subscribe, one answer`, async () => {
          const then = next === "input" ? "[[then:input]]" : next === "failed" ? "[[then:fail]]" : "";
          const { t } = await interrupted(`[[selector]] [[hold]] ${then}`);
          const taskId = await t.taskId();
          proxy.rules.push(rule(taskId));
          if (next === "eof") proxy.rules.push({ method: "SubscribeToTask", after: (_f, i) => i === 0 });
          else proxy.onFrame = (method, _f, i) => method === "SubscribeToTask" && i === 0 && script.release();
          const events = await t.run([
            { interruptId: "selector-1", status: "resolved", payload: { value: "vpc-bp1demo0001" } },
          ]);
          expect(proxy.callsFor("SubscribeToTask", taskId)).to.have.length(1);
          expect(sends(taskId)).to.equal(1);
          expect(await received(taskId, "cloud_resource_selection")).to.have.length(1);
          expect(toolResults(events, "select-1")).to.have.length(1);
          if (next === "input") {
            expect(interruptsOf(events).map((i) => i.id)).to.deep.equal(["next-selection"]);
            expect(await t.pending()).to.deep.equal(["next-selection"]);
            expect(cancels(taskId)).to.equal(0);
          } else if (next === "completed") {
            expectSuccess(events);
            expect(
              events.some((e) => e.type === "TEXT_MESSAGE_CONTENT" && String(e.delta).startsWith("Done:")),
            ).to.equal(true);
            expect(cancels(taskId)).to.equal(0);
          } else if (next === "failed") {
            // The task's own failure code (A2A_EXECUTION_FAILED when it carries none); never cancelled.
            expectRunError(events, "RUNTIME_ERROR", "The simulated deployment failed.");
            expect(cancels(taskId)).to.equal(0);
          } else {
            expectRunError(
              events,
              "A2A_UNAVAILABLE",
              "The A2A task stopped reporting after the answer was accepted and shows neither a new question nor an end; it was cancelled.",
            );
            expect(cancels(taskId)).to.equal(1);
            expect((await a2aTask(taskId)).status.state).to.equal("TASK_STATE_CANCELED");
          }
          if (next !== "input") expect(await t.pending()).to.deep.equal([]);
        });
      }
    }

    it("the end of the turn on the answer's stream is a boundary: no subscribe", async () => {
      const { t } = await interrupted("[[selector]]");
      const taskId = await t.taskId();
      expectSuccess(
        await t.run([
          { interruptId: "selector-1", status: "resolved", payload: { value: "vpc-bp1demo0001" } },
        ]),
      );
      expect(proxy.callsFor("SubscribeToTask", taskId)).to.have.length(0);
    });
  });

  /** The input-required update A2A sent when the selector first asked (replayed later: a stale projection). */
  function staleInterrupt(taskId: string): Frame {
    const found = proxy.frames.find(({ method, frame }) => {
      const update = (frame.result as Json | undefined)?.statusUpdate;
      return (
        method === "SendStreamingMessage" &&
        isStatusUpdate(frame, "TASK_STATE_INPUT_REQUIRED") &&
        update?.taskId === taskId &&
        update?.metadata?.iac_code?.input?.inputId === "selector-1"
      );
    });
    expect(found, "the first run's input-required update").to.not.equal(undefined);
    return found!.frame;
  }

  describe("item 66: selector answers the profile refuses", () => {
    it("after an adapter restart: RESUME_PAYLOAD_INVALID, nothing sent; the corrected value goes through", async () => {
      const { t } = await interrupted("[[selector]]");
      const taskId = await t.taskId();
      await adapterViaProxy();
      t.reconnect();
      const bad = await t.run([
        { interruptId: "selector-1", status: "resolved", payload: { value: "vsw-bp1demo0001" } },
      ]);
      expectRunError(
        bad,
        "RESUME_PAYLOAD_INVALID",
        'resume[0].payload.value "vsw-bp1demo0001" is not a vpc.vpc resource id (vpc-…).',
      );
      expect(sends(taskId)).to.equal(0);
      expect(await t.pending()).to.deep.equal(["selector-1"]);
      const good = await t.run([
        { interruptId: "selector-1", status: "resolved", payload: { value: "vpc-bp1demo0002" } },
      ]);
      expectSuccess(good);
      expect(await t.pending()).to.deep.equal([]);
      expect((await received(taskId, "cloud_resource_selection")).map((d) => d.value)).to.deep.equal([
        "vpc-bp1demo0002",
      ]);
    });

    it("every malformed selector answer names the field and why; nothing is sent", async () => {
      const { t } = await interrupted("[[selector]]");
      const taskId = await t.taskId();
      const P = "resume[0].payload";
      const cases: Array<[Json, string]> = [
        [{ status: "resolved", payload: { value: "vpc-bp1demo0001", source: { regionId: "x" } } }, `${P}.source is not a field of this interrupt's answer.`],
        [{ status: "resolved", payload: { value: "vpc-bp1demo0001", freeText: "vpc-bp1demo0002" } }, `${P} needs exactly one of: value, freeText.`],
        [{ status: "resolved", payload: { label: "x" } }, `${P} needs exactly one of: value, freeText.`],
        [{ status: "resolved", payload: { value: "" } }, `${P}.value must be a non-empty string.`],
        [{ status: "resolved", payload: { freeText: "   " } }, `${P}.freeText must be a non-empty string.`],
        [{ status: "resolved", payload: { value: 42 } }, `${P}.value must be a non-empty string.`],
        [{ status: "resolved", payload: { freeText: "vpc-bp1demo0001", label: "x" } }, `${P}.label goes with value, not with freeText.`],
        [{ status: "resolved", payload: { value: "vpc-bp1demo0001", label: 7 } }, `${P}.label must be a string.`],
        [{ status: "resolved", payload: { value: "vpc-bp1demo0001", label: "l".repeat(1025) } }, `${P}.label must be at most 1024 characters long.`],
        [{ status: "resolved", payload: { value: `vpc-${"a".repeat(1021)}` } }, `${P}.value must be at most 1024 characters long.`],
        [{ status: "resolved", payload: "vpc-bp1demo0001" }, `${P} must be an object.`],
        [{ status: "resolved", payload: { freeText: "my vpc" } }, `${P}.freeText "my vpc" is not a vpc.vpc resource id (vpc-…).`],
        [{ status: "cancelled", payload: { optionsEmpty: "yes" } }, `${P} of a cancelled resource selection must be absent, null, or an object holding only optionsEmpty (true or false).`],
        [{ status: "cancelled", payload: { reason: "none fit" } }, `${P} of a cancelled resource selection must be absent, null, or an object holding only optionsEmpty (true or false).`],
      ]; // prettier-ignore
      for (const [entry, message] of cases) {
        const events = await t.post([{ interruptId: "selector-1", ...entry }]);
        expectRunError(events, "RESUME_PAYLOAD_INVALID", message);
      }
      const missing = await t.post([{ interruptId: "selector-1", status: "resolved" }]);
      expectRunError(missing, "RESUME_PAYLOAD_INVALID", "A resolved interrupt requires a payload.");
      expect(sends(taskId)).to.equal(0);
      expect(await t.pending()).to.deep.equal(["selector-1"]);
      expectSuccess(
        await t.post([
          { interruptId: "selector-1", status: "resolved", payload: { value: "vpc-bp1demo0001" } },
        ]),
      );
    });

    it("a selector whose profile the adapter does not know is refused, in the request's language", async () => {
      const { t } = await interrupted("[[selector:nas.file_system]]");
      const events = await t.run([
        { interruptId: "selector-1", status: "resolved", payload: { value: "fs-demo0001" } },
      ]);
      expectRunError(
        events,
        "RESUME_PAYLOAD_INVALID",
        "The resource selector nas.file_system is not one this adapter can check (it knows: vpc.vpc, vswitch.vswitch, ecs.security_group, ecs.instance).",
      );
      const fr = await post(
        h.url,
        runInput(h, {
          threadId: t.id,
          runId: `${t.id}-fr`,
          iac: { preferredLanguage: "fr" },
          resume: [{ interruptId: "selector-1", status: "resolved", payload: { value: "fs-demo0001" } }],
        }),
      );
      expect(fr.events.at(-1)!.message).to.equal(
        "Cet adaptateur ne sait pas vérifier le sélecteur de ressources nas.file_system (il connaît : vpc.vpc, vswitch.vswitch, ecs.security_group, ecs.instance).",
      );
      expect(sends(await t.taskId())).to.equal(0);
    });

    it("each profile takes its own ids only", () => {
      const ids: Record<string, [string, string]> = {
        "vpc.vpc": ["vpc-bp1demo0001", "vsw-bp1demo0001"],
        "vswitch.vswitch": ["vsw-bp1demo0001", "vpc-bp1demo0001"],
        "ecs.security_group": ["sg-bp1demo0001", "sg_demo"],
        "ecs.instance": ["i-bp1demo0001", "i-"],
      };
      expect(Object.keys(SELECTOR_PROFILES).sort()).to.deep.equal(Object.keys(ids).sort());
      for (const [profile, [good, bad]] of Object.entries(ids)) {
        expect(selectorProfile(profile)!.pattern.test(good), `${profile} ${good}`).to.equal(true);
        expect(selectorProfile(profile)!.pattern.test(bad), `${profile} ${bad}`).to.equal(false);
        expect(selectorProfile(profile)!.pattern.test(`${good} `), `${profile} trailing space`).to.equal(
          false,
        );
      }
      expect(selectorProfile("toString")).to.equal(undefined);
    });
  });

  it("item 67: a derived selector's answer carries the request's own source, which the client cannot replace", async () => {
    const { t, interrupt } = await interrupted("[[selector:vswitch.vswitch]]");
    const taskId = await t.taskId();
    const source = {
      provider: "aliyun",
      product: "vpc",
      action: "DescribeVSwitches",
      regionId: "cn-shanghai",
      simulated: true,
    };
    expect(interrupt.metadata.selector.source).to.deep.equal(source);
    const forged = await t.run([
      {
        interruptId: "selector-1",
        status: "resolved",
        payload: { value: "vsw-bp1demo0001", source: { ...source, regionId: "cn-beijing" } },
      },
    ]);
    expectRunError(
      forged,
      "RESUME_PAYLOAD_INVALID",
      "resume[0].payload.source is not a field of this interrupt's answer.",
    );
    expectSuccess(
      await t.run([{ interruptId: "selector-1", status: "resolved", payload: { value: "vsw-bp1demo0001" } }]),
    );
    const [sent] = await received(taskId, "cloud_resource_selection");
    expect(sent).to.deep.include({ selectorId: "vswitch.vswitch", value: "vsw-bp1demo0001", source });
  });

  it("item 68: A2A refusing the selector answer is A2A_UNAVAILABLE, the interrupt kept, no cancel; the retry sends once", async () => {
    const { t } = await interrupted("[[selector]]");
    const taskId = await t.taskId();
    h.runtime.refuseAnswers = 1;
    const answer = [{ interruptId: "selector-1", status: "resolved", payload: { value: "vpc-bp1demo0002" } }];
    const refused = await t.run(answer);
    expectRunError(
      refused,
      "A2A_UNAVAILABLE",
      "The local A2A execution service rejected the interrupt response.",
    );
    expect(await t.pending()).to.deep.equal(["selector-1"]);
    expect(cancels(taskId)).to.equal(0);
    expect(await received(taskId, "cloud_resource_selection")).to.deep.equal([]);
    expectSuccess(await t.run(answer));
    expect(await received(taskId, "cloud_resource_selection")).to.have.length(1);
    expect(sends(taskId)).to.equal(2);
    expect(await t.pending()).to.deep.equal([]);
  });

  it("item 69: candidate, then (after the answer's stream ended) the confirmation, its overrides, the deploy permission denied", async () => {
    const { t, events: first } = await interrupted("[[candidate]] [[hold]] [[confirm]] [[deploy]]");
    const taskId = await t.taskId();
    const executionId = sessionEvents(first)[0].executionId as string;
    proxy.rules.push({
      method: "SendStreamingMessage",
      after: (f) => isStatusUpdate(f, "TASK_STATE_WORKING"),
    });
    proxy.onFrame = (method, _f, i) => method === "SubscribeToTask" && i === 0 && script.release();
    const second = await t.run([
      { interruptId: "candidate-1", status: "resolved", payload: { selectedId: "plan-a" } },
    ]);
    expect(proxy.callsFor("SubscribeToTask", taskId)).to.have.length(1);
    const [confirmation] = interruptsOf(second);
    expect(confirmation).to.deep.include({ id: "confirm-1", reason: "input_required" });
    expect(confirmation).to.not.have.property("toolCallId");
    expect(confirmation.message).to.equal(
      [
        "Create the stack iac-demo-web with these parameters?",
        "- confirm: Deploy",
        "- adjust: Change parameters",
        "- reselect: Choose another candidate",
        "- cancel: Do not deploy",
      ].join("\n"),
    );
    expect(sessionEvents(second)).to.have.length(1);
    expect(sessionEvents(second)[0]).to.include({ executionId, taskId });
    const doc = await t.doc();
    expect(doc.appliedResumeDigests.map((a: Json) => [a.executionId, a.interruptId])).to.deep.equal([
      [executionId, "candidate-1"],
    ]);
    const kept = t.file().execution.pending["confirm-1"].value;
    expect(kept.operation).to.equal("create");
    expect(kept.displayParameters).to.deep.equal(confirmation.metadata.displayParameters);
    expect(kept.deploymentSummary).to.deep.include({ stackName: "iac-demo-web" });

    const third = await t.run([
      {
        interruptId: "confirm-1",
        status: "resolved",
        payload: { selectedId: "confirm", parameter_overrides: { " Name ": "retained", Dropped: null } },
      },
    ]);
    expect(interruptsOf(third).map((i) => [i.id, i.reason, i.toolCallId])).to.deep.equal([
      ["permission-deploy-1", "tool_call", "deploy-1"],
    ]);
    expect(await received(taskId, "deployment_confirmation")).to.deep.equal([
      {
        schemaVersion: 1,
        kind: "deployment_confirmation",
        requestTaskId: taskId,
        inputId: "confirm-1",
        toolUseId: "deploying-1-confirm",
        action: "confirm",
        parameter_overrides: { Name: "retained" },
      },
    ]);
    expect(await received(taskId, "permission")).to.deep.equal([]);
    const fourth = await t.run([
      { interruptId: "permission-deploy-1", status: "resolved", payload: { decision: "deny" } },
    ]);
    expectSuccess(fourth);
    expect((await received(taskId, "permission")).map((d) => d.decision)).to.deep.equal(["deny"]);
    expect(h.runtime.answers.at(-1)).to.deep.include({ kind: "permission", decision: "deny" });
    expect(cancels(taskId)).to.equal(0);
  });

  it("item 70: only the answered input reappearing is not an end: the task is cancelled, A2A_UNAVAILABLE, pending empty", async () => {
    const { t } = await interrupted("[[selector]] [[hold]]");
    const taskId = await t.taskId();
    const stale = staleInterrupt(taskId);
    proxy.rules.push({ method: "SendStreamingMessage", after: (_f, i) => i === 0 });
    proxy.rules.push({ method: "SubscribeToTask", after: (_f, i) => i === 0, replay: [stale] });
    const events = await t.run([
      { interruptId: "selector-1", status: "resolved", payload: { value: "vpc-bp1demo0001" } },
    ]);
    expectRunError(events, "A2A_UNAVAILABLE");
    expect(await t.pending()).to.deep.equal([]);
    expect(cancels(taskId)).to.equal(1);
    expect((await a2aTask(taskId)).status.state).to.equal("TASK_STATE_CANCELED");
  });

  describe("item 71: confirmation answers refused before anything is sent", () => {
    it("each malformed answer names the field and why; the interrupt stays answerable", async () => {
      const { t } = await interrupted("[[confirm]]");
      const taskId = await t.taskId();
      const P = "resume[0].payload";
      const O = `${P}.parameter_overrides`;
      const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`P${i}`, i]));
      const cases: Array<[unknown, string]> = [
        [{ action: "launch" }, `${P}.action "launch" is not an action this confirmation offers (actions: adjust, cancel, confirm, reselect).`],
        [{ selectedId: "deploy-now" }, `${P}.selectedId "deploy-now" is not an option of this confirmation (options: confirm, adjust, reselect, cancel).`],
        [{ action: "confirm", note: "x" }, `${P}.note is not a field of this interrupt's answer.`],
        [{ freeText: "yes please" }, `${P}.freeText is not a field of this interrupt's answer.`],
        [{ selectedId: "confirm", action: "confirm" }, `${P} needs exactly one of: selectedId, action.`],
        [{ parameter_overrides: {} }, `${P} needs exactly one of: selectedId, action.`],
        [{ action: "confirm", parameter_overrides: "Name=x" }, `${O} must be an object of template parameter names to values.`],
        [{ action: "confirm", parameter_overrides: ["Name"] }, `${O} must be an object of template parameter names to values.`],
        [{ action: "confirm", parameter_overrides: { Name: { nested: true } } }, `${O}.Name must be a string, a number, a boolean or null.`],
        [{ action: "confirm", parameter_overrides: { "  ": "x" } }, `${O}.  : a parameter name must be 1 to 200 characters once trimmed, and appear once.`],
        [{ action: "confirm", parameter_overrides: { Name: "a", " Name": "b" } }, `${O}. Name: a parameter name must be 1 to 200 characters once trimmed, and appear once.`],
        [{ action: "confirm", parameter_overrides: many }, `${O} may change at most 50 parameters.`],
        [["confirm"], `${P} must be an object.`],
      ]; // prettier-ignore
      for (const [payload, message] of cases) {
        const events = await t.post([{ interruptId: "confirm-1", status: "resolved", payload }]);
        expectRunError(events, "RESUME_PAYLOAD_INVALID", message);
      }
      expect(sends(taskId)).to.equal(0);
      expect(await t.pending()).to.deep.equal(["confirm-1"]);
      expect(await received(taskId)).to.deep.equal([]);
      expectSuccess(
        await t.post([{ interruptId: "confirm-1", status: "resolved", payload: { action: "reselect" } }]),
      );
    });

    it("an action the confirmation does not offer, by action or by a schema-valid payload", async () => {
      const { t, interrupt } = await interrupted("[[confirm:cancel-only]]");
      expect(interrupt.responseSchema.oneOf.at(-1).properties.action.enum).to.deep.equal(["cancel"]);
      const events = await t.run([
        { interruptId: "confirm-1", status: "resolved", payload: { action: "confirm" } },
      ]);
      expectRunError(
        events,
        "RESUME_PAYLOAD_INVALID",
        'resume[0].payload.action "confirm" is not an action this confirmation offers (actions: cancel).',
      );
      expect(sends(await t.taskId())).to.equal(0);
      expect(await t.pending()).to.deep.equal(["confirm-1"]);
    });

    it("status cancelled cancels the task (RUN_ERROR CANCELLED), no answer sent", async () => {
      const { t } = await interrupted("[[confirm]]");
      const taskId = await t.taskId();
      const events = await t.run([{ interruptId: "confirm-1", status: "cancelled" }]);
      expectRunError(events, "CANCELLED", "The execution was cancelled by the interrupt response.");
      expect(cancels(taskId)).to.equal(1);
      expect(sends(taskId)).to.equal(0);
      expect((await a2aTask(taskId)).status.state).to.equal("TASK_STATE_CANCELED");
      expect(await t.pending()).to.deep.equal([]);
    });
  });

  describe("item 72: the action is sent, never the label", () => {
    const schema = {
      oneOf: [
        ...[
          ["confirm", "Deploy"],
          ["adjust", "Change parameters"],
          ["reselect", "Choose another candidate"],
          ["cancel", "Do not deploy"],
        ].map(([id, title]) => ({
          type: "object",
          properties: {
            selectedId: { type: "string", const: id, title },
            parameter_overrides: { type: "object" },
          },
          required: ["selectedId"],
          additionalProperties: false,
        })),
        {
          type: "object",
          properties: {
            action: { type: "string", enum: ["adjust", "cancel", "confirm", "reselect"] },
            parameter_overrides: { type: "object" },
          },
          required: ["action"],
          additionalProperties: false,
        },
      ],
    };
    for (const action of ["confirm", "adjust", "reselect", "cancel"]) {
      for (const by of ["selectedId", "action"]) {
        it(`${action} by ${by}`, async () => {
          const { t, interrupt } = await interrupted("[[confirm]] [[deploy]]");
          expect(interrupt.responseSchema).to.deep.equal(schema);
          const taskId = await t.taskId();
          const events = await t.run([
            {
              interruptId: "confirm-1",
              status: "resolved",
              payload: { [by]: action, parameter_overrides: { ZoneId: "cn-hangzhou-i", Count: 2 } },
            },
          ]);
          const [sent] = await received(taskId, "deployment_confirmation");
          expect(sent).to.deep.include({
            action,
            parameter_overrides: { ZoneId: "cn-hangzhou-i", Count: 2 },
          });
          expect(JSON.stringify(sent)).to.not.match(/Deploy|Change parameters|Choose another|Do not deploy/);
          if (action === "confirm") {
            expect(interruptsOf(events).map((i) => i.id)).to.deep.equal(["permission-deploy-1"]);
          } else {
            expectSuccess(events);
            expect(await t.pending()).to.deep.equal([]);
          }
          expect(cancels(taskId)).to.equal(0);
        });
      }
    }
  });

  it("item 73: replaying the answered candidate while the confirmation waits changes nothing (also after a restart)", async () => {
    const { t } = await interrupted("[[candidate]] [[confirm]]");
    const taskId = await t.taskId();
    const answer = { interruptId: "candidate-1", status: "resolved", payload: { selectedId: "plan-a" } };
    expect(interruptsOf(await t.run([answer])).map((i) => i.id)).to.deep.equal(["confirm-1"]);
    const state = () => {
      const { execution, appliedResumeDigests, terminalExecutionIds } = t.file();
      return { execution, appliedResumeDigests, terminalExecutionIds };
    };
    const before = state();
    const replays = async () => {
      const changed = await t.post([{ ...answer, payload: { selectedId: "plan-b" } }]);
      expectRunError(changed, "RESUME_ALREADY_APPLIED", "The interrupt response has already been applied.");
      // Raw POSTs: @ag-ui/client itself refuses to send a resume that leaves an interrupt out.
      const same = await t.post([answer]);
      expectRunError(
        same,
        "INCOMPLETE_RESUME",
        "The resume must resolve every pending interrupt exactly once.",
      );
      expect(state()).to.deep.equal(before);
      expect(await received(taskId, "candidate_selection")).to.have.length(1);
    };
    await replays();
    await adapterViaProxy();
    t.reconnect();
    await replays();
    expectSuccess(
      await t.run([{ interruptId: "confirm-1", status: "resolved", payload: { action: "cancel" } }]),
    );
  });

  describe("item 74: a confirmation whose options cannot be offered", () => {
    const variants: Array<[string, string]> = [
      ["corrupt-empty", "option 0 needs"],
      ["corrupt-blank", "option 0 needs"],
      ["corrupt-dup", "option 1 needs"],
      ["corrupt-long", "option 0 needs"],
      ["corrupt-action", "option 0 needs"],
      ["corrupt-none", "it has no options"],
    ];
    for (const [variant, why] of variants) {
      it(`${variant}: A2A_UNAVAILABLE, never pending, nothing sent, the task cancelled`, async () => {
        const t = new Thread(`[[confirm:${variant}]]`);
        const events = await t.run();
        expectRunError(events, "A2A_UNAVAILABLE");
        expect(String(events.at(-1)!.message))
          .to.include("The A2A deployment confirmation cannot be offered")
          .and.include(why);
        const doc = t.file();
        expect(doc.execution.pending).to.deep.equal({});
        expect(doc.terminalExecutionIds).to.include(doc.execution.executionId);
        const taskId = doc.execution.lastTaskId as string;
        expect(await received(taskId)).to.deep.equal([]);
        expect(cancels(taskId)).to.equal(1);
        expect((await a2aTask(taskId)).status.state).to.equal("TASK_STATE_CANCELED");
      });
    }
  });

  it("item 75: a confirmation answered after an adapter restart: one session event, same execution, terminal, persisted", async () => {
    const { t, events: first } = await interrupted("[[confirm]]");
    const taskId = await t.taskId();
    const executionId = sessionEvents(first)[0].executionId as string;
    await adapterViaProxy();
    t.reconnect();
    const events = await t.run([
      { interruptId: "confirm-1", status: "resolved", payload: { action: "adjust", parameter_overrides: { ZoneId: "cn-hangzhou-i" } } },
    ]); // prettier-ignore
    expectSuccess(events);
    const sessions = sessionEvents(events);
    expect(sessions).to.have.length(1);
    expect(sessions[0]).to.include({ taskId, executionId });
    const doc = t.file();
    expect(doc.execution.pending).to.deep.equal({});
    expect(doc.terminalExecutionIds).to.include(executionId);
    expect(doc.appliedResumeDigests.map((a: Json) => a.interruptId)).to.deep.equal(["confirm-1"]);
    expect(await received(taskId, "deployment_confirmation")).to.have.length(1);
  });
});
