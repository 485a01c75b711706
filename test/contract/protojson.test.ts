// ProtoJSON round trip of the A2A wire: messages built with protobuf-es encode
// to the exact JSON field names of A2A 1.0 (a2a-spec.md §1.3, §2.1), satisfy the
// derived a2a/protojson schemas, and decode back — from camelCase, from proto
// snake_case names, and with unknown fields ignored.
import { create, equals, fromJson, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import {
  decodeProtoJson,
  encodeProtoJson,
  pb,
  ProtoJsonError,
  schemaIndex,
  violations,
  type SchemaName,
} from "../../src/contract/index.js";

const PNG_BYTES = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe]);
const PNG_BASE64 = "iVBORw0KGgr//g==";
const STATUS_TIME = new Date(Date.UTC(2026, 0, 15, 9, 30, 12, 345));

function buildTask(): pb.Task {
  return create(pb.TaskSchema, {
    id: "task-1",
    contextId: "ctx-1",
    status: { state: pb.TaskState.WORKING, timestamp: timestampFromDate(STATUS_TIME) },
    history: [
      {
        messageId: "msg-1",
        contextId: "ctx-1",
        taskId: "task-1",
        role: pb.Role.USER,
        parts: [
          { content: { case: "text", value: "Create a VPC with two vSwitches." } },
          { content: { case: "raw", value: PNG_BYTES }, mediaType: "image/png", filename: "sketch.png" },
        ],
        metadata: { iac_code: { cwd: "/absolute/path/to/project" } },
        referenceTaskIds: ["task-0"],
      },
    ],
    artifacts: [
      {
        artifactId: "art-1",
        name: "vpc.yaml",
        parts: [
          {
            content: { case: "url", value: "file:///var/lib/iac-code/a2a/artifacts/art-1/vpc.yaml" },
            mediaType: "text/yaml",
            filename: "vpc.yaml",
            metadata: { byteSize: 52, sha256: "9f2b5c7d" },
          },
          {
            // Part.data is a google.protobuf.Value message in protobuf-es.
            content: {
              case: "data",
              value: fromJson(ValueSchema, { Resources: { Vpc: { Type: "ALIYUN::ECS::VPC" } } }),
            },
          },
        ],
      },
    ],
    metadata: { iac_code: { iacCodeSessionId: "session-1" } },
  });
}

function buildStatusUpdate(): pb.StreamResponse {
  return create(pb.StreamResponseSchema, {
    payload: {
      case: "statusUpdate",
      value: {
        taskId: "task-1",
        contextId: "ctx-1",
        status: {
          state: pb.TaskState.WORKING,
          message: {
            messageId: "task-1-message",
            role: pb.Role.AGENT,
            parts: [{ content: { case: "text", value: "Here is the ROS template..." } }],
          },
        },
        metadata: { iac_code: { tool: { status: "started", toolUseId: "toolu_01", name: "write_file" } } },
      },
    },
  });
}

function buildArtifactUpdate(): pb.StreamResponse {
  return create(pb.StreamResponseSchema, {
    payload: {
      case: "artifactUpdate",
      value: {
        taskId: "task-1",
        contextId: "ctx-1",
        artifact: { artifactId: "art-1", parts: [{ content: { case: "text", value: "hi" } }] },
        lastChunk: true,
      },
    },
  });
}

function expectValid(name: SchemaName, json: unknown): void {
  const { validate } = schemaIndex[name];
  expect(validate(json), JSON.stringify(violations(validate), null, 2)).to.equal(true);
}

function roundTrip<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>, json: unknown): void {
  const decoded = decodeProtoJson(schema, json);
  expect(equals(schema, decoded, message), JSON.stringify(json)).to.equal(true);
}

