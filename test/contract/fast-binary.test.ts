import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import { pb } from "../../src/contract/index.js";
import { encodeBinary } from "../../src/contract/fast-binary.js";
import { nested, streamEvents, task } from "../fixtures/proto-corpus.js";
import { RelayedEventsSchema } from "../../generated/proto/iac_code/a2a/state/v1/relayed_events_pb.js";
import { StoredTaskSchema } from "../../generated/proto/iac_code/a2a/state/v1/stored_task_pb.js";

/** encodeBinary writes exactly toBinary's bytes, and they decode to the message. */
function same<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): Uint8Array {
  const expected = toBinary(schema, message);
  const actual = encodeBinary(schema, message);
  expect(Buffer.from(actual).toString("hex")).to.equal(Buffer.from(expected).toString("hex"));
  return actual;
}

describe("contract: encodeBinary (the plan-compiled protobuf encoder)", () => {
  it("writes toBinary's bytes for a task with every kind of part, nested metadata, long and odd strings", () => {
    const bytes = same(pb.TaskSchema, task());
    expect(fromBinary(pb.TaskSchema, bytes).history[1].parts[0].content.value).to.have.length(70_000);
  });

  it("writes toBinary's bytes for every stream event case", () => {
    for (const event of streamEvents()) same(pb.StreamResponseSchema, event);
  });

  it("writes relayed events so that batches of one, concatenated, are the batch of them all", () => {
    const events = streamEvents();
    const one = (event: pb.StreamResponse) =>
      encodeBinary(RelayedEventsSchema, {
        $typeName: "iac_code.a2a.state.v1.RelayedEvents",
        events: [event],
      });
    const joined = Buffer.concat(events.map(one));
    const all = same(RelayedEventsSchema, create(RelayedEventsSchema, { events }));
    expect(joined.equals(all)).to.equal(true);
    expect(fromBinary(RelayedEventsSchema, joined).events).to.have.length(events.length);
  });

  it("writes explicit-presence zeros, negative enum numbers and 64-bit seconds as toBinary does", () => {
    same(pb.GetTaskRequestSchema, create(pb.GetTaskRequestSchema, { id: "t", historyLength: 0 }));
    same(pb.GetTaskRequestSchema, create(pb.GetTaskRequestSchema, { id: "t" }));
    same(pb.TaskStatusSchema, create(pb.TaskStatusSchema, { state: -3 as pb.TaskState }));
    for (const seconds of [0n, 1n, 2n ** 40n, -5n, 2n ** 62n])
      same(pb.TaskStatusSchema, create(pb.TaskStatusSchema, { timestamp: { seconds, nanos: 999_999_999 } }));
    same(
      pb.ListTasksRequestSchema,
      create(pb.ListTasksRequestSchema, {
        pageSize: 0,
        includeArtifacts: false,
        status: pb.TaskState.COMPLETED,
      }),
    );
  });

  it("keeps the unknown fields of a decoded message", () => {
    const withUnknown = Buffer.concat([
      Buffer.from(toBinary(pb.TaskStatusSchema, create(pb.TaskStatusSchema, { state: pb.TaskState.FAILED }))),
      Buffer.from([0xa0, 0x06, 0x2a, 0xaa, 0x06, 0x02, 0x68, 0x69]), // fields 100 (varint 42) and 101 ("hi")
    ]);
    const decoded = fromBinary(pb.TaskStatusSchema, withUnknown);
    expect(Buffer.from(same(pb.TaskStatusSchema, decoded)).equals(withUnknown)).to.equal(true);
  });

  it("hands schemas it has no plan for (proto2) to toBinary", () => {
    same(
      FileDescriptorProtoSchema,
      create(FileDescriptorProtoSchema, {
        name: "a.proto",
        messageType: [{ name: "A", field: [{ name: "f", number: 1 }] }],
      }),
    );
  });

  it("writes maps of messages (security schemes) as toBinary does", () => {
    same(
      pb.AgentCardSchema,
      create(pb.AgentCardSchema, {
        name: "agent",
        securitySchemes: {
          key: { scheme: { case: "apiKeySecurityScheme", value: { location: "header", name: "X-Key" } } },
        },
      }),
    );
  });

  it("writes the stored task wrapper and survives a message larger than its buffer", () => {
    const big = task();
    big.artifacts[0].parts.push(
      create(pb.PartSchema, { content: { case: "raw", value: new Uint8Array(3 * 1024 * 1024).fill(7) } }),
    );
    same(StoredTaskSchema, create(StoredTaskSchema, { task: big, metadataJson: JSON.stringify(nested) }));
    // The next, small message is written in a buffer of ordinary size again, correctly.
    same(pb.TaskSchema, task());
  });
});
