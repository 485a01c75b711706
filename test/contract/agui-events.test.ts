// The AG-UI event schemas against the official client: a realistic stream must
// pass both our generated validators and @ag-ui/client 1.0's checks (schema
// enforcement, chunk expansion, sequence verification) without a single
// warning, and what our schemas reject the client rejects or warns about too,
// except for the few rules we keep on purpose (listed and pinned below).
import { expect } from "chai";
import { from, lastValueFrom, toArray } from "rxjs";
import { enforceEvents, transformChunks, verifyEvents, type BaseEvent } from "@ag-ui/client";
import {
  schemaIndex,
  violations,
  type AguiEvent,
  type ContractViolation,
  type IacCodeArtifactPayload,
  type IacCodePipelinePayload,
  type IacCodeSessionPayload,
  type IacCodeToolProgressPayload,
  type Interrupt,
  type SchemaName,
  type TokenUsage,
} from "../../src/contract/index.js";

const THREAD = "8473547e-c8ed-4aef-a84c-603a6a8d42da";
const RUN_1 = "32c263f2-b0b0-42ac-905c-524a0a9bb652";
const RUN_2 = "5b0f3c1e-8d2a-4f6b-9c71-2e4d8a9b0c13";
const RUN_3 = "c4a1e7d2-9b3f-4a6c-8e5d-7f1a2b3c4d5e";
const CONTEXT = "agui-1770b0bf824e9baef15a0dd4d95308def8aad5a5";
const EXECUTION = "0f8e2b7a-3c4d-4e5f-8a9b-1c2d3e4f5a6b";
const TASK = "task-7d1c";
const TEXT = `${TASK}-message`;
const REASONING = `reasoning-${TEXT}`;
const TOOL = "toolu_01HkV9mZ2b";
const PERMISSION = "permission-9f2c4e1a7b3d4c5e8f6a0b1c2d3e4f5a";
const T0 = 1764441600000;

const permission: Interrupt = {
  id: PERMISSION,
  reason: "tool_call",
  message: "Write a file in the workspace. Allow once?",
  toolCallId: TOOL,
  responseSchema: {
    type: "object",
    properties: { decision: { type: "string", enum: ["allow_once", "deny"] } },
    required: ["decision"],
    additionalProperties: false,
  },
  expiresAt: "2025-11-29T18:09:00.000Z",
  metadata: {
    schemaVersion: 1,
    kind: "permission",
    requestTaskId: TASK,
    contextId: CONTEXT,
    inputId: PERMISSION,
    toolUseId: TOOL,
    toolName: "write_file",
    title: "Write a file in the workspace.",
    purpose: "Save the generated template.",
    effect: "file_change",
    isReadOnly: false,
    safeSummary: 'write_file: {"path":{"type":"str","length":8}}',
    options: [
      { id: "allow_once", label: "Allow once" },
      { id: "deny", label: "Deny" },
    ],
    language: "en",
    required: true,
    standardOptions: [
      { id: "allow_once", title: "Allow once" },
      { id: "deny", title: "Deny" },
    ],
  },
};

const session: IacCodeSessionPayload = {
  schemaVersion: 1,
  threadId: THREAD,
  aguiRunId: RUN_1,
  executionId: EXECUTION,
  contextId: CONTEXT,
  taskId: TASK,
  rosInvocationId: "invocation-1",
  sessionId: "session-20251129-a1b2",
};

const progress: IacCodeToolProgressPayload = {
  schemaVersion: 1,
  status: "progress",
  toolUseId: TOOL,
  name: "write_file",
  mcp: { serverName: "fs", toolName: "write_file", progress: 1, total: 2, message: "Writing" },
};

const artifact: IacCodeArtifactPayload = {
  schemaVersion: 1,
  artifactId: "3e6f1a2b-7c8d-4e9f-a0b1-c2d3e4f5a6b7",
  name: "vpc.yaml",
  filename: "vpc.yaml",
  mediaType: "text/yaml",
  byteSize: 39,
  sha256: "5f3102d6a21a685bdb02e190ff184eb5134d13c9d6affd62d701fef2c503c1a0",
  uri: "file:///home/dev/.iac-code/a2a/artifacts/3e6f1a2b-7c8d-4e9f-a0b1-c2d3e4f5a6b7/vpc.yaml",
  taskId: TASK,
  contextId: CONTEXT,
};

