// A2A -> AG-UI translation for one AG-UI run. Deterministic given its clock and
// id source, so golden streams can pin it. It keeps the spans this run opened
// (text messages, reasoning, tool calls, steps) so that an interrupt or the end
// of the run can close them, and the durable state a later run needs (open
// pipeline steps, pipeline cursor, text snapshot digests) in `durable`.
import { createHash } from "node:crypto";
import { isObject, statusText, type A2aItem, type JsonObject } from "../upstream/a2a-items.js";
import {
  ACTIVITY_PIPELINE,
  canonicalJson,
  compact,
  CUSTOM_ARTIFACT,
  CUSTOM_PIPELINE,
  CUSTOM_TOOL_PROGRESS,
  dropNulls,
  type AguiEvent,
  type CustomValue,
  type InterruptObject,
  type UsageEntry,
} from "../events.js";

/** Pipeline eventTypes that get a CUSTOM iac-code.pipeline.v1 projection (the seed's list). */
export const PIPELINE_CUSTOM_TYPES = new Set([
  "pipeline_started", "pipeline_resumed", "pipeline_completed", "pipeline_error", "pipeline_warning",
  "backup_blocked", "candidate_started", "candidate_completed", "candidate_failed", "candidate_interrupted",
  "candidate_restart_requested", "candidate_selected", "candidate_detail_shown", "candidate_step_failed",
  "sub_pipeline_started", "sub_pipeline_completed", "sub_step_failed", "step_failed", "stack_progress",
  "stack_instances_progress", "stack_current_changed", "cleanup_started", "cleanup_progress",
  "cleanup_completed", "cleanup_failed", "rollback_triggered", "rollback_completed",
  "context_compaction_started", "context_compacted", "context_compaction_failed", "fields_marked_stale",
  "diagram_shown", "mcp_status", "tool_progress",
]); // prettier-ignore

const STEP_OPEN_TYPES = new Set(["step_started", "candidate_step_started", "input_received"]);
const STEP_CLOSE_TYPES = new Set([
  "step_completed",
  "step_failed",
  "candidate_step_completed",
  "candidate_step_failed",
]);

/** What survives the run (persisted with the execution). */
export interface DurableRunState {
  pipelineSequence: number;
  pipelineOpenSteps: string[];
  textSnapshotDigests: string[];
}

export interface TranslatorOptions {
  threadId: string;
  runId: string;
  now?: () => number;
  /** 32 hex chars; random by default. */
  newId?: () => string;
  durable?: DurableRunState;
  pipelineRunId?: string;
}

