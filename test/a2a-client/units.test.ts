/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form JSON through `any` (AnyJson) */
// The client's pure parts: text extraction, the task table, auth headers and
// the answer message.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import type { AnyJson } from "../a2a/helpers.js";
import { encodeProtoJson, parseInputAnswer, pb } from "../../src/contract/index.js";
import { authHeaders } from "../../src/a2a/client/auth.js";
import { answerRequest, questionChoice, type InputRequest } from "../../src/cli/a2a-client/inputs.js";
import { taskTable } from "../../src/cli/a2a-client/output.js";
import { replyText } from "../../src/cli/a2a-client/text.js";
import { writePermissionRequest } from "../fixtures/input-requests.js";

const text = (value: string) => ({ content: { case: "text" as const, value } });
const agent = (...parts: string[]) => ({ messageId: "a", role: pb.Role.AGENT, parts: parts.map(text) });
const user = (value: string) => ({ messageId: "u", role: pb.Role.USER, parts: [text(value)] });

describe("a2a-client: text extraction", () => {
  it("prefers the status message, else the trailing run of agent messages", () => {
    const task = (init: Parameters<typeof create<typeof pb.TaskSchema>>[1]) => ({
      case: "task" as const,
      value: create(pb.TaskSchema, init),
    });
    expect(replyText(task({ history: [user("hi"), agent("first"), agent("second")] }))).to.equal(
      "first second",
    );
    expect(replyText(task({ history: [agent("old"), user("hi"), agent("new")] }))).to.equal("new");
    expect(replyText(task({ history: [agent("before"), agent(), agent("after")] }))).to.equal("after");
    expect(
      replyText(task({ status: { message: agent("status", "text") }, history: [agent("history")] })),
    ).to.equal("status text");
    expect(replyText({ case: "message", value: create(pb.MessageSchema, agent("direct")) })).to.equal(
      "direct",
    );
    expect(replyText({ case: undefined })).to.equal("");
  });
});

describe("a2a-client: task table", () => {
  it("prints ids whole, clips the message with ..., maps states, counts and offers the next page", () => {
    const response = create(pb.ListTasksResponseSchema, {
      tasks: [
        {
          id: "task-0123456789-0123456789-0123456789",
          contextId: "context-0123456789-0123456789",
          status: {
            state: pb.TaskState.INPUT_REQUIRED,
            timestamp: timestampFromDate(new Date("2026-01-02T03:04:05.678Z")),
            message: agent("m".repeat(80)),
          },
        },
      ],
      totalSize: 7,
      nextPageToken: "tok",
    });
    const lines = taskTable(response, (token) => `NEXT ${token}`).split("\n");
    expect(lines[0]).to.equal(
      "ID                                     Status          Context                        Updated               Message",
    );
    expect(lines[1]).to.equal(
      `task-0123456789-0123456789-0123456789  input-required  context-0123456789-0123456789  2026-01-02T03:04:05Z  ${"m".repeat(53)}...`,
    );
    expect(lines.slice(2)).to.deep.equal(["Showing 1 of 7 tasks.", "Next page: NEXT tok", ""]);
    expect(taskTable(create(pb.ListTasksResponseSchema, {}), () => "")).to.equal("No A2A tasks found.\n");
  });
});

describe("a2a-client: auth headers", () => {
  it("Bearer beats Basic, Basic needs both parts, the API key is added", () => {
    expect(authHeaders({ token: "t", basicUsername: "u", basicPassword: "p", apiKey: "k" })).to.deep.equal({
      Authorization: "Bearer t",
      "X-API-Key": "k",
    });
    expect(authHeaders({ basicUsername: "u", basicPassword: "p" })).to.deep.equal({
      Authorization: `Basic ${Buffer.from("u:p").toString("base64")}`,
    });
    expect(authHeaders({ basicUsername: "u", apiKey: "k", apiKeyHeader: "X-Key" })).to.deep.equal({
      "X-Key": "k",
    });
  });
});

describe("a2a-client: answers", () => {
  // The runtime's request as the test runtimes raise it, in its A2A envelope.
  const permission = {
    ...writePermissionRequest({ inputId: "permission-1", toolUseId: "call-1" }),
    schemaVersion: 1,
    requestTaskId: "task-1",
    contextId: "ctx-1",
    required: true,
  } as InputRequest;

  it("builds the one data part message on the same task and context", () => {
    const params = answerRequest(permission, { decision: "deny" });
    const json = encodeProtoJson(pb.MessageSchema, create(pb.MessageSchema, params.message)) as AnyJson;
    expect(json).to.deep.include({ role: "ROLE_USER", taskId: "task-1", contextId: "ctx-1" });
    expect(json.parts).to.have.length(1);
    expect(json.parts[0].mediaType).to.equal("application/json");
    expect(parseInputAnswer(json.parts[0].data).ok).to.equal(true);
    expect(json.parts[0].data).to.deep.equal({
      schemaVersion: 1,
      kind: "permission",
      requestTaskId: "task-1",
      inputId: "permission-1",
      toolUseId: "call-1",
      decision: "deny",
    });
  });

  it("reads a typed answer as a number, an id or a label; free text only where allowed", () => {
    expect(questionChoice(permission, "2")).to.deep.equal({ decision: "deny" });
    expect(questionChoice(permission, " allow_once ")).to.deep.equal({ decision: "allow_once" });
    expect(questionChoice(permission, "DENY")).to.deep.equal({ decision: "deny" });
    expect(questionChoice(permission, "sure")).to.equal(undefined);
    const question = { ...permission, kind: "ask_user_question", allowFreeText: true } as InputRequest;
    expect(questionChoice(question, "1")).to.deep.equal({ selectedId: "allow_once" });
    expect(questionChoice(question, "teal")).to.deep.equal({ freeText: "teal" });
    expect(questionChoice({ ...question, allowFreeText: false }, "teal")).to.equal(undefined);
  });
});