describe("ProtoJSON wire form", () => {
  describe("Task", () => {
    const task = buildTask();
    const json = encodeProtoJson(pb.TaskSchema, task);

    it("uses the A2A 1.0 JSON field names and encodings", () => {
      expect(json).to.deep.equal({
        id: "task-1",
        contextId: "ctx-1",
        status: { state: "TASK_STATE_WORKING", timestamp: "2026-01-15T09:30:12.345Z" },
        artifacts: [
          {
            artifactId: "art-1",
            name: "vpc.yaml",
            parts: [
              {
                url: "file:///var/lib/iac-code/a2a/artifacts/art-1/vpc.yaml",
                metadata: { byteSize: 52, sha256: "9f2b5c7d" },
                filename: "vpc.yaml",
                mediaType: "text/yaml",
              },
              { data: { Resources: { Vpc: { Type: "ALIYUN::ECS::VPC" } } } },
            ],
          },
        ],
        history: [
          {
            messageId: "msg-1",
            contextId: "ctx-1",
            taskId: "task-1",
            role: "ROLE_USER",
            parts: [
              { text: "Create a VPC with two vSwitches." },
              { raw: PNG_BASE64, filename: "sketch.png", mediaType: "image/png" },
            ],
            metadata: { iac_code: { cwd: "/absolute/path/to/project" } },
            referenceTaskIds: ["task-0"],
          },
        ],
        metadata: { iac_code: { iacCodeSessionId: "session-1" } },
      });
    });

    it("writes timestamps as RFC 3339 UTC with Z", () => {
      const status = (json as { status: { timestamp: string } }).status;
      expect(status.timestamp).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
      const whole = create(pb.TaskStatusSchema, {
        state: pb.TaskState.COMPLETED,
        timestamp: timestampFromDate(new Date(Date.UTC(2026, 0, 1))),
      });
      expect(encodeProtoJson(pb.TaskStatusSchema, whole)).to.deep.equal({
        state: "TASK_STATE_COMPLETED",
        timestamp: "2026-01-01T00:00:00Z",
      });
    });

    it("satisfies a2a/protojson/Task", () => {
      expectValid("a2a/protojson/Task", json);
    });

    it("decodes back to an equal message", () => {
      roundTrip(pb.TaskSchema, task, json);
    });

    it("decodes proto snake_case names", () => {
      const snake = {
        id: "task-1",
        context_id: "ctx-1",
        status: { state: "TASK_STATE_WORKING", timestamp: "2026-01-15T09:30:12.345Z" },
        artifacts: [
          {
            artifact_id: "art-1",
            name: "vpc.yaml",
            parts: [
              {
                url: "file:///var/lib/iac-code/a2a/artifacts/art-1/vpc.yaml",
                metadata: { byteSize: 52, sha256: "9f2b5c7d" },
                filename: "vpc.yaml",
                media_type: "text/yaml",
              },
              { data: { Resources: { Vpc: { Type: "ALIYUN::ECS::VPC" } } } },
            ],
          },
        ],
        history: [
          {
            message_id: "msg-1",
            context_id: "ctx-1",
            task_id: "task-1",
            role: "ROLE_USER",
            parts: [
              { text: "Create a VPC with two vSwitches." },
              { raw: PNG_BASE64, filename: "sketch.png", media_type: "image/png" },
            ],
            metadata: { iac_code: { cwd: "/absolute/path/to/project" } },
            reference_task_ids: ["task-0"],
          },
        ],
        metadata: { iac_code: { iacCodeSessionId: "session-1" } },
      };
      roundTrip(pb.TaskSchema, task, snake);
    });

    it("ignores unknown fields on input", () => {
      const withUnknown = {
        ...(json as Record<string, unknown>),
        tckUnknownField: "ignored",
        kind: "task",
        status: {
          state: "TASK_STATE_WORKING",
          timestamp: "2026-01-15T09:30:12.345Z",
          extra: { nested: true },
        },
      };
      roundTrip(pb.TaskSchema, task, withUnknown);
    });

    it("accepts enum numbers and URL-safe unpadded base64 on input", () => {
      const json2 = structuredClone(json) as {
        status: { state: unknown };
        history: { role: unknown; parts: { raw?: string }[] }[];
      };
      json2.status.state = 2;
      json2.history[0].role = 1;
      json2.history[0].parts[1].raw = PNG_BASE64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      roundTrip(pb.TaskSchema, task, json2);
    });

    it("rejects a wrongly typed field with a ProtoJsonError", () => {
      expect(() => decodeProtoJson(pb.TaskSchema, { id: 42 })).to.throw(ProtoJsonError);
      expect(() => decodeProtoJson(pb.TaskSchema, { status: { state: 7.5 } })).to.throw(ProtoJsonError);
      expect(() => decodeProtoJson(pb.TaskSchema, "task-1")).to.throw(ProtoJsonError);
    });

    it("decodes an unknown enum name (a v0.3 state) as UNSPECIFIED, so REQUIRED checks must follow", () => {
      // ignoreUnknownFields also drops unknown enum names: the decoder does not
      // reject them, the server's required-field validation has to.
      const decoded = decodeProtoJson(pb.TaskSchema, { id: "t", status: { state: "working" } });
      expect(decoded.status?.state).to.equal(pb.TaskState.UNSPECIFIED);
    });

    it("is rejected by the schema when written with snake_case or the UNSPECIFIED state", () => {
      const { validate } = schemaIndex["a2a/protojson/Task"];
      expect(validate({ ...(json as object), context_id: "ctx-1" })).to.equal(false);
      expect(violations(validate)).to.deep.include({
        path: "/context_id",
        keyword: "additionalProperties",
        message: "must NOT have additional properties",
        params: { additionalProperty: "context_id" },
      });
      expect(validate({ id: "t", status: { state: "TASK_STATE_UNSPECIFIED" } })).to.equal(false);
      expect(violations(validate).map((v) => v.path)).to.include("/status/state");
    });
  });

  describe("StreamResponse", () => {
    it("encodes a status update under statusUpdate with ROLE_AGENT and metadata.iac_code", () => {
      const message = buildStatusUpdate();
      const json = encodeProtoJson(pb.StreamResponseSchema, message);
      expect(json).to.deep.equal({
        statusUpdate: {
          taskId: "task-1",
          contextId: "ctx-1",
          status: {
            state: "TASK_STATE_WORKING",
            message: {
              messageId: "task-1-message",
              role: "ROLE_AGENT",
              parts: [{ text: "Here is the ROS template..." }],
            },
          },
          metadata: { iac_code: { tool: { status: "started", toolUseId: "toolu_01", name: "write_file" } } },
        },
      });
      expectValid("a2a/protojson/StreamResponse", json);
      expectValid("a2a/protojson/TaskStatusUpdateEvent", (json as { statusUpdate: unknown }).statusUpdate);
      expectValid("a2a/iac-code-event-metadata", {
        tool: { status: "started", toolUseId: "toolu_01", name: "write_file" },
      });
      roundTrip(pb.StreamResponseSchema, message, json);
    });

    it("encodes an artifact update under artifactUpdate", () => {
      const message = buildArtifactUpdate();
      const json = encodeProtoJson(pb.StreamResponseSchema, message);
      expect(json).to.deep.equal({
        artifactUpdate: {
          taskId: "task-1",
          contextId: "ctx-1",
          artifact: { artifactId: "art-1", parts: [{ text: "hi" }] },
          lastChunk: true,
        },
      });
      expectValid("a2a/protojson/StreamResponse", json);
      roundTrip(pb.StreamResponseSchema, message, json);
    });

    it("encodes a task event under task", () => {
      const message = create(pb.StreamResponseSchema, { payload: { case: "task", value: buildTask() } });
      const json = encodeProtoJson(pb.StreamResponseSchema, message) as Record<string, unknown>;
      expect(Object.keys(json)).to.deep.equal(["task"]);
      expectValid("a2a/protojson/StreamResponse", json);
      roundTrip(pb.StreamResponseSchema, message, json);
    });

    it("decodes snake_case names and ignores unknown fields", () => {
      const message = buildStatusUpdate();
      roundTrip(pb.StreamResponseSchema, message, {
        status_update: {
          task_id: "task-1",
          context_id: "ctx-1",
          status: {
            state: "TASK_STATE_WORKING",
            message: {
              message_id: "task-1-message",
              role: "ROLE_AGENT",
              parts: [{ text: "Here is the ROS template..." }],
            },
          },
          metadata: { iac_code: { tool: { status: "started", toolUseId: "toolu_01", name: "write_file" } } },
          final: false,
        },
        tckExtraParam: 1,
      });
    });

    it("rejects two payloads at once", () => {
      const json = {
        statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" } },
        artifactUpdate: { taskId: "t", contextId: "c", artifact: { artifactId: "a", parts: [] } },
      };
      const { validate } = schemaIndex["a2a/protojson/StreamResponse"];
      expect(validate(json)).to.equal(false);
      expect(() => decodeProtoJson(pb.StreamResponseSchema, json)).to.throw(ProtoJsonError);
    });
  });
});
