// A strict verifier of AG-UI event streams, stricter than @ag-ui/client's: it
// follows one thread across its runs, so a message id used twice, a tool result
// whose call never started, a pipeline event shown twice or a step left open is
// caught even when each run on its own looks fine. Used on every AG-UI stream
// of the tests and by scripts/verify-agui-stream.ts on captured SSE files.

import { parseSseText } from "../../src/server/sse.js";

/** An event as read off the wire. */
export interface StreamEvent {
  type: string;
  [key: string]: unknown;
}

export interface Violation {
  /** The run the event belongs to (its RUN_STARTED runId), when known. */
  runId?: string;
  /** Index of the offending event in its run (-1: the run as a whole). */
  index: number;
  message: string;
}

const TERMINAL = new Set(["RUN_FINISHED", "RUN_ERROR"]);
const KNOWN = new Set([
  "RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "STEP_STARTED", "STEP_FINISHED",
  "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
  "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
  "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END",
  "REASONING_END", "STATE_SNAPSHOT", "STATE_DELTA", "MESSAGES_SNAPSHOT", "ACTIVITY_SNAPSHOT",
  "ACTIVITY_DELTA", "RAW", "CUSTOM",
]); // prettier-ignore

/** The CUSTOM event whose values carry a journal eventId (never shown twice on a thread). */
const PIPELINE_CUSTOM = "iac-code.pipeline.v1";

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

type ToolState = "open" | "ended" | "resulted";

/** Verifies the runs of one thread, in the order they were received. */
export class ThreadStreamVerifier {
  private threadId: string | undefined;
  private readonly runIds = new Set<string>();
  /** Text, reasoning and tool-result message ids: each names one message of the thread. */
  private readonly messageIds = new Map<string, string>();
  private readonly activityIds = new Set<string>();
  private readonly tools = new Map<string, ToolState>();
  private readonly pipelineEventIds = new Set<string>();

  /**
   * `unseenEarlierRuns`: the thread may have runs this verifier is not given
   * (a single run checked on its own), so a result for a tool call it never
   * saw start is taken as the end of a call of such a run.
   */
  constructor(
    threadId?: string,
    private readonly options: { unseenEarlierRuns?: boolean } = {},
  ) {
    this.threadId = threadId;
  }

  /**
   * Checks one run (the events of one SSE response). `complete: false` for a
   * stream the client cut off: its missing end is then not a violation.
   */
  run(events: readonly StreamEvent[], options: { complete?: boolean } = {}): Violation[] {
    return new RunCheck(this, events).check(options.complete !== false);
  }

  /** @internal */
  claimThread(threadId: unknown): string | undefined {
    const id = str(threadId);
    if (!id) return "RUN_STARTED has no threadId";
    this.threadId ??= id;
    return id === this.threadId ? undefined : `threadId '${id}' is not this thread's ('${this.threadId}')`;
  }

  /** @internal */
  claimRun(runId: unknown): string | undefined {
    const id = str(runId);
    if (!id) return "RUN_STARTED has no runId";
    if (this.runIds.has(id)) return `runId '${id}' was already used on this thread`;
    this.runIds.add(id);
    return undefined;
  }

  /** @internal a message id for a new message of `kind`; an error text if the thread used it. */
  claimMessage(id: unknown, kind: string): string | undefined {
    const key = str(id);
    if (!key) return `${kind} without a messageId`;
    const before = this.messageIds.get(key);
    if (before) return `messageId '${key}' already named a ${before} on this thread`;
    if (this.activityIds.has(key)) return `messageId '${key}' already named an activity on this thread`;
    this.messageIds.set(key, kind);
    return undefined;
  }

  /** @internal activities are replaced under their id: reuse is fine, a message's id is not. */
  claimActivity(id: unknown): string | undefined {
    const key = str(id);
    if (!key) return "ACTIVITY_SNAPSHOT without a messageId";
    const before = this.messageIds.get(key);
    if (before) return `activity messageId '${key}' already named a ${before} on this thread`;
    this.activityIds.add(key);
    return undefined;
  }

