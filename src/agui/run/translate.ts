// A2A -> AG-UI translation for one AG-UI run. Deterministic given its clock and
// id source, so golden streams can pin it. It keeps the spans this run opened
// (text messages, reasoning, tool calls, steps) so that an interrupt or the end
// of the run can close them, and the durable state a later run needs (open
// pipeline steps, pipeline cursor, text snapshot digests) in `durable`.
import { createHash } from "node:crypto";
import { isObject, statusText, str, type A2aItem, type JsonObject } from "../upstream/a2a-items.js";
import { PipelineSteps, pipelineCustomName, pipelineMessageKey } from "./pipeline-steps.js";
import { UsageTally } from "./usage-tally.js";
import { artifactValue, toolProgressValue } from "./custom-values.js";
import {
  ACTIVITY_PIPELINE,
  canonicalJson,
  compact,
  CUSTOM_ARTIFACT,
  CUSTOM_TOOL_PROGRESS,
  dropNulls,
  type AguiEvent,
  type CustomValue,
  type InterruptObject,
  type SnapshotMessage,
  type UsageEntry,
} from "../events.js";

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
  private readonly seenEventIds = new Set<string>();
  private readonly usage = new UsageTally();
  private readonly steps: PipelineSteps;
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
    this.steps = new PipelineSteps(this.durable.openSteps, (type, stepName) => this.ev(type, { stepName }));
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
    this.steps.reopen(out);
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
    if (isObject(iac.usage)) this.usage.add(iac.usage);
    if (item.kind === "artifactUpdate" && isObject(item.payload.artifact)) {
      out.push(this.ev("CUSTOM", { name: CUSTOM_ARTIFACT, value: artifactValue(item) }));
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
    if (this.openReasoning.size === 0) return; // every text delta asks
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
        out.push(this.ev("TOOL_CALL_ARGS", { toolCallId, delta: canonicalJson(args) }));
        this.openTools.delete(toolCallId);
        out.push(this.ev("TOOL_CALL_END", { toolCallId }));
      }
    } else if (status === "completed" || status === "failed") {
      this.toolResult(toolCallId, tool.result, out);
    } else if (status === "progress") {
      out.push(
        this.ev("CUSTOM", { name: CUSTOM_TOOL_PROGRESS, value: toolProgressValue(tool, toolCallId, name) }),
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
    const content = typeof result === "string" ? result : canonicalJson(result ?? null);
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

  /** Tokens summed per (provider, model), in first-seen order. */
  usageList(): UsageEntry[] | undefined {
    return this.usage.list();
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
      const key = pipelineMessageKey(env, this.pipelineRunId);
      const wireBase = `${key}@${this.runId}`;
      if (eventType === "text_delta" && str(data.text)) this.text(key, data.text as string, true, out, wireBase);
      else if (eventType === "thinking_delta" && str(data.text))
        this.thinking({ type: "raw_thinking", text: data.text }, { key, wireBase }, out);
      else if (eventType === "tool_started")
        this.tool({ status: "input_complete", toolUseId: data.toolUseId, name: data.toolName, toolInput: data.input ?? {} }, out, key);
      else if (eventType === "tool_result")
        this.tool({ status: data.isError === true ? "failed" : "completed", toolUseId: data.toolUseId, name: data.toolName, result: data.result ?? data.content }, out, key);
      else if (eventType === "usage") this.usage.add(data);
    } // prettier-ignore
    this.steps.lifecycle(env, eventType, out);
    const name = pipelineCustomName(eventType);
    if (name) out.push(this.ev("CUSTOM", { name, value: dropNulls(env) }));
  }

  /** The ACTIVITY_SNAPSHOT of a pipeline snapshot (no cursor or run id changes). */
  activitySnapshot(snapshot: JsonObject, pipelineRunId = str(snapshot.pipelineRunId) ?? this.pipelineRunId) {
    const content = dropNulls({ schemaVersion: 1 as const, pipelineRunId, snapshot });
    return this.ev("ACTIVITY_SNAPSHOT", { messageId: `pipeline:${pipelineRunId}`, activityType: ACTIVITY_PIPELINE, content, replace: true });
  } // prettier-ignore

  messagesSnapshot(messages: SnapshotMessage[]): AguiEvent {
    return this.ev("MESSAGES_SNAPSHOT", { messages });
  }

  /** A recovery snapshot: one ACTIVITY_SNAPSHOT, STEP_STARTED for `openSteps` (an observer's), the missed events. */
  recovery(snapshot: JsonObject, events: unknown[], openSteps: readonly string[] = []): AguiEvent[] {
    const out: AguiEvent[] = [];
    this.pipelineRunId = str(snapshot.pipelineRunId) ?? this.pipelineRunId;
    out.push(this.activitySnapshot(snapshot, this.pipelineRunId));
    for (const key of openSteps) this.durable.openSteps.add(key);
    if (openSteps.length) this.steps.reopen(out);
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
    this.steps.finishAll(out);
    return out;
  }

  finishSuccess(): AguiEvent[] {
    return [
      ...this.closeAll(),
      this.ev("RUN_FINISHED", {
        threadId: this.threadId,
        runId: this.runId,
        outcome: { type: "success" },
        usage: this.usage.list(),
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
        usage: this.usage.list(),
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
