// Reading @a2a-js/sdk stream events in the pipeline tests: a user message
// request, and the state, metadata.iac_code and pipeline envelopes of a status update.
import { SendMessageRequest, type StreamResponse, type TaskState } from "@a2a-js/sdk";
import type { PipelineEnvelope } from "../../src/runtime/seam.js";

export type Meta = Record<string, unknown>;

/** A SendMessage request of a user message with these parts (and extra message fields). */
export function request(parts: unknown[], extra: Meta = {}): SendMessageRequest {
  return SendMessageRequest.fromJSON({
    message: { messageId: `m-${Math.random().toString(16).slice(2)}`, role: "ROLE_USER", parts, ...extra },
  });
}

/** The task state of a status update. */
export function stateOf(event: StreamResponse): TaskState | undefined {
  return event.payload?.$case === "statusUpdate" ? event.payload.value.status?.state : undefined;
}

/** metadata.iac_code of a status update ({} for anything else). */
export function iacOf(event: StreamResponse): Meta {
  return ((event.payload?.$case === "statusUpdate" ? event.payload.value.metadata?.iac_code : undefined) ??
    {}) as Meta;
}

/** The pipeline envelopes of a status update (single or batched). */
export function envelopesOf(event: StreamResponse): PipelineEnvelope[] {
  const iac = iacOf(event);
  if (iac.pipeline) return [iac.pipeline as PipelineEnvelope];
  return (iac.pipelineBatch as { events?: PipelineEnvelope[] } | undefined)?.events ?? [];
}