  /** @internal */
  toolState(id: string): ToolState | undefined {
    return this.tools.get(id);
  }

  /** @internal */
  get lenientResults(): boolean {
    return this.options.unseenEarlierRuns === true;
  }

  /** @internal */
  setTool(id: string, state: ToolState): void {
    this.tools.set(id, state);
  }

  /** @internal */
  claimPipelineEvent(eventId: string): boolean {
    if (this.pipelineEventIds.has(eventId)) return false;
    this.pipelineEventIds.add(eventId);
    return true;
  }
}

/** The checks of one run against its thread. */
class RunCheck {
  private readonly out: Violation[] = [];
  private runId: string | undefined;
  private index = 0;
  private readonly openTexts = new Set<string>();
  private readonly openTools = new Set<string>();
  private readonly openSteps = new Set<string>();
  /** Open reasoning: started, its message open, or its message ended. */
  private readonly openReasoning = new Map<string, "started" | "message" | "ended">();
  private lastTimestamp = -Infinity;

  constructor(
    private readonly thread: ThreadStreamVerifier,
    private readonly events: readonly StreamEvent[],
  ) {}

  private fail(message: string, index = this.index): void {
    this.out.push({ ...(this.runId ? { runId: this.runId } : {}), index, message });
  }

  check(complete: boolean): Violation[] {
    const events = this.events;
    if (events.length === 0) {
      if (complete) this.fail("the stream has no event", -1);
      return this.out;
    }
    const first = events[0];
    if (first.type !== "RUN_STARTED" && !(first.type === "RUN_ERROR" && events.length === 1)) {
      this.fail(`the first event is ${first.type}, not RUN_STARTED`, 0);
    }
    let ended = false;
    for (this.index = 0; this.index < events.length; this.index++) {
      const ev = events[this.index];
      if (ended) {
        this.fail(`${ev.type} after the run ended`);
        continue;
      }
      this.timestamp(ev);
      this.event(ev);
      if (TERMINAL.has(ev.type)) {
        this.closed(ev.type);
        ended = true;
      }
    }
    if (complete && !ended) this.fail("the stream ends without RUN_FINISHED or RUN_ERROR", -1);
    return this.out;
  }

  private timestamp(ev: StreamEvent): void {
    const ts = ev.timestamp;
    if (ts === undefined) return;
    if (typeof ts !== "number" || !Number.isFinite(ts))
      return this.fail(`${ev.type} has a timestamp that is not a number`);
    if (ts < this.lastTimestamp)
      this.fail(`${ev.type} timestamp ${ts} goes back (previous ${this.lastTimestamp})`);
    this.lastTimestamp = ts;
  }

  /** Nothing may stay open when a run ends, whichever way it ends. */
  private closed(type: string): void {
    for (const id of this.openTexts) this.fail(`${type} while text message '${id}' is open`);
    for (const id of this.openTools) this.fail(`${type} while tool call '${id}' is open`);
    for (const name of this.openSteps) this.fail(`${type} while step '${name}' is open`);
    for (const id of this.openReasoning.keys()) this.fail(`${type} while reasoning '${id}' is open`);
  }

  private event(ev: StreamEvent): void {
    if (!KNOWN.has(ev.type)) return this.fail(`unknown event type ${ev.type}`);
    switch (ev.type) {
      case "RUN_STARTED":
        return this.runStarted(ev);
      case "RUN_FINISHED":
        return this.runFinished(ev);
      case "TEXT_MESSAGE_START":
      case "TEXT_MESSAGE_CONTENT":
      case "TEXT_MESSAGE_END":
        return this.text(ev);
      case "TOOL_CALL_START":
      case "TOOL_CALL_ARGS":
      case "TOOL_CALL_END":
      case "TOOL_CALL_RESULT":
        return this.tool(ev);
      case "REASONING_START":
      case "REASONING_MESSAGE_START":
      case "REASONING_MESSAGE_CONTENT":
      case "REASONING_MESSAGE_END":
      case "REASONING_END":
        return this.reasoning(ev);
      case "STEP_STARTED":
      case "STEP_FINISHED":
        return this.step(ev);
      case "ACTIVITY_SNAPSHOT": {
        const problem = this.thread.claimActivity(ev.messageId);
        if (problem) this.fail(problem);
        return;
      }
      case "CUSTOM":
        return this.custom(ev);
    }
  }

