// Pure projection of runtime events onto metadata.iac_code of WORKING status
// updates (a2a-iaccode.md §6.8, seed "Mises à jour en streaming"). Tool and
// automatic-permission data need tool_trace; raw thinking needs raw_thinking.
import type { JsonObject } from "@bufbuild/protobuf";
import { pb } from "../../../contract/index.js";
import {
  PIPELINE_EVENTS_EXTENSION,
  type PipelineEnvelope,
  type RuntimeEvent,
} from "../../../runtime/seam.js";
import type { StoredArtifact } from "../../stores/artifact-store.js";
import { boundJson, truncateString } from "./truncate.js";

export interface ExposureOptions {
  toolTrace: boolean;
  rawThinking: boolean;
}

export function artifactMetadata(artifact: StoredArtifact): JsonObject {
  return {
    artifactId: artifact.artifactId,
    filename: artifact.filename,
    mediaType: artifact.mediaType,
    byteSize: artifact.byteSize,
    sha256: artifact.sha256,
    uri: artifact.url,
  };
}

/** Tool-result data without artifact bodies (the artifact is announced separately). */
function stripArtifactBodies(value: unknown, depth = 0): unknown {
  if (depth > 32 || !value || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => stripArtifactBodies(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if ((key === "artifact" || key === "artifacts") && v && typeof v === "object") {
      const items = Array.isArray(v) ? v : [v];
      const cleaned = items.map((item: unknown) =>
        item && typeof item === "object"
          ? Object.fromEntries(
              Object.entries(item as Record<string, unknown>).filter(
                ([k]) => !["content", "bytes", "base64", "raw", "path"].includes(k),
              ),
            )
          : item,
      );
      out[key] = Array.isArray(v) ? cleaned : cleaned[0];
    } else out[key] = stripArtifactBodies(v, depth + 1);
  }
  return out;
}

/**
 * metadata.iac_code content for events that only carry metadata; undefined
 * when the event is not exposed (or is handled elsewhere by the executor).
 */
export function metadataFor(
  event: RuntimeEvent,
  exposure: ExposureOptions,
  artifact?: StoredArtifact,
): JsonObject | undefined {
  switch (event.type) {
    case "tool_use_start":
      return exposure.toolTrace
        ? { tool: { status: "started", toolUseId: event.toolUseId, name: event.name } }
        : undefined;
    case "tool_input_delta":
      return exposure.toolTrace
        ? {
            tool: {
              status: "input_delta",
              toolUseId: event.toolUseId,
              partialJsonLength: event.partialJsonLength,
            },
          }
        : undefined;
    case "tool_use_end":
      return exposure.toolTrace
        ? {
            tool: {
              status: "input_complete",
              toolUseId: event.toolUseId,
              name: event.name,
              input: boundJson(event.input),
            },
          }
        : undefined;
    case "tool_result": {
      if (!exposure.toolTrace) return undefined;
      const tool: JsonObject = {
        status: event.isError ? "failed" : "completed",
        toolUseId: event.toolUseId,
        name: event.name,
        result: boundJson(stripArtifactBodies(event.result)),
      };
      if (artifact) tool.artifact = artifactMetadata(artifact);
      return { tool };
    }
    case "tool_progress":
      if (exposure.toolTrace && event.mcp) {
        return {
          tool: {
            status: "progress",
            toolUseId: event.toolUseId,
            name: event.name,
            mcp: { ...event.mcp },
            mcpProgress: boundJson(event.progress),
          },
        };
      }
      return exposure.toolTrace
        ? {
            tool: {
              status: "progress",
              toolUseId: event.toolUseId,
              name: event.name,
              progress: boundJson(event.progress),
            },
          }
        : undefined;
    case "permission_decided":
      return exposure.toolTrace
        ? {
            // The seed: autoApproved is false when the request was refused.
            permission: { autoApproved: event.allowed, toolName: event.toolName, toolUseId: event.toolUseId },
          }
        : undefined;
    case "mcp_warning":
      return { mcpWarning: event.warning as unknown as JsonObject };
    case "mcp_status":
      return { mcpStatus: event.status as unknown as JsonObject };
    case "thinking_delta":
      return exposure.rawThinking && event.text !== ""
        ? { thinking: { type: "raw_thinking", text: truncateString(event.text) } }
        : undefined;
    case "input_received": {
      const received: JsonObject = { kind: event.kind, inputId: event.inputId, toolUseId: event.toolUseId };
      if (event.decision !== undefined) received.decision = event.decision;
      return { inputReceived: received };
    }
    case "message_end":
      return event.usage
        ? {
            usage: {
              inputTokens: event.usage.inputTokens,
              outputTokens: event.usage.outputTokens,
              totalTokens: event.usage.totalTokens,
            },
          }
        : undefined;
    default:
      return undefined;
  }
}

/** The task state a pipeline update carries: the status of its last envelope. */
export function pipelineTaskState(envelopes: readonly PipelineEnvelope[]): pb.TaskState {
  switch (envelopes.at(-1)?.status) {
    case "input_required":
      return pb.TaskState.INPUT_REQUIRED;
    case "completed":
      return pb.TaskState.COMPLETED;
    case "failed":
      return pb.TaskState.FAILED;
    case "canceled":
      return pb.TaskState.CANCELED;
    default:
      return pb.TaskState.WORKING;
  }
}

/**
 * metadata.iac_code for pipeline envelopes (a2a/pipeline-envelope): one as
 * `pipeline`, several as `pipelineBatch`. Raw thinking needs raw_thinking;
 * the journal keeps it either way.
 */
export function pipelineMetadata(
  envelopes: readonly PipelineEnvelope[],
  exposure: ExposureOptions,
): JsonObject | undefined {
  const shown = envelopes.filter((e) => exposure.rawThinking || e.eventType !== "thinking_delta");
  if (shown.length === 0) return undefined;
  if (shown.length === 1) return { pipeline: shown[0] as unknown as JsonObject };
  return {
    pipelineBatch: {
      schemaVersion: "1.0",
      extensionUri: PIPELINE_EVENTS_EXTENSION,
      events: shown as unknown as JsonObject[],
    },
  };
}