const pipelineEvent: IacCodePipelinePayload = {
  schemaVersion: "1.0",
  extensionUri: "urn:iac-code:a2a:pipeline-events:v1",
  eventId: "evt-5c1d9e0f2a3b",
  eventType: "candidate_started",
  sequence: 3,
  scope: "candidate",
  data: { candidateName: "Plan A" },
  candidate: { id: "candidate-0" },
};

const usage: TokenUsage[] = [
  {
    provider: "dashscope",
    model: "qwen3.8-max",
    inputTokens: 6497,
    outputTokens: 812,
    totalTokens: 7309,
    cachedInputTokens: 4096,
  },
];

/** Three runs on one thread, in one stream as the client allows: interrupted, resumed, failed. */
function realisticStream(): AguiEvent[] {
  let t = T0;
  const at = () => (t += 7);
  const step = "candidate:candidate-0:template_generating";
  return [
    // Run 1: reasoning, text, a tool call that needs permission; ends on the interrupt.
    { type: "RUN_STARTED", timestamp: at(), threadId: THREAD, runId: RUN_1 },
    { type: "STEP_STARTED", timestamp: at(), stepName: step },
    { type: "CUSTOM", timestamp: at(), name: "iac-code.pipeline.v1", value: pipelineEvent },
    { type: "REASONING_START", timestamp: at(), messageId: REASONING },
    { type: "REASONING_MESSAGE_START", timestamp: at(), messageId: REASONING, role: "reasoning" },
    {
      type: "REASONING_MESSAGE_CONTENT",
      timestamp: at(),
      messageId: REASONING,
      delta: "One VPC, two zones.",
    },
    { type: "REASONING_MESSAGE_END", timestamp: at(), messageId: REASONING },
    { type: "REASONING_END", timestamp: at(), messageId: REASONING },
    { type: "TEXT_MESSAGE_START", timestamp: at(), messageId: TEXT, role: "assistant" },
    { type: "TEXT_MESSAGE_CONTENT", timestamp: at(), messageId: TEXT, delta: "Here is a VPC " },
    { type: "TEXT_MESSAGE_CONTENT", timestamp: at(), messageId: TEXT, delta: "template." },
    { type: "CUSTOM", timestamp: at(), name: "iac-code.session.v1", value: session },
    {
      type: "TOOL_CALL_START",
      timestamp: at(),
      toolCallId: TOOL,
      toolCallName: "write_file",
      parentMessageId: TEXT,
    },
    { type: "TOOL_CALL_ARGS", timestamp: at(), toolCallId: TOOL, delta: '{"path":"vpc.yaml"}' },
    { type: "TOOL_CALL_END", timestamp: at(), toolCallId: TOOL },
    { type: "TEXT_MESSAGE_END", timestamp: at(), messageId: TEXT },
    { type: "STEP_FINISHED", timestamp: at(), stepName: step },
    {
      type: "RUN_FINISHED",
      timestamp: at(),
      threadId: THREAD,
      runId: RUN_1,
      outcome: { type: "interrupt", interrupts: [permission] },
      usage,
    },
    // Run 2: the resume; the durable step reopens, the tool result and artifact arrive.
    { type: "RUN_STARTED", timestamp: at(), threadId: THREAD, runId: RUN_2, parentRunId: RUN_1 },
    { type: "STEP_STARTED", timestamp: at(), stepName: step },
    {
      type: "ACTIVITY_SNAPSHOT",
      timestamp: at(),
      messageId: `pipeline:${CONTEXT}`,
      activityType: "iac-code.pipeline.v1",
      content: { schemaVersion: 1, pipelineRunId: CONTEXT, snapshot: { lastSequence: 3 } },
      replace: true,
    },
    { type: "CUSTOM", timestamp: at(), name: "iac-code.session.v1", value: { ...session, aguiRunId: RUN_2 } },
    { type: "CUSTOM", timestamp: at(), name: "iac-code.tool-progress.v1", value: progress },
    { type: "CUSTOM", timestamp: at(), name: "iac-code.artifact.v1", value: artifact },
    {
      type: "TOOL_CALL_RESULT",
      timestamp: at(),
      messageId: `tool-result-${TOOL}`,
      toolCallId: TOOL,
      content: "Wrote 39 bytes to vpc.yaml",
      role: "tool",
    },
    { type: "TEXT_MESSAGE_START", timestamp: at(), messageId: `${TASK}-final`, role: "assistant" },
    { type: "TEXT_MESSAGE_CONTENT", timestamp: at(), messageId: `${TASK}-final`, delta: "Saved vpc.yaml." },
    { type: "TEXT_MESSAGE_END", timestamp: at(), messageId: `${TASK}-final` },
    { type: "STEP_FINISHED", timestamp: at(), stepName: step },
    {
      type: "RUN_FINISHED",
      timestamp: at(),
      threadId: THREAD,
      runId: RUN_2,
      outcome: { type: "success" },
      usage,
    },
    // Run 3: fails after it started (a RUN_ERROR may come with spans still open).
    { type: "RUN_STARTED", timestamp: at(), threadId: THREAD, runId: RUN_3 },
    { type: "TEXT_MESSAGE_START", timestamp: at(), messageId: `${TASK}-2`, role: "assistant" },
    {
      type: "RUN_ERROR",
      timestamp: at(),
      message: "The local A2A execution service is unavailable.",
      code: "A2A_UNAVAILABLE",
    },
  ];
}

