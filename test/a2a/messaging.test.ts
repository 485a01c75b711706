/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument -- tests read free-form JSON-RPC replies through `any` */
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseIacCodeEventMetadata, parseInputRequest } from "../../src/contract/index.js";
import {
  cleanup,
  isFinalState,
  openStream,
  parseSse,
  post,
  resultOf,
  startTestServer,
  stateOf,
  userMessage,
  V1,
  type TestServer,
} from "./helpers.js";
import { LONG_TEXT } from "./fixtures/fake-runtime.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests peek into free-form JSON
type Json = Record<string, any>;

function metadataOf(event: Json): Json | undefined {
  return resultOf(event)?.statusUpdate?.metadata?.iac_code as Json | undefined;
}

describe("A2A messaging", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ file: { "thinking-exposure": ["tool-trace", "raw-thinking"] } });
  });
  after(async () => {
    await t.close();
    cleanup(t.dir);
  });

  it("SendMessage runs a turn and returns the task in TASK_STATE_INPUT_REQUIRED", async () => {
    const reply = await t.rpc("SendMessage", { message: userMessage("hello") });
    const task = (reply.body.result as Json).task as Json;
    expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(task.id).to.be.a("string");
    expect(task.contextId).to.be.a("string");
    expect(task.history[0].parts[0].text).to.equal("hello");
    expect(task.history.at(-1).parts[0].text).to.equal("Echo(turn 1): hello");
    expect(task.history.at(-1).role).to.equal("ROLE_AGENT");
    expect(task.metadata.iac_code.iacCodeSessionId).to.match(/^session-/);
    expect(t.runtime.prompts.at(-1)).to.equal("hello");
  });

  it("historyLength in the configuration trims the returned history", async () => {
    const reply = await t.rpc("SendMessage", {
      message: userMessage("trim me"),
      configuration: { historyLength: 0 },
    });
    expect((reply.body.result as Json).task).to.not.have.property("history");
  });

  it("returnImmediately returns the submitted task at once", async () => {
    const reply = await t.rpc("SendMessage", {
      message: userMessage("quick"),
      configuration: { returnImmediately: true },
    });
    const task = (reply.body.result as Json).task as Json;
    expect(task.status.state).to.equal("TASK_STATE_SUBMITTED");
  });

  it("streams SSE frames, one JSON-RPC response per data line, in the documented order", async () => {
    const res = await fetch(t.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...V1 },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "s1",
        method: "SendStreamingMessage",
        params: { message: userMessage("stream please") },
      }),
    });
    expect(res.headers.get("content-type")).to.equal("text/event-stream");
    const raw = await res.text();
    const frames = raw.split("\n\n").filter((f) => f !== "");
    expect(raw.endsWith("\n\n")).to.equal(true);
    for (const frame of frames) {
      expect(frame.split("\n")).to.have.length(1);
      expect(frame.startsWith("data: ")).to.equal(true);
    }
    const events = parseSse(raw);
    for (const e of events) expect(e).to.include({ jsonrpc: "2.0", id: "s1" });
    const kinds = events.map((e) => Object.keys(resultOf(e))[0]);
    expect(kinds[0]).to.equal("task");
    expect(stateOf(events[0])).to.equal("TASK_STATE_SUBMITTED");
    expect(stateOf(events[1])).to.equal("TASK_STATE_WORKING");
    const texts = events
      .map((e) => resultOf(e).statusUpdate?.status?.message?.parts?.[0]?.text as string | undefined)
      .filter((x) => x !== undefined);
    expect(texts).to.deep.equal(["Echo(turn ", "1): stream please", "Echo(turn 1): stream please"]);
    const final = events.find((e) => metadataOf(e)?.assistantFinal);
    expect(metadataOf(final!)!.assistantFinal).to.deep.equal({ complete: true });
    const usage = events.find((e) => metadataOf(e)?.usage);
    expect(metadataOf(usage!)!.usage).to.deep.equal({ inputTokens: 11, outputTokens: 7, totalTokens: 18 });
    const last = events.at(-1)!;
    expect(stateOf(last)).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(resultOf(last).statusUpdate.status).to.not.have.property("message");
    for (const e of events) {
      const meta = metadataOf(e);
      if (meta) expect(parseIacCodeEventMetadata(meta).ok, JSON.stringify(meta)).to.equal(true);
    }
  });

  it("follow-ups with the same contextId reach the same session; with taskId they continue the task", async () => {
    const first = await t.rpc("SendMessage", { message: userMessage("one") });
    const task = (first.body.result as Json).task as Json;
    const second = await t.rpc("SendMessage", { message: userMessage("two", { contextId: task.contextId }) });
    const task2 = (second.body.result as Json).task as Json;
    expect(task2.id).to.not.equal(task.id);
    expect(task2.contextId).to.equal(task.contextId);
    expect(task2.history.at(-1).parts[0].text).to.equal("Echo(turn 2): two");
    expect(task2.metadata.iac_code.iacCodeSessionId).to.equal(task.metadata.iac_code.iacCodeSessionId);
    const third = await t.rpc("SendMessage", { message: userMessage("three", { taskId: task.id }) });
    const task3 = (third.body.result as Json).task as Json;
    expect(task3.id).to.equal(task.id);
    expect(task3.history.map((m: Json) => m.parts[0].text)).to.deep.equal([
      "one",
      "Echo(turn 1): one",
      "three",
      "Echo(turn 3): three",
    ]);
  });

  it("rejects a taskId that does not exist, belongs to another context, or is malformed", async () => {
    const unknown = await t.rpc("SendMessage", { message: userMessage("x", { taskId: "no-such-task" }) });
    expect(unknown.body.error).to.deep.include({ code: -32001 });
    const first = await t.rpc("SendMessage", { message: userMessage("ctx") });
    const task = (first.body.result as Json).task as Json;
    const other = await t.rpc("SendMessage", {
      message: userMessage("x", { taskId: task.id, contextId: "another-ctx" }),
    });
    expect(other.body.error).to.deep.include({
      code: -32602,
      message: "Task belongs to a different context",
    });
    const bad = await t.rpc("SendMessage", { message: userMessage("x", { contextId: "../bad" }) });
    expect(bad.body.error).to.deep.include({ code: -32602, message: "Invalid A2A id" });
    const long = await t.rpc("SendMessage", { message: userMessage("x", { contextId: "a".repeat(129) }) });
    expect(long.body.error).to.deep.include({ code: -32602 });
    const ok = await t.rpc("SendMessage", { message: userMessage("x", { contextId: "A-z_0.9:ok" }) });
    expect(((ok.body.result as Json).task as Json).contextId).to.equal("A-z_0.9:ok");
  });

  it("rejects messages without messageId, with an agent role, or without parts", async () => {
    const noId = await t.rpc("SendMessage", { message: { role: "ROLE_USER", parts: [{ text: "x" }] } });
    expect(noId.body.error).to.deep.include({ code: -32602 });
    const agent = await t.rpc("SendMessage", { message: userMessage("x", { role: "ROLE_AGENT" }) });
    expect(agent.body.error).to.deep.include({ code: -32602 });
    const noParts = await t.rpc("SendMessage", { message: userMessage("x", { parts: [] }) });
    expect(noParts.body.error).to.deep.include({ code: -32602 });
  });

  it("whitespace-only input fails the task (seed) saying what is missing", async () => {
    const reply = await t.rpc("SendMessage", { message: userMessage("   ") });
    const task = (reply.body.result as Json).task as Json;
    expect(task.status.state).to.equal("TASK_STATE_FAILED");
    expect(task.status.message.parts[0].text).to.equal(
      "The message has no content: send a non-empty text part, a data part, a file or an image.",
    );
  });

  it("streams tool lifecycle, truncated fields, thinking and a file:// artifact", async () => {
    const stream = await openStream(t.url, "SendStreamingMessage", {
      message: userMessage("[[think]] [[tool]] go"),
    });
    const events = await stream.rest();
    const metas = events.map((e) => metadataOf(e)).filter((m): m is Json => !!m);
    for (const meta of metas) expect(parseIacCodeEventMetadata(meta).ok, JSON.stringify(meta)).to.equal(true);
    expect(metas.find((m) => m.thinking)!.thinking).to.deep.equal({
      type: "raw_thinking",
      text: "pondering the VPC",
    });
    const statuses = metas.filter((m) => m.tool).map((m) => m.tool.status);
    expect(statuses).to.deep.equal(["started", "input_delta", "input_complete", "completed"]);
    const inputComplete = metas.find((m) => m.tool?.status === "input_complete")!.tool;
    expect(inputComplete.input.body).to.have.length(4000);
    expect(inputComplete.input.body).to.equal(LONG_TEXT.slice(0, 4000));
    const completed = metas.find((m) => m.tool?.status === "completed")!.tool;
    expect(completed.result.log).to.have.length(4000);
    expect(completed.result.artifact).to.deep.equal({ filename: "vpc.yaml" });
    expect(completed.artifact.uri).to.match(/^file:\/\//);
    expect(metas.find((m) => m.permission)!.permission).to.deep.equal({
      autoApproved: true,
      toolName: "read_file",
      toolUseId: "tool-1",
    });
    const artifactIndex = events.findIndex((e) => resultOf(e).artifactUpdate);
    const completedIndex = events.findIndex((e) => metadataOf(e)?.tool?.status === "completed");
    expect(artifactIndex).to.be.greaterThan(-1).and.lessThan(completedIndex);
    const update = resultOf(events[artifactIndex]).artifactUpdate as Json;
    expect(update.lastChunk).to.equal(true);
    const part = update.artifact.parts[0];
    expect(part.url).to.match(/^file:\/\//);
    expect(part.mediaType).to.equal("text/yaml");
    expect(part.metadata.byteSize).to.equal(39);
    expect(part.metadata.sha256).to.match(/^[0-9a-f]{64}$/);
    expect(readFileSync(fileURLToPath(part.url), "utf8")).to.equal(
      "ROSTemplateFormatVersion: '2015-09-01'\n",
    );
    expect(fileURLToPath(part.url).startsWith(t.settings.artifactDir)).to.equal(true);
    const taskId = resultOf(events[0]).task.id as string;
    const got = await t.rpc("GetTask", { id: taskId });
    expect((got.body.result as Json).artifacts[0].artifactId).to.equal(update.artifact.artifactId);
  });

  it("ends the turn with FAILED and a sanitised text on a fatal runtime error", async () => {
    const reply = await t.rpc("SendMessage", { message: userMessage("[[fatal]]") });
    const task = (reply.body.result as Json).task as Json;
    expect(task.status.state).to.equal("TASK_STATE_FAILED");
    const text = task.status.message.parts[0].text as string;
    expect(text).to.not.include("/home/alice");
    expect(text).to.not.include("sk-abcdef");
    expect(text).to.include("[PATH]");
  });

  it("ends the turn FAILED, retryable, with the code's text and error id on a retryable error", async () => {
    const reply = await t.rpc("SendMessage", { message: userMessage("[[retryable]]") });
    const task = (reply.body.result as Json).task as Json;
    expect(task.status.state).to.equal("TASK_STATE_FAILED");
    expect(task.status.message.parts[0].text).to.equal(
      "The model provider is temporarily unavailable or did not answer in time: retry later (error err-2).",
    );
    expect(task.metadata.iac_code.error).to.deep.equal({
      retryable: true,
      errorId: "err-2",
      code: "MODEL_UNAVAILABLE",
    });
  });

  it("reports missing provider credentials as a sanitised authentication error", async () => {
    const reply = await t.rpc("SendMessage", { message: userMessage("[[auth]]") });
    const task = (reply.body.result as Json).task as Json;
    expect(task.status.state).to.equal("TASK_STATE_FAILED");
    expect(task.status.message.parts[0].text).to.match(
      /^The model provider needs valid credentials: check the API key, then retry \(error \S+\)\.$/,
    );
    expect(task.metadata.iac_code.error.code).to.equal("MODEL_AUTHENTICATION_FAILED");
    expect(JSON.stringify(task)).to.not.include("dashscope");
  });

  it("never leaks an unexpected exception's text", async () => {
    const reply = await t.rpc("SendMessage", { message: userMessage("[[throw]]") });
    const task = (reply.body.result as Json).task as Json;
    expect(task.status.state).to.equal("TASK_STATE_FAILED");
    const text = task.status.message.parts[0].text as string;
    expect(text).to.match(/^An internal error occurred \(error [0-9a-f-]{36}\)\.$/);
    expect(task.metadata.iac_code.error.code).to.equal("RUNTIME_ERROR");
    expect(JSON.stringify(task)).to.not.match(/alice|sk-abc|Bearer/);
  });

  it("localises server texts with metadata.iac_code.preferredLanguage, then Accept-Language", async () => {
    const fr = await t.rpc("SendMessage", {
      message: userMessage(" ", { metadata: { iac_code: { preferredLanguage: "fr-FR" } } }),
    });
    expect(((fr.body.result as Json).task as Json).status.message.parts[0].text).to.equal(
      "Le message n'a pas de contenu : envoyez une partie texte non vide, une partie de données, un fichier ou une image.",
    );
    const ja = await t.rpc(
      "SendMessage",
      { message: userMessage(" ") },
      { "Accept-Language": "ja, en;q=0.5" },
    );
    expect(((ja.body.result as Json).task as Json).status.message.parts[0].text).to.equal(
      "メッセージに内容がありません。空でないテキストパート、データパート、ファイル、または画像を送信してください。",
    );
  });

  it("answers a streaming request's early errors as plain JSON, not SSE", async () => {
    const reply = await post(
      t.url,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "SendStreamingMessage",
        params: { message: userMessage("x", { taskId: "missing" }) },
      }),
      V1,
    );
    expect(reply.contentType).to.equal("application/json");
    expect(reply.body.error).to.deep.include({ code: -32001 });
  });

  it("pauses on a permission request, keeps the stream open, and resumes on the answer", async () => {
    const stream = await openStream(t.url, "SendStreamingMessage", {
      message: userMessage("[[permission]] write it"),
    });
    const head = await stream.until((e) => stateOf(e) === "TASK_STATE_INPUT_REQUIRED");
    const waiting = metadataOf(head.at(-1)!)!;
    const envelope = waiting.input as Json;
    expect(parseInputRequest(envelope).ok, JSON.stringify(envelope)).to.equal(true);
    expect(waiting.permission).to.deep.equal({
      autoApproved: false,
      pending: true,
      toolName: "write_file",
      toolUseId: envelope.toolUseId,
    });
    const taskId = envelope.requestTaskId as string;
    const contextId = envelope.contextId as string;
    // While it waits, GetTask shows the envelope; SubscribeToTask refuses (input-required).
    const got = await t.rpc("GetTask", { id: taskId });
    expect((got.body.result as Json).metadata.iac_code.input.inputId).to.equal(envelope.inputId);
    const sub = await t.rpc("SubscribeToTask", { id: taskId });
    expect(sub.body.error).to.deep.include({ code: -32001 });

    const answer = {
      schemaVersion: 1,
      kind: "permission",
      requestTaskId: taskId,
      inputId: envelope.inputId,
      toolUseId: envelope.toolUseId,
      decision: "allow_once",
    };
    const answerStream = await openStream(t.url, "SendStreamingMessage", {
      message: userMessage("", {
        taskId,
        contextId,
        parts: [{ mediaType: "application/json", data: answer }],
      }),
    });
    const answered = await answerStream.rest();
    expect(Object.keys(resultOf(answered[0]))[0]).to.equal("task");
    const received = answered.map((e) => metadataOf(e)?.inputReceived).find(Boolean);
    expect(received).to.deep.equal({
      kind: "permission",
      inputId: envelope.inputId,
      toolUseId: envelope.toolUseId,
      decision: "allow_once",
    });
    expect(stateOf(answered.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(metadataOf(answered.at(-1)!)).to.not.have.property("input");
    // The original stream saw the continuation too and then closed.
    const tail = await stream.rest();
    const texts = tail
      .map((e) => resultOf(e).statusUpdate?.status?.message?.parts?.[0]?.text)
      .filter(Boolean);
    expect(texts).to.include("Answer allow_once for write_file.");
    expect(isFinalState(tail.at(-1)!)).to.equal(true);
  });

  it("answers a question input with SendMessage (unary) and validates answers", async () => {
    const reply = await t.rpc("SendMessage", { message: userMessage("[[question]]") });
    const task = (reply.body.result as Json).task as Json;
    expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    const envelope = task.metadata.iac_code.input as Json;
    expect(envelope.kind).to.equal("ask_user_question");
    const base = {
      schemaVersion: 1,
      kind: "ask_user_question",
      requestTaskId: task.id,
      inputId: envelope.inputId,
      toolUseId: envelope.toolUseId,
    };
    const send = (data: unknown, extra: Json = {}) =>
      t.rpc("SendMessage", {
        message: userMessage("", {
          taskId: task.id,
          contextId: task.contextId,
          parts: [{ mediaType: "application/json", data }],
          ...extra,
        }),
      });
    const bad: Array<[unknown, string]> = [
      [{ ...base, extra: 1 }, "Permission response payload fields do not match schemaVersion 1."],
      [{ ...base, selectedId: "x", schemaVersion: 2 }, "Permission response schemaVersion must be 1."],
      [
        { ...base, selectedId: "x", requestTaskId: "other" },
        "Permission response taskId does not match requestTaskId.",
      ],
      [{ ...base, selectedId: "x", inputId: "" }, "Permission response correlation fields are required."],
      [
        { ...base, selectedId: "x", inputId: "ask-other" },
        "input_response_mismatch: permission correlation does not match.",
      ],
      [base, "Question answer needs selectedId or freeText."],
    ];
    for (const [data, message] of bad) {
      const r = await send(data);
      expect(r.body.error, message).to.deep.include({ code: -32602, message });
    }
    const twoParts = await t.rpc("SendMessage", {
      message: userMessage("", {
        taskId: task.id,
        contextId: task.contextId,
        parts: [{ mediaType: "application/json", data: { ...base, selectedId: "x" } }, { text: "and more" }],
      }),
    });
    expect(twoParts.body.error).to.deep.include({
      code: -32602,
      message: "Permission responses must contain exactly one application/json DataPart.",
    });
    const ok = await send({ ...base, selectedId: "cn-beijing" });
    const done = (ok.body.result as Json).task as Json;
    expect(done.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(done.history.at(-1).parts[0].text).to.equal("Answer cn-beijing for ask_user_question.");
    const again = await send({ ...base, selectedId: "cn-beijing" });
    expect(again.body.error).to.deep.include({
      code: -32602,
      message: "permission_resume_invalid: pending permission is not active.",
    });
  });

  it("rejects a permission answer that does not name a task", async () => {
    const r = await t.rpc("SendMessage", {
      message: userMessage("", { parts: [{ mediaType: "application/json", data: { kind: "permission" } }] }),
    });
    expect(r.body.error).to.deep.include({
      code: -32602,
      message: "Permission response correlation fields are required.",
    });
  });
});
