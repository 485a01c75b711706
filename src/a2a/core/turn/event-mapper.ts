// The one place a runtime event becomes A2A (a2a-iaccode.md §6.8, seed "Mises
// à jour en streaming"): one switch over RuntimeEvent.type projects each event
// onto a WORKING status update (text, or metadata.iac_code: tool data needs
// tool_trace, raw thinking raw_thinking), and keeps what the end of the turn
// reports (the final answer, tokens, a failure, a pipeline's end), in the role
// of a2a-js's ResultManager. Input waits go to input-waits.ts, events out
// through the publisher.
import { randomUUID } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import { pb } from "../../../contract/index.js";
import { t } from "../../../i18n/index.js";
import { ERROR_CODE_MESSAGES, errorCodeFor } from "../../../runtime/errors.js";
import {
  PIPELINE_EVENTS_EXTENSION,
  type AgentSession,
  type PipelineEnvelope,
  type RuntimeErrorCode,
  type RuntimeEvent,
} from "../../../runtime/seam.js";
import { addModelTokens, type ModelTokens } from "../../../server/model-tokens.js";
import type { ArtifactStore, StoredArtifact } from "../../stores/artifact-store.js";
import { sanitizeClientText } from "../sanitize.js";
import { iacCode } from "../task-record.js";
import type { InputWaits } from "./input-waits.js";
import { artifactMetadata, type TurnPublisher } from "./publisher.js";
import { boundJson, truncateString } from "./truncate.js";

export interface ExposureOptions {
  toolTrace: boolean;
  rawThinking: boolean;
}

export interface MapperDeps {
  exposure: ExposureOptions;
  /** Where artifact payloads are written. */
  artifactFiles: ArtifactStore;
  logger: Logger;
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

/** The task state a pipeline update carries: the status of its last envelope (WORKING by default). */
const PIPELINE_STATES: Partial<Record<string, pb.TaskState>> = {
  input_required: pb.TaskState.INPUT_REQUIRED,
  completed: pb.TaskState.COMPLETED,
  failed: pb.TaskState.FAILED,
  canceled: pb.TaskState.CANCELED,
};

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

/** Pipeline envelopes published only once a session backup holds them (a2a-iaccode.md §12.3). */
const GATED = new Set([
  "pipeline_completed",
  "pipeline_failed",
  "pipeline_canceled",
  "pipeline_handoff_ready",
]);

export class EventMapper {
  /** The text of the turn's last model message that did not call a tool: its final answer. */
  private finalText = "";
  readonly tokens = { input: 0, output: 0 };
  /** The same tokens by provider and model (one entry per model the turn called). */
  readonly tokensByModel = new Map<string, ModelTokens>();
  failure?: { state: pb.TaskState; text: string; error: JsonObject };
  /** The turn's end was held back by a failed critical backup (blocked()). */
  private backupBlocked = false;
  /**
   * A pipeline update that ends the task (COMPLETED / FAILED / CANCELED): the
   * end of the turn, published when the turn is over (so the context is free
   * the moment a client sees it). Terminal updates that follow one another
   * (step_failed, then pipeline_completed) are joined into that one update;
   * anything else that follows publishes the ones held first, as WORKING.
   */
  private pipelineEnd?: { state: pb.TaskState; envelopes: PipelineEnvelope[]; cleanupOnly?: JsonObject };

  constructor(
    private readonly deps: MapperDeps,
    private readonly out: TurnPublisher,
    private readonly waits: InputWaits,
  ) {}

  private working(metadata: JsonObject): void {
    this.out.status(pb.TaskState.WORKING, { metadata });
  }
  private tool(tool: JsonObject): void {
    this.working({ tool });
  }