interface ClientVerdict {
  /** The events that came out of the client pipeline, when it completed. */
  events?: BaseEvent[];
  /** The error it threw, when it did. */
  error?: unknown;
  warnings: string[];
}

/** Runs events through @ag-ui/client's enforce -> chunks -> verify pipeline, capturing console.warn. */
async function clientVerdict(events: object[]): Promise<ClientVerdict> {
  const warnings: string[] = [];
  const originalWarn = console.warn;
  const suppress = process.env.SUPPRESS_TRANSFORMATION_WARNINGS;
  delete process.env.SUPPRESS_TRANSFORMATION_WARNINGS; // the warnings are what we are looking for
  console.warn = (...args: unknown[]) => {
    warnings.push(args.map(String).join(" "));
  };
  try {
    const out = await lastValueFrom(
      from(events as BaseEvent[]).pipe(enforceEvents(), transformChunks(), verifyEvents(), toArray()),
    );
    return { events: out, warnings };
  } catch (error) {
    return { error, warnings };
  } finally {
    console.warn = originalWarn;
    if (suppress !== undefined) process.env.SUPPRESS_TRANSFORMATION_WARNINGS = suppress;
  }
}

function ourVerdict(name: SchemaName, value: unknown): ContractViolation[] {
  const { validate } = schemaIndex[name];
  return validate(value) ? [] : violations(validate);
}

/** The client throws zod errors (their message is a JSON list of issues with paths) or AGUIErrors. */
function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const issues = (error as { issues?: unknown }).issues;
  return `${error.message} ${issues === undefined ? "" : JSON.stringify(issues)}`;
}

const kebab = (type: string) => type.toLowerCase().replace(/_/g, "-");

function opening(): object[] {
  return [{ type: "RUN_STARTED", timestamp: T0, threadId: THREAD, runId: RUN_1 }];
}
function closing(): object[] {
  return [
    { type: "RUN_FINISHED", timestamp: T0 + 1, threadId: THREAD, runId: RUN_1, outcome: { type: "success" } },
  ];
}
/** A minimal valid stream around the given events. */
function inRun(...events: object[]): object[] {
  return [...opening(), ...events, ...closing()];
}