export interface MapOptions {
  /** Resume preflight snapshots: no status text (it was shown already). */
  suppressText?: boolean;
  /** Resume preflight snapshots: no pipeline envelopes. */
  suppressPipeline?: boolean;
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function randomHex(): string {
  return createHash("sha256")
    .update(`${Math.random()}:${process.hrtime.bigint()}`)
    .digest("hex")
    .slice(0, 32);
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** Integral numbers (6497.0 included) as integers; anything else undefined. */
function count(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && Number.isInteger(v) && v >= 0 ? v : undefined;
}

/** Sorted-key compact JSON (tool arguments and results). */
function sortedJson(value: unknown): string {
  return canonicalJson(value);
}

export class RunTranslator {
  readonly threadId: string;
  readonly runId: string;
  private readonly now: () => number;
  private readonly newId: () => string;
  private pipelineRunId: string;

  /** Open text messages: the key a source names them by -> the messageId on the wire. */
  private readonly openTexts = new Map<string, string>();
  /** The latest wire messageId of each text key (a tool call's parent). */
  private readonly lastWireId = new Map<string, string>();
  private currentText: string | undefined;
  private readonly textSoFar = new Map<string, string>();
  private readonly replayChecked = new Set<string>();
  /** Open reasoning messages: key -> wire messageId. */
  private readonly openReasoning = new Map<string, string>();
  /** Every messageId this run put on the wire: a message reopened later gets a new one. */
  private readonly wireIds = new Set<string>();
  private readonly openTools = new Set<string>();
  private readonly toolResults = new Set<string>();
  /** Every tool call this run started (TOOL_CALL_START sent). */
  private readonly startedTools = new Set<string>();
  private readonly runSteps = new Set<string>();
  private readonly seenEventIds = new Set<string>();
  /** Usage summed per (provider, model), in first-seen order. */
  private readonly usage = new Map<
    string,
    UsageEntry & { inputTokens: number; outputTokens: number; totalTokens: number }
  >();
  private emittedText = false;

  readonly durable: { pipelineSequence: number; openSteps: Set<string>; digests: Set<string> };

  constructor(options: TranslatorOptions) {
    this.threadId = options.threadId;
    this.runId = options.runId;
    this.now = options.now ?? (() => Date.now());
    this.newId = options.newId ?? randomHex;
    this.pipelineRunId = options.pipelineRunId ?? `pipeline-${options.threadId}`;
    this.durable = {
      pipelineSequence: options.durable?.pipelineSequence ?? 0,
      openSteps: new Set(options.durable?.pipelineOpenSteps ?? []),
      digests: new Set(options.durable?.textSnapshotDigests ?? []),
    };
  }

  durableState(): DurableRunState {
    return {
      pipelineSequence: this.durable.pipelineSequence,
      pipelineOpenSteps: [...this.durable.openSteps].sort(),
      textSnapshotDigests: [...this.durable.digests].sort(),
    };
  }

  /** One event of the AG-UI event contract; optional fields given as undefined are left out. */
  private ev<T extends AguiEvent["type"]>(
    type: T,
    fields: Omit<Extract<AguiEvent, { type: T }>, "type" | "timestamp">,
  ): Extract<AguiEvent, { type: T }> {
    return { type, timestamp: this.now(), ...compact(fields) } as Extract<AguiEvent, { type: T }>;
  }

  /** RUN_STARTED, then STEP_STARTED for each durable step a previous run left open. */
  start(parentRunId?: string): AguiEvent[] {
    const out: AguiEvent[] = [
      this.ev("RUN_STARTED", { threadId: this.threadId, runId: this.runId, parentRunId }),
    ];
    for (const key of [...this.durable.openSteps].sort()) {
      this.runSteps.add(key);
      out.push(this.ev("STEP_STARTED", { stepName: stepName(key) }));
    }
    return out;
  }

  /** Maps one A2A stream item to AG-UI events. */
  map(item: A2aItem, options: MapOptions = {}): AguiEvent[] {
    const out: AguiEvent[] = [];
    const iac = item.iac;
    if (!options.suppressPipeline) {
      const batch = isObject(iac.pipelineBatch) ? iac.pipelineBatch.events : undefined;
      if (Array.isArray(batch)) for (const env of batch) if (isObject(env)) this.pipelineEnvelope(env, out);
      if (isObject(iac.pipeline)) this.pipelineEnvelope(iac.pipeline, out);
    }
    if (isObject(iac.thinking)) this.thinking(iac.thinking, undefined, out);
    if (!options.suppressText) this.statusText(item, out);
    if (isObject(iac.tool)) this.tool(iac.tool, out);
    if (isObject(iac.usage)) this.recordUsage(iac.usage);
    if (item.kind === "artifactUpdate" && isObject(item.payload.artifact)) {
      out.push(this.ev("CUSTOM", { name: CUSTOM_ARTIFACT, value: this.artifactValue(item) }));
    }
    return out;
  }

  // --- text -----------------------------------------------------------------

  private statusText(item: A2aItem, out: AguiEvent[]): void {
    // Only a working task's texts are the assistant's: a failed or cancelled task's
    // status text ("Task canceled.", a failure) ends the run as RUN_ERROR instead.
    if (item.state !== undefined && item.state !== "working") return;
    const { text, messageId } = statusText(item);
    if (!text) return;
    const final = isObject(item.iac.assistantFinal) && item.iac.assistantFinal.complete === true;
    if (final && this.emittedText) return;
    // Status texts are deltas of the message being written: an open message
    // continues whatever id the A2A chunk carries (ids may differ per chunk).
    const open = this.currentText && this.openTexts.has(this.currentText) ? this.currentText : undefined;
    this.text(open ?? messageId ?? `assistant-${this.newId()}`, text, false, out);
  }

  /** `base`, or base.2, base.3, … when this run already used it: a messageId names one message. */
  private wireId(base: string): string {
    let id = base;
    for (let n = 2; this.wireIds.has(id); n++) id = `${base}.${n}`;
    this.wireIds.add(id);
    return id;
  }

  /**
   * A text delta of the message `key`. Pipeline texts (`parallel`) come from a
   * journal de-duplicated by event, so they are never replays; their wire ids
   * (`wireBase`) carry the AG-UI run, unique across the thread's runs.
   */
  private text(key: string, delta: string, parallel: boolean, out: AguiEvent[], wireBase = key): void {
    let emit = delta;
    if (!parallel && !this.replayChecked.has(key)) {
      // The first text of a message in this run may replay what a previous run showed.
      this.replayChecked.add(key);
      emit = this.stripReplayedPrefix(delta);
    }
    this.textSoFar.set(key, (this.textSoFar.get(key) ?? "") + delta);
    if (!emit) return;
    this.closeReasoning(out);
    let messageId = this.openTexts.get(key);
    if (!messageId) {
      if (!parallel && this.currentText && this.openTexts.has(this.currentText)) {
        this.endText(this.currentText, out);
      }
      messageId = this.wireId(wireBase);
      this.openTexts.set(key, messageId);
      this.lastWireId.set(key, messageId);
      out.push(this.ev("TEXT_MESSAGE_START", { messageId, role: "assistant" }));
    }
    this.currentText = key;
    this.emittedText = true;
    out.push(this.ev("TEXT_MESSAGE_CONTENT", { messageId, delta: emit }));
  }

  private stripReplayedPrefix(text: string): string {
    if (this.durable.digests.size === 0) return text;
    const chars = Array.from(text);
    for (let n = chars.length; n > 0; n--) {
      if (this.durable.digests.has(sha256(chars.slice(0, n).join("")))) return chars.slice(n).join("");
    }
    return text;
  }

  private endText(key: string, out: AguiEvent[]): void {
    const messageId = this.openTexts.get(key);
    if (!messageId) return;
    this.openTexts.delete(key);
    this.finalizeSnapshot(key);
    out.push(this.ev("TEXT_MESSAGE_END", { messageId }));
  }

  private finalizeSnapshot(messageId: string | undefined): void {
    if (!messageId) return;
    const full = this.textSoFar.get(messageId);
    if (full) this.durable.digests.add(sha256(full));
  }

  /** Records the texts shown so far, so that a resumed run does not replay them. */
  finalizeSnapshots(): void {
    for (const id of this.textSoFar.keys()) this.finalizeSnapshot(id);
  }

  // --- reasoning ------------------------------------------------------------

  /** Reasoning of a pipeline step (`pipeline`: its message key and wire base) or of the current text. */
  private thinking(
    thinking: JsonObject,
    pipeline: { key: string; wireBase: string } | undefined,
    out: AguiEvent[],
  ): void {
    if (thinking.type !== undefined && thinking.type !== "raw_thinking") return;
    const text = str(thinking.text);
    if (!text) return;
    const key = pipeline?.key ?? this.currentText ?? this.runId;
    let messageId = this.openReasoning.get(key);
    if (!messageId) {
      const base = pipeline?.wireBase ?? (this.currentText && this.lastWireId.get(this.currentText));
      messageId = this.wireId(`reasoning-${base ?? this.runId}`);
      this.openReasoning.set(key, messageId);
      out.push(this.ev("REASONING_START", { messageId }));
      out.push(this.ev("REASONING_MESSAGE_START", { messageId, role: "reasoning" }));
    }
    out.push(this.ev("REASONING_MESSAGE_CONTENT", { messageId, delta: text }));
  }

  private closeReasoning(out: AguiEvent[]): void {
    for (const id of [...this.openReasoning.values()].sort()) {
      out.push(this.ev("REASONING_MESSAGE_END", { messageId: id }));
      out.push(this.ev("REASONING_END", { messageId: id }));
    }
    this.openReasoning.clear();
  }

  // --- tools ----------------------------------------------------------------

  /** A tool call's status; `textKey` names the text it follows (a pipeline step's), else the current one. */
  private tool(tool: JsonObject, out: AguiEvent[], textKey = this.currentText): void {
    const status = str(tool.status);
    const toolCallId = str(tool.toolUseId) ?? `tool-${this.newId()}`;
    const name = str(tool.name) ?? "tool";
    if (status === "started" || status === "input_complete") {
      // A tool call ends the text before it; later text is a new message.
      if (textKey) this.endText(textKey, out);
      if (!this.openTools.has(toolCallId) && !this.toolResults.has(toolCallId)) {
        this.openTools.add(toolCallId);
        this.startedTools.add(toolCallId);
        const parentMessageId = textKey ? this.lastWireId.get(textKey) : undefined;
        out.push(this.ev("TOOL_CALL_START", { toolCallId, toolCallName: name, parentMessageId }));
      }
      if (status === "input_complete" && this.openTools.has(toolCallId)) {
        const args = tool.toolInput ?? tool.input ?? { summary: tool.inputSummary ?? null };
        out.push(this.ev("TOOL_CALL_ARGS", { toolCallId, delta: sortedJson(args) }));
        this.openTools.delete(toolCallId);
        out.push(this.ev("TOOL_CALL_END", { toolCallId }));
      }
    } else if (status === "completed" || status === "failed") {
      this.toolResult(toolCallId, tool.result, out);
    } else if (status === "progress") {
      out.push(
        this.ev("CUSTOM", {
          name: CUSTOM_TOOL_PROGRESS,
          value: dropNulls({
            schemaVersion: 1,
            status: "progress",
            toolUseId: toolCallId,
            name,
            mcp: isObject(tool.mcp) ? tool.mcp : undefined,
            progress: isObject(tool.progress) ? tool.progress : undefined,
            mcpProgress: isObject(tool.mcpProgress) ? tool.mcpProgress : undefined,
          }),
        }),
      );
    }
  }

  private toolResult(toolCallId: string, result: unknown, out: AguiEvent[]): void {
    if (this.toolResults.has(toolCallId)) return;
    if (this.openTools.has(toolCallId)) {
      this.openTools.delete(toolCallId);
      out.push(this.ev("TOOL_CALL_END", { toolCallId }));
    }
    this.toolResults.add(toolCallId);
    const content = typeof result === "string" ? result : sortedJson(result ?? null);
    out.push(
      this.ev("TOOL_CALL_RESULT", {
        messageId: `tool-result-${toolCallId}`,
        toolCallId,
        content,
        role: "tool",
      }),
    );
  }

  /** True when this run showed the client the start of that tool call. */
  startedToolCall(toolCallId: string): boolean {
    return this.startedTools.has(toolCallId);
  }

  /** The adapter's own result for an answered question tool (A2A does not echo it). */
  answeredToolResult(toolCallId: string, answer: string): AguiEvent[] {
    const out: AguiEvent[] = [];
    this.toolResult(toolCallId, answer, out);
    return out;
  }

  // --- usage and artifacts --------------------------------------------------

  private recordUsage(usage: JsonObject): void {
    const provider = str(usage.provider);
    const model = str(usage.model);
    const key = `${provider ?? ""}\u0000${model ?? ""}`;
    const entry = this.usage.get(key) ?? { provider, model, inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    entry.inputTokens += count(usage.inputTokens) ?? 0;
    entry.outputTokens += count(usage.outputTokens) ?? 0;
    entry.totalTokens += count(usage.totalTokens) ?? 0;
    const cached = count(usage.cachedInputTokens);
    if (cached !== undefined) entry.cachedInputTokens = (entry.cachedInputTokens ?? 0) + cached;
    this.usage.set(key, entry);
  }

  usageList(): UsageEntry[] | undefined {
    return this.usage.size ? [...this.usage.values()].map((u) => compact({ ...u })) : undefined;
  }

  private artifactValue(item: A2aItem): JsonObject {
    const artifact = item.payload.artifact as JsonObject;
    const part = Array.isArray(artifact.parts) && isObject(artifact.parts[0]) ? artifact.parts[0] : {};
    const meta = isObject(artifact.metadata)
      ? artifact.metadata
      : isObject(part.metadata)
        ? part.metadata
        : {};
    return compact({
      schemaVersion: 1,
      taskId: item.taskId,
      contextId: item.contextId,
      artifactId: str(artifact.artifactId),
      name: str(artifact.name),
      description: str(artifact.description),
      filename: str(part.filename) ?? str(artifact.name),
      mediaType: str(part.mediaType) ?? str(meta.mediaType),
      uri: str(part.url) ?? str(meta.uri),
      byteSize: count(meta.byteSize),
      sha256: str(meta.sha256),
      sourcePath: str(meta.sourcePath),
    });
  }

  // --- pipeline -------------------------------------------------------------

  private pipelineEnvelope(env: JsonObject, out: AguiEvent[], recovery = false): void {
    const eventId = str(env.eventId);
    const sequence = typeof env.sequence === "number" ? env.sequence : 0;
    if (eventId && this.seenEventIds.has(eventId)) return;
    if (!recovery || !eventId) {
      if (sequence > 0 && sequence <= this.durable.pipelineSequence) return;
    }
    if (eventId) this.seenEventIds.add(eventId);
    this.durable.pipelineSequence = Math.max(this.durable.pipelineSequence, sequence);
    const eventType = str(env.eventType) ?? "";
    const data = isObject(env.data) ? env.data : undefined;
    if (data) {
      const key = this.pipelineMessageId(env);
      const wireBase = `${key}@${this.runId}`;
      if (eventType === "text_delta" && str(data.text)) this.text(key, data.text as string, true, out, wireBase);
      else if (eventType === "thinking_delta" && str(data.text))
        this.thinking({ type: "raw_thinking", text: data.text }, { key, wireBase }, out);
      else if (eventType === "tool_started")
        this.tool({ status: "input_complete", toolUseId: data.toolUseId, name: data.toolName, toolInput: data.input ?? {} }, out, key);
      else if (eventType === "tool_result")
        this.tool({ status: data.isError === true ? "failed" : "completed", toolUseId: data.toolUseId, name: data.toolName, result: data.result ?? data.content }, out, key);
      else if (eventType === "usage") this.recordUsage(data);
    } // prettier-ignore
    this.stepLifecycle(env, eventType, out);
    if (PIPELINE_CUSTOM_TYPES.has(eventType))
      out.push(this.ev("CUSTOM", { name: CUSTOM_PIPELINE, value: dropNulls(env) }));
  }

  private pipelineMessageId(env: JsonObject): string {
    const coords: string[] = [];
    for (const k of ["candidate", "candidateStep", "step"]) {
      const o = env[k];
      if (!isObject(o)) continue;
      const c = str(o.runId) ?? str(o.id);
      if (c && !coords.includes(c)) coords.push(c);
    }
    const runId = str(env.pipelineRunId) ?? this.pipelineRunId;
    return ["pipeline-message", runId, str(env.scope) ?? "pipeline", ...coords].join(":");
  }

  private stepLifecycle(env: JsonObject, eventType: string, out: AguiEvent[]): void {
    const stepObj = isObject(env.candidateStep)
      ? env.candidateStep
      : isObject(env.step)
        ? env.step
        : undefined;
    const stepId = stepObj ? str(stepObj.id) : undefined;
    if (!stepId) return;
    const cand = isObject(env.candidate) ? env.candidate : undefined;
    const candId = cand ? (str(cand.id) ?? str(cand.subPipelineId) ?? str(cand.runId)) : undefined;
    const key = candId ? `candidate:${candId}:${stepId}` : `step:${stepId}`;
    if (STEP_OPEN_TYPES.has(eventType)) {
      this.durable.openSteps.add(key);
      if (!this.runSteps.has(key)) {
        this.runSteps.add(key);
        out.push(this.ev("STEP_STARTED", { stepName: stepName(key) }));
      }
    } else if (STEP_CLOSE_TYPES.has(eventType)) {
      if (!this.durable.openSteps.has(key)) return;
      this.durable.openSteps.delete(key);
      if (this.runSteps.has(key)) {
        this.runSteps.delete(key);
        out.push(this.ev("STEP_FINISHED", { stepName: stepName(key) }));
      } else {
        const ts = this.now();
        out.push({ type: "STEP_STARTED", timestamp: ts, stepName: stepName(key) });
        out.push({ type: "STEP_FINISHED", timestamp: ts, stepName: stepName(key) });
      }
    }
  }

  /** A pipeline recovery snapshot: one ACTIVITY_SNAPSHOT, then the missed events. */
  recovery(snapshot: JsonObject, events: unknown[]): AguiEvent[] {
    const out: AguiEvent[] = [];
    this.pipelineRunId = str(snapshot.pipelineRunId) ?? this.pipelineRunId;
    out.push(
      this.ev("ACTIVITY_SNAPSHOT", {
        messageId: `pipeline:${this.pipelineRunId}`,
        activityType: ACTIVITY_PIPELINE,
        content: dropNulls({ schemaVersion: 1 as const, pipelineRunId: this.pipelineRunId, snapshot }),
        replace: true,
      }),
    );
    for (const env of events) if (isObject(env)) this.pipelineEnvelope(env, out, true);
    const last = typeof snapshot.lastSequence === "number" ? snapshot.lastSequence : 0;
    this.durable.pipelineSequence = Math.max(this.durable.pipelineSequence, last);
    return out;
  }

  // --- endings ----------------------------------------------------------------

  /** Closes everything this run opened (the durable step set is kept for the next run). */
  closeAll(): AguiEvent[] {
    const out: AguiEvent[] = [];
    this.closeReasoning(out);
    for (const id of [...this.openTools].sort()) out.push(this.ev("TOOL_CALL_END", { toolCallId: id }));
    this.openTools.clear();
    for (const [key] of [...this.openTexts].sort((a, b) => (a[1] < b[1] ? -1 : 1))) this.endText(key, out);
    for (const key of [...this.runSteps].sort())
      out.push(this.ev("STEP_FINISHED", { stepName: stepName(key) }));
    this.runSteps.clear();
    return out;
  }

  finishSuccess(): AguiEvent[] {
    return [
      ...this.closeAll(),
      this.ev("RUN_FINISHED", {
        threadId: this.threadId,
        runId: this.runId,
        outcome: { type: "success" },
        usage: this.usageList(),
      }),
    ];
  }

  finishInterrupt(interrupts: InterruptObject[]): AguiEvent[] {
    const [first, ...rest] = interrupts;
    // Callers only end a run on an interrupt when one is pending; an empty list is fatal to clients.
    if (!first) throw new Error("an interrupt outcome needs at least one interrupt");
    this.finalizeSnapshots();
    return [
      ...this.closeAll(),
      this.ev("RUN_FINISHED", {
        threadId: this.threadId,
        runId: this.runId,
        outcome: { type: "interrupt", interrupts: [first, ...rest] },
        usage: this.usageList(),
      }),
    ];
  }

  /** RUN_ERROR (callers send closeAll() before it, so no span stays open). */
  error(code: string, message: string): AguiEvent {
    return this.ev("RUN_ERROR", { message, code, usage: this.usageList() });
  }

  custom(name: string, value: CustomValue): AguiEvent {
    return this.ev("CUSTOM", { name, value });
  }
}

/** AG-UI step name of a durable step key: the bare id for top-level steps. */
export function stepName(key: string): string {
  return key.startsWith("step:") ? key.slice(5) : key;
}

/** Pure form for golden tests: maps a whole A2A stream and ends it as the stream says. */
export function translateStream(
  items: A2aItem[],
  options: TranslatorOptions & { parentRunId?: string },
): AguiEvent[] {
  const tr = new RunTranslator(options);
  const out = tr.start(options.parentRunId);
  let last: string | undefined;
  for (const item of items) {
    out.push(...tr.map(item));
    if (item.state) last = item.state;
  }
  if (last === "completed" || last === "input-required") out.push(...tr.finishSuccess());
  else if (last === "canceled")
    out.push(...tr.closeAll(), tr.error("CANCELLED", "The execution was cancelled."));
  else out.push(...tr.closeAll(), tr.error("A2A_EXECUTION_FAILED", "The A2A execution failed."));
  return out;
}