  async map(event: RuntimeEvent, session: AgentSession): Promise<void> {
    if (event.type !== "pipeline") this.releasePipelineEnd();
    const { toolTrace, rawThinking } = this.deps.exposure;
    switch (event.type) {
      case "text_delta":
        if (event.text !== "") this.out.status(pb.TaskState.WORKING, { text: event.text, delta: true });
        return;
      case "thinking_delta":
        if (rawThinking && event.text !== "")
          this.working({ thinking: { type: "raw_thinking", text: truncateString(event.text) } });
        return;
      case "message_end": {
        if (event.stopReason !== "tool_use" && event.text.trim() !== "") this.finalText = event.text;
        this.tokens.input += event.usage?.inputTokens ?? 0;
        this.tokens.output += event.usage?.outputTokens ?? 0;
        if (!event.usage) return;
        addModelTokens(this.tokensByModel, event.usage);
        const { inputTokens, outputTokens, totalTokens } = event.usage;
        this.working({ usage: { inputTokens, outputTokens, totalTokens } });
        return;
      }
      case "tool_use_start":
        if (toolTrace) this.tool({ status: "started", toolUseId: event.toolUseId, name: event.name });
        return;
      case "tool_input_delta": {
        const { toolUseId, partialJsonLength } = event;
        if (toolTrace) this.tool({ status: "input_delta", toolUseId, partialJsonLength });
        return;
      }
      case "tool_use_end": {
        const { toolUseId, name } = event;
        if (toolTrace)
          this.tool({ status: "input_complete", toolUseId, name, input: boundJson(event.input) });
        return;
      }
      case "tool_result": {
        let stored: StoredArtifact | undefined;
        if (event.artifact) {
          try {
            stored = await this.deps.artifactFiles.save(event.artifact);
            this.out.artifact(stored);
          } catch (error) {
            this.deps.logger.warn({ err: error, taskId: this.out.record.task.id }, "artifact not stored");
          }
        }
        if (!toolTrace) return;
        const tool: JsonObject = {
          status: event.isError ? "failed" : "completed",
          toolUseId: event.toolUseId,
          name: event.name,
          result: boundJson(stripArtifactBodies(event.result)),
        };
        if (stored) tool.artifact = artifactMetadata(stored);
        this.tool(tool);
        return;
      }
      case "tool_progress": {
        if (!toolTrace) return;
        const base = { status: "progress", toolUseId: event.toolUseId, name: event.name };
        const progress = boundJson(event.progress);
        this.tool(
          event.mcp ? { ...base, mcp: { ...event.mcp }, mcpProgress: progress } : { ...base, progress },
        );
        return;
      }
      case "permission_decided":
        // The seed: autoApproved is false when the request was refused.
        if (toolTrace)
          this.working({
            permission: { autoApproved: event.allowed, toolName: event.toolName, toolUseId: event.toolUseId },
          });
        return;
      case "mcp_warning":
        // a2a-iaccode.md §6.7: the warning is also agent text, so that a plain client shows it.
        this.out.status(pb.TaskState.WORKING, {
          text: `MCP warning: ${event.warning.message}`,
          metadata: { mcpWarning: event.warning as unknown as JsonObject },
        });
        return;
      case "mcp_status":
        this.working({ mcpStatus: event.status as unknown as JsonObject });
        return;
      case "input_required":
        await this.waits.required(
          event.request,
          session,
          event.pipeline && pipelineMetadata(event.pipeline, this.deps.exposure),
        );
        return;
      case "input_received": {
        const pipeline = event.pipeline && pipelineMetadata(event.pipeline, this.deps.exposure);
        if (!this.waits.received(event.inputId)) {
          if (pipeline) this.working(pipeline);
          return;
        }
        const received: JsonObject = { kind: event.kind, inputId: event.inputId, toolUseId: event.toolUseId };
        if (event.decision !== undefined) received.decision = event.decision;
        this.working({ inputReceived: received, ...pipeline });
        return;
      }
      case "pipeline":
        this.pipeline(event.envelopes, event.cleanupOnly as unknown as JsonObject | undefined);
        return;
      case "error": {
        // The runtime logged the detail (endpoint, status) under this errorId; its text is already localised.
        const errorId = event.errorId ?? randomUUID();
        const code = event.code ?? errorCodeFor(event.kind);
        // A coded event's text is the code's catalogue text (built by the runtime, kept as it is);
        // without a code, a fatal event's own text is kept, sanitised, and the others get the code's.
        const text =
          event.code !== undefined
            ? event.message
            : event.kind === "fatal"
              ? sanitizeClientText(event.message)
              : undefined;
        this.fail(code, errorId, event.kind === "retryable", text);
        return;
      }
      default:
        // The other events (message_start, ...) are not exposed.
        return;
    }
  }

