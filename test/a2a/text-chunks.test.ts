import { create, fromBinary, toBinary, equals } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import { streamResponseText, knownProtoJson, TextChunks } from "../../src/a2a/core/turn/text-chunks.js";
import { encodeProtoJson, pb } from "../../src/contract/index.js";

function chunkOf(text: string, messageId: string, session: string): pb.StreamResponse {
  return create(pb.StreamResponseSchema, {
    payload: {
      case: "statusUpdate",
      value: {
        taskId: "task-1",
        contextId: "ctx-1",
        status: {
          state: pb.TaskState.WORKING,
          timestamp: timestampFromMs(Date.now()),
          message: {
            messageId,
            taskId: "task-1",
            contextId: "ctx-1",
            role: pb.Role.AGENT,
            parts: [{ content: { case: "text", value: text } }],
          },
        },
        metadata: { iac_code: { iacCodeSessionId: session } },
      },
    },
  });
}

describe("text chunks from a template", () => {
  const texts = ["chunk-0 ", 'quote " and \\ backslash', "line\nbreak", "ünïcødé 🚀", "x".repeat(5000)];

  it("each chunk is the message `create` would build, and its known ProtoJSON is the generated encoder's", () => {
    let session = "s-1";
    const made: string[] = [];
    const chunks = new TextChunks((text, messageId) => {
      made.push(messageId);
      return chunkOf(text, messageId, session);
    });
    const events = texts.map((text, i) => chunks.next(text, `m-${i}`, session));
    session = "s-2";
    events.push(chunks.next("after the session changed", "m-9", session));
    // The first chunk and the one after the key changed were built the ordinary way.
    expect(made).to.deep.equal(["m-0", "m-9"]);

    for (const [i, event] of events.entries()) {
      const update = event.payload.value as pb.TaskStatusUpdateEvent;
      const message = update.status!.message!;
      const text = i < texts.length ? texts[i] : "after the session changed";
      const expected = chunkOf(text, message.messageId, i < texts.length ? "s-1" : "s-2");
      (expected.payload.value as pb.TaskStatusUpdateEvent).status!.timestamp = update.status!.timestamp;
      // The same message as create() builds: equal, and equal once through the wire.
      expect(equals(pb.StreamResponseSchema, event, expected)).to.equal(true);
      expect(
        equals(
          pb.StreamResponseSchema,
          fromBinary(pb.StreamResponseSchema, toBinary(pb.StreamResponseSchema, event)),
          expected,
        ),
      ).to.equal(true);
      expect(knownProtoJson(event)).to.deep.equal(encodeProtoJson(pb.StreamResponseSchema, event));
      // Its JSON text from the template's is the text of the generated encoder's JSON.
      expect(streamResponseText(event)).to.equal(
        JSON.stringify(encodeProtoJson(pb.StreamResponseSchema, event)),
      );
    }
    // Chunks do not share what differs between them.
    const [a, b] = events.map((e) => (e.payload.value as pb.TaskStatusUpdateEvent).status!);
    expect(a).to.not.equal(b);
    expect(a.message).to.not.equal(b.message);
    expect(a.message!.parts).to.not.equal(b.message!.parts);
  });

  it("an event made elsewhere has no known ProtoJSON and is encoded by the generated encoder", () => {
    const event = chunkOf("plain", "m-1", "s-1");
    expect(knownProtoJson(event)).to.equal(undefined);
    expect(streamResponseText(event)).to.equal(
      JSON.stringify(encodeProtoJson(pb.StreamResponseSchema, event)),
    );
  });
});
