import { create, toJson, type DescMessage, type JsonObject, type MessageShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import { pb } from "../../src/contract/index.js";
import { encodeJson } from "../../src/contract/fast-protojson.js";
import { nested, streamEvents, task } from "../fixtures/proto-corpus.js";

/** encodeJson gives toJson's value, keys in the same order. */
function same<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): void {
  const expected = JSON.stringify(toJson(schema, message, { alwaysEmitImplicit: false }));
  expect(JSON.stringify(encodeJson(schema, message))).to.equal(expected);
}

describe("contract: encodeJson (the plan-compiled ProtoJSON encoder)", () => {
  it("gives toJson's JSON for a task with every kind of part, nested metadata, long and odd strings", () => {
    same(pb.TaskSchema, task());
  });

  it("gives toJson's JSON for every stream event case", () => {
    for (const event of streamEvents()) same(pb.StreamResponseSchema, event);
  });

  it("writes enums by name (a number the schema lacks as the number), zeros by presence, 64-bit as strings", () => {
    same(pb.TaskStatusSchema, create(pb.TaskStatusSchema, { state: 42 as pb.TaskState }));
    same(pb.GetTaskRequestSchema, create(pb.GetTaskRequestSchema, { id: "t", historyLength: 0 }));
    same(
      pb.ListTasksRequestSchema,
      create(pb.ListTasksRequestSchema, { pageSize: 0, includeArtifacts: false }),
    );
    for (const nanos of [0, 1, 1000, 1_000_000, 999_999_999, 120_000_000])
      same(TimestampSchema, create(TimestampSchema, { seconds: 1_796_423_721n, nanos }));
  });

  it("returns a copy of the metadata (changing the JSON leaves the message as it was)", () => {
    const t = task();
    const json = encodeJson(pb.TaskSchema, t) as {
      artifacts: Array<{ metadata: { iac_code: { empty: string } } }>;
    };
    json.artifacts[0].metadata.iac_code.empty = "changed";
    expect(t.artifacts[0].metadata).to.deep.equal(nested);
  });

  it("answers or refuses as toJson does where the message is out of its range", () => {
    const bad = create(pb.TaskSchema, { id: "t", metadata: { n: Number.NaN } });
    expect(() => toJson(pb.TaskSchema, bad)).to.throw();
    expect(() => encodeJson(pb.TaskSchema, bad)).to.throw(/NaN or Infinity/);
    const early = create(TimestampSchema, { seconds: -70_000_000_000n });
    expect(() => encodeJson(TimestampSchema, early)).to.throw(/0001-01-01/);
    same(FileDescriptorProtoSchema, create(FileDescriptorProtoSchema, { name: "a.proto" }));
  });

  it("hands a metadata with an own __proto__ key to toJson", () => {
    const metadata = JSON.parse('{"a": {"__proto__": {"polluted": true}}, "b": 1}') as JsonObject;
    same(pb.TaskSchema, create(pb.TaskSchema, { id: "t", metadata }));
  });

  it("writes maps of messages (security schemes) as toJson does", () => {
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
});
