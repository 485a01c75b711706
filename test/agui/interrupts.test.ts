// Interrupt projection (A2A input request -> AG-UI interrupt) and resume checks.
import { expect } from "chai";
import { readItem } from "../../src/agui/upstream/a2a-items.js";
import { answerDigest } from "../../src/agui/threads/execution.js";
import {
  answerPart,
  answerText,
  payloadMatches,
  requiredInputs,
  responseSchemaFor,
  standardOptions,
  toInterrupt,
} from "../../src/agui/run/interrupts.js";
import { parseInterrupt } from "../../src/contract/index.js";

const envelope = {
  schemaVersion: 1,
  kind: "permission",
  requestTaskId: "task-1",
  contextId: "ctx-1",
  inputId: "permission-1",
  toolUseId: "tu-1",
  toolName: "write_file",
  title: "Write vpc.yaml",
  purpose: "Save the template",
  effect: "file_change",
  isReadOnly: false,
  prompt: "Write vpc.yaml. Allow once?",
  safeSummary: "write_file: {path}",
  options: [
    { id: "allow_once", label: "Allow once" },
    { id: "deny", label: "Deny" },
  ],
  language: "en",
  required: true,
  responseSchema: { type: "object" },
  toolInput: { content: "secret-ish content" },
};

describe("agui interrupts", () => {
  it("projects a permission input into a contract-valid interrupt without tool inputs", () => {
    const item = readItem({
      result: {
        statusUpdate: {
          taskId: "task-1",
          status: { state: "TASK_STATE_INPUT_REQUIRED" },
          metadata: { iac_code: { input: envelope } },
        },
      },
    });
    const inputs = requiredInputs(item);
    expect(inputs).to.have.length(1);
    expect(inputs[0].value).not.to.have.property("toolInput");
    expect(inputs[0].value).not.to.have.property("responseSchema");
    const interrupt = toInterrupt({ ...inputs[0], expiresAt: "2030-01-01T00:09:00.000Z" });
    expect(interrupt).to.deep.include({
      id: "permission-1",
      reason: "tool_call",
      message: "Write vpc.yaml. Allow once?",
      toolCallId: "tu-1",
      expiresAt: "2030-01-01T00:09:00.000Z",
    });
    expect(interrupt.responseSchema).to.deep.equal({
      type: "object",
      properties: { decision: { type: "string", enum: ["allow_once", "deny"] } },
      required: ["decision"],
      additionalProperties: false,
    });
    expect(interrupt.metadata).to.include({
      title: "Write vpc.yaml",
      purpose: "Save the template",
      toolName: "write_file",
      safeSummary: "write_file: {path}",
    });
    const parsed = parseInterrupt(interrupt);
    expect(parsed.ok, JSON.stringify(parsed)).to.equal(true);
  });

  it("ignores inputs that are not required and de-duplicates by inputId; pendingPermissions are sideband", () => {
    const item = readItem({
      result: {
        statusUpdate: {
          status: { state: "TASK_STATE_WORKING" },
          metadata: {
            iac_code: { input: { ...envelope, required: false }, pendingPermissions: [envelope, envelope] },
          },
        },
      },
    });
    const inputs = requiredInputs(item);
    expect(inputs.map((i) => [i.value.inputId, i.sideband])).to.deep.equal([["permission-1", true]]);
  });

  it("question interrupts: options, free text, message lines and translated fallbacks", () => {
    const question = {
      inputId: "ask-1",
      kind: "ask_user_question",
      toolUseId: "tu-2",
      prompt: "Which plan?",
      options: [
        { id: "plan-a", label: "Plan A" },
        { id: "plan-b", label: "Plan B" },
      ],
      language: "fr",
    };
    const i = toInterrupt({ value: question, sideband: false, expiresAt: "2030-01-01T00:00:00Z" });
    expect(i.reason).to.equal("input_required");
    expect(i.message).to.equal("Which plan?\n- plan-a: Plan A\n- plan-b: Plan B");
    expect(payloadMatches(i.responseSchema, { selectedId: "plan-b" })).to.equal(true);
    expect(payloadMatches(i.responseSchema, { selectedId: "plan-c" })).to.equal(false);
    expect(payloadMatches(i.responseSchema, { freeText: "x" })).to.equal(false);
    expect(answerText(question, { selectedId: "plan-b" })).to.equal("Plan B");
    const free = responseSchemaFor({ kind: "ask_user_question", allowFreeText: true, options: [] });
    expect(payloadMatches(free, { freeText: "my own" })).to.equal(true);
    expect(payloadMatches(free, { freeText: "" })).to.equal(false);
    const fallback = toInterrupt({
      value: { inputId: "x", kind: "permission", language: "zh" },
      sideband: false,
      expiresAt: "2030-01-01T00:00:00Z",
    });
    expect(fallback.message).to.equal("需要授权");
    const input = toInterrupt({
      value: { inputId: "y", language: "ja" },
      sideband: false,
      expiresAt: "2030-01-01T00:00:00Z",
    });
    expect(input.message).to.equal("入力が必要です");
    expect(input.metadata.kind).to.equal("input_required");
  });

  it("normalises options to unique non-empty ids", () => {
    expect(
      standardOptions([
        { id: "a", label: "A" },
        { id: "a" },
        { candidate_index: 3, name: "N" },
        "plain",
        { id: "" },
      ]),
    ).to.deep.equal([
      { id: "a", title: "A" },
      { id: "a-2", title: "a" },
      { id: "3", title: "N" },
      { id: "plain", title: "plain" },
      { id: "option-5", title: "" },
    ]);
  });

  it("permission answers: allow_once, deny, and cancelled as deny; digests are canonical", () => {
    expect(
      answerPart(
        envelope,
        { interruptId: "permission-1", status: "resolved", payload: { decision: "allow_once" } },
        "task-1",
      ),
    ).to.deep.equal({
      data: {
        schemaVersion: 1,
        kind: "permission",
        requestTaskId: "task-1",
        inputId: "permission-1",
        toolUseId: "tu-1",
        decision: "allow_once",
      },
      mediaType: "application/json",
    });
    expect(
      answerPart(envelope, { interruptId: "permission-1", status: "cancelled" }, "task-1").data,
    ).to.include({ decision: "deny" });
    const perm = responseSchemaFor(envelope);
    expect(payloadMatches(perm, { decision: "allow" })).to.equal(false);
    // Only the decisions the permission offers are accepted.
    expect(payloadMatches(perm, { decision: "allow_always" })).to.equal(false);
    const always = responseSchemaFor({
      ...envelope,
      options: [{ id: "allow_once" }, { id: "allow_always" }, { id: "deny" }],
    });
    expect(payloadMatches(always, { decision: "allow_always" })).to.equal(true);
    expect((always.properties as { decision: { enum: string[] } }).decision.enum).to.deep.equal([
      "allow_once",
      "allow_always",
      "deny",
    ]);
    expect(payloadMatches(responseSchemaFor({ ...envelope, options: [] }), { decision: "deny" })).to.equal(
      true,
    );
    expect(payloadMatches(perm, { decision: "deny", extra: 1 })).to.equal(false);
    expect(answerDigest({ interruptId: "a", status: "resolved", payload: { b: 1, a: 2 } })).to.equal(
      answerDigest({ interruptId: "z", status: "resolved", payload: { a: 2, b: 1 } }),
    );
    expect(answerDigest({ interruptId: "a", status: "cancelled" })).not.to.equal(
      answerDigest({ interruptId: "a", status: "resolved", payload: {} }),
    );
  });
});
