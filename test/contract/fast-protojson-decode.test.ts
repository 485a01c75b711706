import { equals, fromJson, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { expect } from "chai";
import { decodeProtoJson, pb } from "../../src/contract/index.js";
import { decodeJsonFast } from "../../src/contract/fast-protojson-decode.js";
import { long, nested, oddText } from "../fixtures/proto-corpus.js";

const reference = (schema: DescMessage, json: unknown) =>
  fromJson(schema, json as JsonValue, { ignoreUnknownFields: true });

/** The fast path decodes it, to what fromJson makes of it. */
function fast(schema: DescMessage, json: unknown): void {
  const decoded = decodeJsonFast(schema, json);
  expect(decoded, JSON.stringify(json).slice(0, 200)).to.not.equal(undefined);
  const expected = reference(schema, json);
  expect(equals(schema, decoded!, expected)).to.equal(true);
  expect(decoded).to.deep.equal(expected);
}

/** The fast path gives up on it, and decodeProtoJson answers as fromJson does. */
function slow(schema: DescMessage, json: unknown): void {
  expect(decodeJsonFast(schema, json), JSON.stringify(json)).to.equal(undefined);
  let expected: unknown;
  try {
    expected = reference(schema, json);
  } catch (error) {
    expect(() => decodeProtoJson(schema, json)).to.throw((error as Error).message);
    return;
  }
  expect(decodeProtoJson(schema, json)).to.deep.equal(expected);
}

/** The corpus's metadata, without its lone surrogate. */
const metadata = { ...nested, iac_code: { ...nested.iac_code, odd: "fine" } };

const message = {
  messageId: "m-1",
  contextId: "c-1",
  role: "ROLE_USER",
  parts: [
    { text: "héllo wörld 🚀 \u0000 中文 \u2028 end" },
    { text: long(300), metadata, mediaType: "text/plain" },
    { url: "https://example.com/a.png", filename: "a.png", mediaType: "image/png" },
    { data: { a: [1, "two", null, true, { b: [] }], c: {} } },
    { data: "a string" },
    { data: null },
    { data: [1, 2] },
  ],
  metadata: { iac_code: { cwd: "/tmp/w", credentials: ["a"] }, n: -0.5 },
  extensions: ["https://example.com/ext"],
  referenceTaskIds: ["t-0"],
  unknownField: { ignored: true },
};

describe("contract: decodeJsonFast (the plan-compiled ProtoJSON decoder)", () => {
  it("decodes requests as fromJson does: every part kind, metadata, configuration, camelCase and snake_case names", () => {
    fast(pb.SendMessageRequestSchema, { message });
    fast(pb.SendMessageRequestSchema, {
      tenant: "",
      message: { ...message, role: "ROLE_AGENT" },
      configuration: {
        acceptedOutputModes: ["text/plain"],
        historyLength: 0,
        returnImmediately: true,
        taskPushNotificationConfig: { url: "https://example.com/hook", token: "t" },
      },
      metadata: {},
    });
    fast(pb.SendMessageRequestSchema, {
      message: { message_id: "m", context_id: "c", task_id: "t", role: "ROLE_USER", parts: [{ text: "x" }] },
    });
    fast(pb.GetTaskRequestSchema, { id: "t", historyLength: 3 });
    fast(pb.ListTasksRequestSchema, { contextId: "c", status: "TASK_STATE_WORKING", pageSize: 10 });
    fast(pb.CancelTaskRequestSchema, { id: "t", metadata: { why: "bored" } });
  });

  it("gives up on what it is not sure of; decodeProtoJson then answers (or refuses) as fromJson does", () => {
    slow(pb.SendMessageRequestSchema, { message: { ...message, role: 1 } });
    slow(pb.SendMessageRequestSchema, { message: { ...message, role: "ROLE_NOBODY" } });
    slow(pb.SendMessageRequestSchema, { message: { ...message, contextId: null } });
    slow(pb.SendMessageRequestSchema, { message: { ...message, messageId: 7 } });
    slow(pb.SendMessageRequestSchema, { message: { ...message, message_id: "twice" } });
    slow(pb.SendMessageRequestSchema, { message: { ...message, parts: [{ text: "a", url: "b" }] } });
    slow(pb.SendMessageRequestSchema, { message: { ...message, parts: [{ raw: "aGVsbG8=" }] } });
    slow(pb.SendMessageRequestSchema, { message: { ...message, metadata: [1] } });
    slow(pb.SendMessageRequestSchema, { message: { ...message, parts: "text" } });
    slow(pb.GetTaskRequestSchema, { id: "t", historyLength: "3" });
    slow(pb.GetTaskRequestSchema, { id: "t", historyLength: 2 ** 31 });
    slow(pb.ListTasksRequestSchema, { statusTimestampAfter: "2026-01-01T00:00:00Z" });
    slow(pb.SendMessageRequestSchema, [message]);
    // A lone surrogate is not UTF-8, in a text, a metadata key or value, or a data part.
    slow(pb.SendMessageRequestSchema, { message: { ...message, parts: [{ text: oddText }] } });
    slow(pb.SendMessageRequestSchema, { message: { ...message, metadata: { "\ud800": 1 } } });
    slow(pb.SendMessageRequestSchema, { message: { ...message, metadata: { a: ["\udc00"] } } });
    slow(pb.SendMessageRequestSchema, { message: { ...message, parts: [{ data: { x: "\ud800" } }] } });
    // An own "__proto__" key (JSON.parse makes one) is not assigned as a plain key would be.
    const proto = JSON.parse('{"a": {"__proto__": {"polluted": true}}}') as object;
    slow(pb.SendMessageRequestSchema, { message: { ...message, metadata: proto } });
    slow(pb.SendMessageRequestSchema, { message: { ...message, parts: [{ data: proto }] } });
  });

  it("returns metadata the caller's JSON does not share", () => {
    const json = { message: structuredClone(message) };
    const decoded = decodeJsonFast(pb.SendMessageRequestSchema, json)!;
    json.message.metadata.iac_code.cwd = "/elsewhere";
    expect((decoded.message!.metadata!.iac_code as { cwd: string }).cwd).to.equal("/tmp/w");
  });
});