  /** A pipeline update: published, or held when it ends the task (see pipelineEnd). */
  private pipeline(envelopes: PipelineEnvelope[], cleanupOnly: JsonObject | undefined): void {
    const metadata = {
      ...pipelineMetadata(envelopes, this.deps.exposure),
      ...(cleanupOnly ? { cleanupOnly } : {}),
    };
    if (Object.keys(metadata).length === 0) return;
    // A cleanup-only turn ends the task with its summary, like a pipeline run's end.
    const state = cleanupOnly
      ? cleanupOnly.status === "completed"
        ? pb.TaskState.COMPLETED
        : pb.TaskState.FAILED
      : (PIPELINE_STATES[envelopes.at(-1)?.status ?? ""] ?? pb.TaskState.WORKING);
    if (state === pb.TaskState.WORKING || state === pb.TaskState.INPUT_REQUIRED) {
      this.releasePipelineEnd();
      // A notice while a wait is open (backup_blocked) keeps the wait's envelope on the task.
      const input = state === pb.TaskState.INPUT_REQUIRED && iacCode(this.out.record.task.metadata).input;
      if (input) Object.assign(metadata, { input });
      this.out.status(state, { metadata });
      return;
    }
    const held = this.pipelineEnd;
    this.pipelineEnd = {
      state,
      envelopes: [...(held?.envelopes ?? []), ...envelopes],
      ...(cleanupOnly || held?.cleanupOnly ? { cleanupOnly: cleanupOnly ?? held?.cleanupOnly } : {}),
    };
  }

  private pipelineEndMetadata(): JsonObject {
    const end = this.pipelineEnd;
    return {
      ...(end && pipelineMetadata(end.envelopes, this.deps.exposure)),
      ...(end?.cleanupOnly ? { cleanupOnly: end.cleanupOnly } : {}),
    };
  }

  /** Held terminal pipeline updates turned out not to be the end: they go out now, in order. */
  private releasePipelineEnd(): void {
    if (!this.pipelineEnd) return;
    const metadata = this.pipelineEndMetadata();
    this.pipelineEnd = undefined;
    if (Object.keys(metadata).length) this.working(metadata);
  }

  /** Every failure ends the task FAILED: the code's text (with the errorId) and metadata.iac_code.error. */
  fail(code: RuntimeErrorCode, errorId: string, retryable: boolean, text?: string): void {
    this.failure = {
      state: pb.TaskState.FAILED,
      text: text ?? t(this.out.record.language, ERROR_CODE_MESSAGES[code], { errorId }),
      error: { retryable, errorId, code },
    };
  }

  /**
   * The end of the turn: CANCELED, the failure, the pipeline's end, or the
   * final answer (kept in history) and INPUT_REQUIRED without an envelope
   * (ready for the next message).
   */
  finish(canceled: boolean): void {
    if (canceled) {
      this.out.status(pb.TaskState.CANCELED, {
        text: t(this.out.record.language, "a2a.taskCanceled"),
        keep: true,
      });
    } else if (this.failure) {
      this.out.status(this.failure.state, {
        text: this.failure.text,
        keep: true,
        metadata: { error: this.failure.error },
      });
    } else if (this.pipelineEnd) {
      this.out.status(this.pipelineEnd.state, { metadata: this.pipelineEndMetadata(), keep: true });
    } else {
      if (this.finalText.trim() !== "") {
        this.out.status(pb.TaskState.WORKING, {
          text: this.finalText,
          keep: true,
          metadata: { assistantFinal: { complete: true } },
        });
      }
      this.out.status(pb.TaskState.INPUT_REQUIRED, {});
    }
  }

  /**
   * The end of a turn whose critical backup failed (backup-gate.ts): INPUT_REQUIRED
   * with the reference's text and metadata.iac_code.backupBlocked instead of the
   * terminal state; a pipeline's held end envelopes go with it (`pipeline`: the
   * backup_blocked envelope, when the run journaled one).
   */
  blocked(backupBlocked: JsonObject, pipeline?: PipelineEnvelope[]): void {
    this.backupBlocked = true;
    const envelopes = [...(this.pipelineEnd?.envelopes ?? []), ...(pipeline ?? [])];
    this.out.status(pb.TaskState.INPUT_REQUIRED, {
      text: t(this.out.record.language, "a2a.backupBlocked"),
      keep: true,
      metadata: { ...pipelineMetadata(envelopes, this.deps.exposure), backupBlocked },
    });
  }

  /** A held pipeline end goes out with more envelopes (backup_committed) after its own. */
  appendToEnd(envelopes: PipelineEnvelope[]): void {
    if (this.pipelineEnd) this.pipelineEnd.envelopes.push(...envelopes);
  }

  /** The envelopes whose publication a backup gates: the pipeline's end and its handoff. */
  get gatedEnvelopes(): PipelineEnvelope[] {
    return (this.pipelineEnd?.envelopes ?? []).filter((e) => GATED.has(e.eventType));
  }

  /** How the turn ended unless canceled or detached: failed, a pipeline's end state, or completed. */
  outcome(): string {
    if (this.backupBlocked) return "backup-blocked";
    if (this.failure) return "failed";
    if (this.pipelineEnd) return pb.TaskState[this.pipelineEnd.state].toLowerCase().replace(/_/g, "-");
    return "completed";
  }
}
