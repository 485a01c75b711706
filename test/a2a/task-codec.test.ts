// The stored form of a task (src/a2a/stores/task-codec.ts): protobuf binary of
// iac_code.a2a.state.v1.StoredTask, the metadata as JSON text, the artifacts
// left to the artifact index; what does not read back is refused.
import { expect } from "chai";
import { create, equals, toBinary } from "@bufbuild/protobuf";
import { pb } from "../../src/contract/index.js";
import { StoredTaskSchema } from "../../generated/proto/iac_code/a2a/state/v1/stored_task_pb.js";
import { decodeTask, encodeTask, UnreadableRecordError } from "../../src/a2a/stores/task-codec.js";

const metadata = {
  iac_code: { iacCodeSessionId: "s-1", usage: { inputTokens: 12, ratio: 0.25 }, tags: ["a", "é", "🚀"] },
  empty: {},
  flag: false,
  none: null,
};

function task(withMetadata: boolean): pb.Task {
  return create(pb.TaskSchema, {
    id: "t-1",
    contextId: "c-1",
    status: { state: pb.TaskState.INPUT_REQUIRED, timestamp: { seconds: 1n, nanos: 5 } },
    history: [
      { messageId: "m-1", role: pb.Role.USER, parts: [{ content: { case: "text", value: "hi" } }], metadata },
    ],
    artifacts: [{ artifactId: "a-1", parts: [{ content: { case: "text", value: "out" } }] }],
    ...(withMetadata ? { metadata } : {}),
  });
}

describe("a2a: stored task codec", () => {
  it("reads back the task it wrote, metadata included, artifacts left out", () => {
    const read = decodeTask("t-1", encodeTask(task(true)));
    expect(read.metadata).to.deep.equal(metadata);
    expect(read.artifacts).to.have.length(0);
    expect(equals(pb.TaskSchema, read, { ...task(true), artifacts: [] })).to.equal(true);
  });

  it("reads back a task without metadata as one without metadata", () => {
    const read = decodeTask("t-1", encodeTask(task(false)));
    expect(read.metadata).to.equal(undefined);
    expect(read.history[0].metadata).to.deep.equal(metadata);
  });

  it("leaves the task it encodes unchanged", () => {
    const original = task(true);
    encodeTask(original);
    expect(original.metadata).to.deep.equal(metadata);
    expect(original.artifacts).to.have.length(1);
  });

  const unreadable: Array<[string, Uint8Array, RegExp]> = [
    ["bytes that are not a stored task", Buffer.from("not a task"), /task t-1 does not decode/],
    [
      "metadata that is not JSON",
      toBinary(StoredTaskSchema, create(StoredTaskSchema, { task: { id: "t-1" }, metadataJson: "{" })),
      /task t-1 does not decode/,
    ],
    [
      "metadata that is not a JSON object",
      toBinary(StoredTaskSchema, create(StoredTaskSchema, { task: { id: "t-1" }, metadataJson: "[1]" })),
      /metadata is not an object/,
    ],
    ["another task", encodeTask(create(pb.TaskSchema, { id: "t-2" })), /task t-1 holds task t-2/],
  ];
  for (const [what, body, message] of unreadable) {
    it(`refuses ${what} as an unreadable record`, () => {
      expect(() => decodeTask("t-1", body))
        .to.throw(UnreadableRecordError)
        .with.property("message")
        .that.matches(message);
    });
  }
});