  private runStarted(ev: StreamEvent): void {
    if (this.index !== 0) return this.fail("RUN_STARTED is not the first event of the run");
    this.runId = str(ev.runId);
    for (const problem of [this.thread.claimThread(ev.threadId), this.thread.claimRun(ev.runId)])
      if (problem) this.fail(problem);
  }

  private runFinished(ev: StreamEvent): void {
    if (this.runId && str(ev.runId) !== this.runId)
      this.fail(`RUN_FINISHED runId '${String(ev.runId)}' is not the run's`);
    const outcome = ev.outcome as { type?: unknown; interrupts?: unknown } | undefined;
    if (outcome?.type !== "interrupt") return;
    const interrupts = Array.isArray(outcome.interrupts)
      ? (outcome.interrupts as Array<{ id?: unknown }>)
      : [];
    if (interrupts.length === 0) this.fail("an interrupt outcome without interrupts");
    const ids = interrupts.map((it) => str(it?.id));
    if (ids.some((id) => !id)) this.fail("an interrupt without an id");
    if (new Set(ids).size !== ids.length) this.fail("the same interrupt id twice in one outcome");
  }

  private text(ev: StreamEvent): void {
    const id = str(ev.messageId);
    if (!id) return this.fail(`${ev.type} without a messageId`);
    if (ev.type === "TEXT_MESSAGE_START") {
      const problem = this.thread.claimMessage(id, "text message");
      if (problem) return this.fail(problem);
      this.openTexts.add(id);
      return;
    }
    if (!this.openTexts.has(id)) return this.fail(`${ev.type} for text message '${id}' that is not open`);
    if (ev.type === "TEXT_MESSAGE_CONTENT") {
      if (!str(ev.delta)) this.fail(`TEXT_MESSAGE_CONTENT of '${id}' with an empty delta`);
    } else this.openTexts.delete(id);
  }

  private tool(ev: StreamEvent): void {
    const id = str(ev.toolCallId);
    if (!id) return this.fail(`${ev.type} without a toolCallId`);
    const state = this.thread.toolState(id);
    switch (ev.type) {
      case "TOOL_CALL_START":
        if (state) return this.fail(`TOOL_CALL_START of tool call '${id}' that was already started`);
        if (!str(ev.toolCallName)) this.fail(`TOOL_CALL_START of '${id}' without a toolCallName`);
        this.thread.setTool(id, "open");
        this.openTools.add(id);
        return;
      case "TOOL_CALL_ARGS":
        if (!this.openTools.has(id)) this.fail(`TOOL_CALL_ARGS for tool call '${id}' that is not open`);
        return;
      case "TOOL_CALL_END":
        if (!this.openTools.has(id)) return this.fail(`TOOL_CALL_END for tool call '${id}' that is not open`);
        this.openTools.delete(id);
        this.thread.setTool(id, "ended");
        return;
      case "TOOL_CALL_RESULT": {
        if (state === undefined && !this.thread.lenientResults)
          return this.fail(`TOOL_CALL_RESULT for tool call '${id}' that never started`);
        if (state === "open")
          return this.fail(`TOOL_CALL_RESULT for tool call '${id}' before its TOOL_CALL_END`);
        if (state === "resulted") return this.fail(`a second TOOL_CALL_RESULT for tool call '${id}'`);
        this.thread.setTool(id, "resulted");
        const problem = this.thread.claimMessage(ev.messageId, "tool result");
        if (problem) this.fail(problem);
        return;
      }
    }
  }