describe("AG-UI events: our schemas and @ag-ui/client 1.0 agree", () => {
  it("accepts every event of a realistic stream with the AguiEvent union and with its own schema", () => {
    const stream = realisticStream();
    expect(new Set(stream.map((e) => e.type)).size, "event types covered").to.equal(19);
    for (const [i, event] of stream.entries()) {
      expect(ourVerdict("agui/event", event), `event ${i} (${event.type})`).to.deep.equal([]);
      const own = `agui/events/${kebab(event.type)}` as SchemaName;
      expect(schemaIndex[own], `a schema named ${own}`).to.exist;
      expect(ourVerdict(own, event), `event ${i} against ${own}`).to.deep.equal([]);
    }
  });

  it("passes the same stream through the official client unchanged and without a warning", async () => {
    const stream = realisticStream();
    const verdict = await clientVerdict(stream);
    expect(verdict.error, String(verdict.error)).to.equal(undefined);
    expect(verdict.warnings).to.deep.equal([]);
    expect(verdict.events).to.deep.equal(stream);
  });

  it("re-enables the client's warnings while inspecting them, then restores the environment", async () => {
    process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "1";
    try {
      const verdict = await clientVerdict(inRun({ type: "FUTURE_EVENT", timestamp: T0 }));
      expect(verdict.warnings, "the helper must re-enable the warnings it inspects").to.have.length(1);
      expect(process.env.SUPPRESS_TRANSFORMATION_WARNINGS).to.equal("1");
    } finally {
      delete process.env.SUPPRESS_TRANSFORMATION_WARNINGS;
    }
  });

  // Each case: an event our schema rejects, the violation we report, and how the client reacts.
  const both: Array<{
    name: string;
    event: object;
    stream?: object[];
    keyword: string;
    path: string;
    client: "fatal" | "warning";
    /** What the client's error or warning must name, to be sure it objects to the same thing. */
    mentions: string;
  }> = [
    {
      name: "a null optional field (RUN_STARTED.parentRunId)",
      event: { type: "RUN_STARTED", timestamp: T0, threadId: THREAD, runId: RUN_1, parentRunId: null },
      stream: [
        { type: "RUN_STARTED", timestamp: T0, threadId: THREAD, runId: RUN_1, parentRunId: null },
        ...closing(),
      ],
      keyword: "type",
      path: "/parentRunId",
      client: "fatal",
      mentions: "parentRunId",
    },
    {
      name: "a null optional field (TOOL_CALL_START.parentMessageId)",
      event: {
        type: "TOOL_CALL_START",
        timestamp: T0,
        toolCallId: TOOL,
        toolCallName: "bash",
        parentMessageId: null,
      },
      stream: inRun(
        {
          type: "TOOL_CALL_START",
          timestamp: T0,
          toolCallId: TOOL,
          toolCallName: "bash",
          parentMessageId: null,
        },
        { type: "TOOL_CALL_END", timestamp: T0, toolCallId: TOOL },
      ),
      keyword: "type",
      path: "/parentMessageId",
      client: "fatal",
      mentions: "parentMessageId",
    },
    {
      name: "a null name on TEXT_MESSAGE_START",
      event: { type: "TEXT_MESSAGE_START", timestamp: T0, messageId: TEXT, role: "assistant", name: null },
      stream: inRun(
        { type: "TEXT_MESSAGE_START", timestamp: T0, messageId: TEXT, role: "assistant", name: null },
        { type: "TEXT_MESSAGE_END", timestamp: T0, messageId: TEXT },
      ),
      keyword: "additionalProperties",
      path: "/name",
      client: "fatal",
      mentions: "name",
    },
    {
      name: "null metadata",
      event: { ...closing()[0], metadata: null },
      stream: [...opening(), { ...closing()[0], metadata: null }],
      keyword: "additionalProperties",
      path: "/metadata",
      client: "fatal",
      mentions: "metadata",
    },
    {
      name: "a float timestamp",
      event: { type: "STEP_STARTED", timestamp: T0 + 0.5, stepName: "plan" },
      stream: inRun(
        { type: "STEP_STARTED", timestamp: T0 + 0.5, stepName: "plan" },
        { type: "STEP_FINISHED", timestamp: T0, stepName: "plan" },
      ),
      keyword: "type",
      path: "/timestamp",
      client: "fatal",
      mentions: "timestamp",
    },
    {
      name: "a string timestamp",
      event: { type: "TEXT_MESSAGE_END", timestamp: "2025-11-29T18:00:00Z", messageId: TEXT },
      stream: inRun(
        { type: "TEXT_MESSAGE_START", timestamp: T0, messageId: TEXT, role: "assistant" },
        { type: "TEXT_MESSAGE_END", timestamp: "2025-11-29T18:00:00Z", messageId: TEXT },
      ),
      keyword: "type",
      path: "/timestamp",
      client: "fatal",
      mentions: "timestamp",
    },
    {
      name: "REASONING_MESSAGE_START without role",
      event: { type: "REASONING_MESSAGE_START", timestamp: T0, messageId: REASONING },
      stream: inRun(
        { type: "REASONING_MESSAGE_START", timestamp: T0, messageId: REASONING },
        { type: "REASONING_MESSAGE_END", timestamp: T0, messageId: REASONING },
      ),
      keyword: "required",
      path: "/",
      client: "fatal",
      mentions: "role",
    },
    {
      name: "TEXT_MESSAGE_START with role tool",
      event: { type: "TEXT_MESSAGE_START", timestamp: T0, messageId: TEXT, role: "tool" },
      stream: inRun(
        { type: "TEXT_MESSAGE_START", timestamp: T0, messageId: TEXT, role: "tool" },
        { type: "TEXT_MESSAGE_END", timestamp: T0, messageId: TEXT },
      ),
      keyword: "const",
      path: "/role",
      client: "fatal",
      mentions: "role",
    },
    {
      name: "an array as ACTIVITY_SNAPSHOT.content",
      event: {
        type: "ACTIVITY_SNAPSHOT",
        timestamp: T0,
        messageId: `pipeline:${CONTEXT}`,
        activityType: "iac-code.pipeline.v1",
        content: [],
        replace: true,
      },
      keyword: "type",
      path: "/content",
      client: "fatal",
      mentions: "content",
    },
    {
      name: "an interrupt outcome with no interrupt",
      event: { ...closing()[0], outcome: { type: "interrupt", interrupts: [] } },
      stream: [...opening(), { ...closing()[0], outcome: { type: "interrupt", interrupts: [] } }],
      keyword: "minItems",
      path: "/outcome/interrupts",
      client: "fatal",
      mentions: "interrupts",
    },
    {
      name: "the draft string outcome",
      event: { ...closing()[0], outcome: "interrupt", interrupts: [permission] },
      stream: [...opening(), { ...closing()[0], outcome: "interrupt", interrupts: [permission] }],
      keyword: "type",
      path: "/outcome",
      client: "fatal",
      mentions: "outcome",
    },
    {
      name: "a float token count",
      event: { ...closing()[0], usage: [{ inputTokens: 10.5 }] },
      stream: [...opening(), { ...closing()[0], usage: [{ inputTokens: 10.5 }] }],
      keyword: "type",
      path: "/usage/0/inputTokens",
      client: "fatal",
      mentions: "inputTokens",
    },
    {
      name: "CUSTOM without value",
      event: { type: "CUSTOM", timestamp: T0, name: "iac-code.session.v1" },
      keyword: "required",
      path: "/",
      client: "fatal",
      mentions: "value",
    },
    {
      name: "TOOL_CALL_RESULT without messageId",
      event: { type: "TOOL_CALL_RESULT", timestamp: T0, toolCallId: TOOL, content: "ok", role: "tool" },
      keyword: "required",
      path: "/",
      client: "fatal",
      mentions: "messageId",
    },
    {
      name: "threadId on RUN_ERROR",
      event: {
        type: "RUN_ERROR",
        timestamp: T0,
        message: "The execution was cancelled.",
        code: "CANCELLED",
        threadId: THREAD,
      },
      stream: [
        ...opening(),
        {
          type: "RUN_ERROR",
          timestamp: T0,
          message: "The execution was cancelled.",
          code: "CANCELLED",
          threadId: THREAD,
        },
      ],
      keyword: "additionalProperties",
      path: "/threadId",
      client: "warning",
      mentions: "/threadId",
    },
    {
      name: "a stray property on an interrupt",
      event: {
        ...closing()[0],
        outcome: { type: "interrupt", interrupts: [{ ...permission, priority: 1 }] },
      },
      stream: [
        ...opening(),
        { ...closing()[0], outcome: { type: "interrupt", interrupts: [{ ...permission, priority: 1 }] } },
      ],
      keyword: "additionalProperties",
      path: "/outcome/interrupts/0/priority",
      client: "warning",
      mentions: "priority",
    },
    {
      name: "an event type outside AG-UI 1.0 (THINKING_START)",
      event: { type: "THINKING_START", timestamp: T0 },
      keyword: "const",
      path: "/type",
      client: "warning",
      mentions: "THINKING_START",
    },
  ];

  for (const c of both) {
    it(`rejects ${c.name}, and so does the client (${c.client})`, async () => {
      const ours = ourVerdict("agui/event", c.event);
      expect(
        ours.some((v) => v.keyword === c.keyword && v.path === c.path),
        JSON.stringify(ours, null, 2),
      ).to.equal(true);
      const verdict = await clientVerdict(c.stream ?? inRun(c.event));
      if (c.client === "fatal") {
        expect(verdict.error, "the client should throw").to.not.equal(undefined);
        expect(errorText(verdict.error)).to.include(c.mentions);
      } else {
        expect(verdict.error, String(verdict.error)).to.equal(undefined);
        expect(verdict.warnings, "the client should warn").to.have.length(1);
        expect(verdict.warnings[0]).to.include(c.mentions);
      }
    });
  }

  // Rules we keep although @ag-ui/client 1.0 accepts the event silently: pinned so that
  // a change on either side shows up here.
  const oursOnly: Array<{ name: string; event: object; keyword: string; path: string }> = [
    {
      name: "outcome.pendingToolCallIds (fatal to 0.0.5x clients)",
      event: { ...closing()[0], outcome: { type: "success", pendingToolCallIds: [TOOL] } },
      keyword: "additionalProperties",
      path: "/outcome/pendingToolCallIds",
    },
    {
      name: "the cancelled outcome (fatal to 0.0.5x clients; cancellation is RUN_ERROR CANCELLED here)",
      event: { ...closing()[0], outcome: { type: "cancelled" } },
      keyword: "const",
      path: "/outcome/type",
    },
    {
      name: "RUN_FINISHED.result (this server never sends one)",
      event: { ...closing()[0], result: { ok: true } },
      keyword: "additionalProperties",
      path: "/result",
    },
    {
      name: "a null taskId inside the iac-code.session.v1 payload (left out when unknown)",
      event: {
        type: "CUSTOM",
        timestamp: T0,
        name: "iac-code.session.v1",
        value: { ...session, taskId: null },
      },
      keyword: "type",
      path: "/value/taskId",
    },
    {
      name: "an unknown pipeline eventType in iac-code.pipeline.v1",
      event: {
        type: "CUSTOM",
        timestamp: T0,
        name: "iac-code.pipeline.v1",
        value: { ...pipelineEvent, eventType: "text_delta" },
      },
      keyword: "enum",
      path: "/value/eventType",
    },
  ];

  for (const c of oursOnly) {
    it(`rejects ${c.name}, which the 1.0 client lets through`, async () => {
      const ours = ourVerdict("agui/event", c.event);
      expect(
        ours.some((v) => v.keyword === c.keyword && v.path === c.path),
        JSON.stringify(ours, null, 2),
      ).to.equal(true);
      const verdict = await clientVerdict(
        (c.event as { type: string }).type === "RUN_FINISHED" ? [...opening(), c.event] : inRun(c.event),
      );
      expect(verdict.error, String(verdict.error)).to.equal(undefined);
      expect(verdict.warnings).to.deep.equal([]);
    });
  }

  it("rejects an empty text delta, which this server never emits", () => {
    const ours = ourVerdict("agui/event", {
      type: "TEXT_MESSAGE_CONTENT",
      timestamp: T0,
      messageId: TEXT,
      delta: "",
    });
    expect(ours.some((v) => v.keyword === "minLength" && v.path === "/delta")).to.equal(true);
  });

  it("catches a sequence error only the client checks: RUN_FINISHED with a text message still open", async () => {
    const stream = inRun({ type: "TEXT_MESSAGE_START", timestamp: T0, messageId: TEXT, role: "assistant" });
    for (const event of stream) expect(ourVerdict("agui/event", event)).to.deep.equal([]);
    const verdict = await clientVerdict(stream);
    expect(errorText(verdict.error)).to.include(TEXT);
  });
});