  /** Reasoning messages may interleave (parallel pipeline candidates); each is balanced. */
  private reasoning(ev: StreamEvent): void {
    const id = str(ev.messageId);
    if (!id) return this.fail(`${ev.type} without a messageId`);
    const state = this.openReasoning.get(id);
    switch (ev.type) {
      case "REASONING_START": {
        if (state) return this.fail(`REASONING_START of reasoning '${id}' that is already open`);
        const problem = this.thread.claimMessage(id, "reasoning message");
        if (problem) return this.fail(problem);
        this.openReasoning.set(id, "started");
        return;
      }
      case "REASONING_MESSAGE_START":
        if (state !== "started")
          return this.fail(`REASONING_MESSAGE_START of '${id}' outside its REASONING_START`);
        this.openReasoning.set(id, "message");
        return;
      case "REASONING_MESSAGE_CONTENT":
        if (state !== "message") return this.fail(`REASONING_MESSAGE_CONTENT for '${id}' that is not open`);
        if (!str(ev.delta)) this.fail(`REASONING_MESSAGE_CONTENT of '${id}' with an empty delta`);
        return;
      case "REASONING_MESSAGE_END":
        if (state !== "message") return this.fail(`REASONING_MESSAGE_END for '${id}' that is not open`);
        this.openReasoning.set(id, "ended");
        return;
      case "REASONING_END":
        if (!state) return this.fail(`REASONING_END for '${id}' that is not open`);
        if (state === "message") this.fail(`REASONING_END of '${id}' while its message is open`);
        this.openReasoning.delete(id);
        return;
    }
  }

  private step(ev: StreamEvent): void {
    const name = str(ev.stepName);
    if (!name) return this.fail(`${ev.type} without a stepName`);
    if (ev.type === "STEP_STARTED") {
      if (this.openSteps.has(name)) return this.fail(`STEP_STARTED of step '${name}' that is already open`);
      this.openSteps.add(name);
    } else if (!this.openSteps.delete(name)) this.fail(`STEP_FINISHED of step '${name}' that is not open`);
  }

  private custom(ev: StreamEvent): void {
    if (!str(ev.name)) return this.fail("CUSTOM without a name");
    if (ev.name !== PIPELINE_CUSTOM) return;
    const value = ev.value as { eventId?: unknown } | undefined;
    const eventId = str(value?.eventId);
    if (!eventId) return this.fail(`${PIPELINE_CUSTOM} without value.eventId`);
    if (!this.thread.claimPipelineEvent(eventId))
      this.fail(`pipeline event '${eventId}' shown twice on this thread`);
  }
}

/** The events of an SSE body (`data:` lines joined per record; comments and other fields ignored). */
export function parseSse(text: string): StreamEvent[] {
  return parseSseText(text)
    .filter((e) => e.data !== "")
    .map((e) => JSON.parse(e.data) as StreamEvent);
}

/**
 * Splits a capture of several runs (concatenated SSE responses, possibly of
 * several threads) into runs: each starts at RUN_STARTED, or is a lone
 * RUN_ERROR; the thread is the RUN_STARTED's threadId.
 */
export function splitRuns(events: readonly StreamEvent[]): Array<{ threadId?: string; events: StreamEvent[] }> {
  const runs: Array<{ threadId?: string; events: StreamEvent[] }> = [];
  let current: { threadId?: string; events: StreamEvent[] } | undefined;
  for (const ev of events) {
    if (ev.type === "RUN_STARTED" || !current) {
      current = { ...(str(ev.threadId) ? { threadId: str(ev.threadId) } : {}), events: [] };
      runs.push(current);
    }
    current.events.push(ev);
    if (TERMINAL.has(ev.type)) current = undefined;
  }
  return runs;
} // prettier-ignore
