// One agent session: the conversation of one A2A context in one workspace.
// runTurn() runs the agent loop for a user message; a tool round that needs
// a human answer suspends on an InputRequest that is persisted first, so a
// restarted process can re-publish it and resumeTurn() can finish the round.
import type { Logger } from "pino";
import { normalizeLanguage, t, type Language } from "../../i18n/index.js";
import { isAbortError, ProviderError, redactSecrets, ToolError, errorMessage } from "../errors.js";
import { newErrorId, newMessageId } from "../ids.js";
import { Channel } from "../loop/channel.js";
import { AssistantCollector } from "../loop/collector.js";
import {
  compactionSplit,
  contextWindowFor,
  estimateTokens,
  renderForSummary,
  SUMMARY_SYSTEM_PROMPT,
} from "../loop/context.js";
import { buildSystemPrompt } from "../loop/system-prompt.js";
import {
  effectiveContext,
  toolUses,
  type ContentBlock,
  type Message,
  type ToolResultBlock,
  type ToolUseBlock,
} from "../messages.js";
import { AuditLog } from "../permissions/audit.js";
import { checkAnswer, permissionRequest } from "../permissions/input-requests.js";
import { decidePermission, sessionRuleFor } from "../permissions/policy.js";
import type { PermissionRule } from "../permissions/rules.js";
import { createTurnProvider } from "../providers/factory.js";
import type { Provider, ProviderEvent, ToolDefinition } from "../providers/types.js";
import { resolveCloudCredentials, credentialSecrets } from "../cloud/credentials.js";
import type { CloudContext } from "../cloud/context.js";
import { RosClient } from "../cloud/ros-client.js";
import type {
  AgentSession,
  ArtifactPayload,
  InputAnswer,
  InputRequest,
  RuntimeEvent,
  TokenUsage,
  TurnInput,
  TurnOverrides,
} from "../seam.js";
import { turnTools, validateToolInput } from "../tools/registry.js";
import type { AnyTool, ToolContext } from "../tools/types.js";
import { Workspace } from "../tools/workspace.js";
import type { SessionDeps } from "./deps.js";
import { resultsMessageId, SessionStore, type PendingRound } from "./store.js";

const MAX_PARALLEL_TOOLS = 10;

/** The session was closed while a turn waited: the turn stops, its pending round stays on disk. */
class SessionClosedError extends Error {
  override name = "SessionClosedError";
}
const PREVIEW_CHARS = 2000;

interface Turn {
  overrides: TurnOverrides;
  lang: Language;
  signal: AbortSignal;
  provider?: Provider;
  tools: Map<string, AnyTool>;
  toolDefs: ToolDefinition[];
  cloud?: CloudContext;
  system: string;
  model: string;
  usage: TokenUsage;
  secrets: string[];
}

interface PreparedCall {
  use: ToolUseBlock;
  tool?: AnyTool;
  input: Record<string, unknown>;
  /** A result decided before permission (unknown tool, invalid input, path escape). */
  error?: string;
  allowed?: boolean;
  reason?: string;
}

type InputEntry = PendingRound["inputs"][number];

/**
 * Keeps tool-use ids unique within the session: some servers reuse ids
 * (call_0, ...) across messages, and ids key results, inputs and events.
 */
class ToolIdMap {
  private readonly known = new Set<string>();
  private readonly mapped = new Map<string, string>();

  constructor(messages: readonly Message[]) {
    for (const m of messages) for (const use of toolUses(m)) this.known.add(use.id);
  }

  map(event: ProviderEvent): ProviderEvent {
    if (event.type === "tool_use_start") {
      let id = event.id || "toolu";
      for (let n = 2; this.known.has(id); n++) id = `${event.id}_${n}`;
      this.known.add(id);
      this.mapped.set(event.id, id);
      return id === event.id ? event : { ...event, id };
    }
    if (event.type === "tool_input_delta" || event.type === "tool_use_end") {
      const id = this.mapped.get(event.id);
      return id === undefined || id === event.id ? event : { ...event, id };
    }
    return event;
  }
}

function zeroUsage(): TokenUsage {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
}

function addUsage(total: TokenUsage, add: TokenUsage): void {
  total.inputTokens += add.inputTokens;
  total.outputTokens += add.outputTokens;
  total.totalTokens += add.totalTokens;
  if (add.cachedInputTokens !== undefined)
    total.cachedInputTokens = (total.cachedInputTokens ?? 0) + add.cachedInputTokens;
}

function cancelAnswer(request: InputRequest): InputAnswer {
  return request.kind === "permission"
    ? { inputId: request.inputId, kind: "permission", decision: "deny" }
    : { inputId: request.inputId, kind: "ask_user_question", cancelled: true };
}

export class RuntimeSession implements AgentSession {
  private busy = false;
  private closed = false;
  private readonly lifetime = new AbortController();
  /** The tool round waiting for (or holding) human answers; persisted while it has inputs. */
  private round: PendingRound | undefined;
  private readonly waiters = new Map<string, (answer: InputAnswer) => void>();
  private readonly sessionUsage: TokenUsage = zeroUsage();
  private readonly logger: Logger;
  private readonly audit: AuditLog;

  private constructor(
    private readonly deps: SessionDeps,
    readonly sessionId: string,
    readonly contextId: string,
    private readonly workspace: Workspace,
    private readonly store: SessionStore,
    private readonly messages: Message[],
    private sessionRules: PermissionRule[],
    round: PendingRound | undefined,
  ) {
    this.round = round;
    this.logger = deps.logger.child({ sessionId });
    this.audit = new AuditLog(store.auditFile, this.logger);
  }

  get cwd(): string {
    return this.workspace.cwd;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Opens a new session, or restores a saved one (conversation repaired, pending round kept). */
  static async open(
    deps: SessionDeps,
    args: { sessionId: string; contextId: string; cwd: string },
  ): Promise<RuntimeSession> {
    const workspace = await Workspace.open(args.cwd);
    const store = new SessionStore(SessionStore.dirFor(deps.config.configDir, args.sessionId), deps.logger);
    const meta = await store.readMeta();
    if (!meta) {
      await store.create({
        version: 1,
        sessionId: args.sessionId,
        contextId: args.contextId,
        cwd: workspace.cwd,
        createdAt: new Date().toISOString(),
      });
      return new RuntimeSession(deps, args.sessionId, args.contextId, workspace, store, [], [], undefined);
    }
    if (meta.cwd !== workspace.cwd) throw new Error("The session belongs to a different workspace.");
    const messages = await store.loadConversation();
    let round = await store.loadPending();
    const rules = await store.loadSessionRules();
    const lastAssistant = [...messages].reverse().find((m) => m.role === "assistant");
    if (round && (round.assistantMessageId !== lastAssistant?.id || round.inputs.length === 0)) {
      deps.logger.warn({ sessionId: args.sessionId }, "stale pending round discarded");
      round = undefined;
      await store.savePending(undefined);
    }
    const session = new RuntimeSession(
      deps,
      args.sessionId,
      meta.contextId,
      workspace,
      store,
      messages,
      rules,
      round,
    );
    await session.repair(round?.assistantMessageId);
    return session;
  }

  // ---------------------------------------------------------------- seam API

  pendingInputs(): InputRequest[] {
    return (this.round?.inputs ?? []).filter((e) => !e.answer).map((e) => e.request);
  }

  answerInput(answer: InputAnswer): boolean {
    const round = this.round;
    const entry = round?.inputs.find((e) => e.request.inputId === answer.inputId);
    if (!round || !entry || entry.answer) return false;
    checkAnswer(entry.request, answer);
    entry.answer = answer;
    this.persistRound(round).catch(() => undefined);
    this.waiters.get(answer.inputId)?.(answer);
    return true;
  }

  async *runTurn(input: TurnInput, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    const lang = normalizeLanguage(input.overrides.language) ?? "en";
    if (this.busy || this.closed) {
      yield { type: "error", kind: "fatal", message: t(lang, "runtime.error.busy") };
      return;
    }
    this.busy = true;
    const turnSignal = AbortSignal.any([signal, this.lifetime.signal]);
    try {
      if (this.round) await this.supersedeRound();
      const turn = await this.beginTurn(input.overrides, turnSignal);
      const content: ContentBlock[] = [];
      if (input.text.length > 0) content.push({ type: "text", text: input.text });
      for (const image of input.images)
        content.push({ type: "image", mediaType: image.mediaType, data: image.data });
      const message: Message = {
        id: newMessageId(),
        role: "user",
        content,
        createdAt: new Date().toISOString(),
      };
      this.messages.push(message);
      await this.store.appendMessage(message);
      yield* this.guarded(turn, this.loop(turn));
    } catch (error) {
      yield this.errorEvent(lang, error, []);
    } finally {
      // The turn ends once what it recorded (conversation, usage) is on disk.
      await this.store.flush();
      this.busy = false;
    }
  }

  async *resumeTurn(overrides: TurnOverrides, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    if (!this.round) return;
    const lang = normalizeLanguage(overrides.language) ?? "en";
    if (this.busy || this.closed) {
      yield { type: "error", kind: "fatal", message: t(lang, "runtime.error.busy") };
      return;
    }
    this.busy = true;
    const turnSignal = AbortSignal.any([signal, this.lifetime.signal]);
    try {
      const turn = await this.beginTurn(overrides, turnSignal);
      const assistant = this.messages.find((m) => m.id === this.round?.assistantMessageId);
      if (!assistant) {
        this.round = undefined;
        await this.store.savePending(undefined);
        return;
      }
      yield* this.guarded(
        turn,
        (async function* (self: RuntimeSession) {
          const completed = yield* self.toolRound(turn, assistant);
          if (completed && !turn.signal.aborted) yield* self.loop(turn);
        })(this),
      );
    } catch (error) {
      yield this.errorEvent(lang, error, []);
    } finally {
      // The turn ends once what it recorded (conversation, usage) is on disk.
      await this.store.flush();
      this.busy = false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.lifetime.abort();
    await this.store.flush();
  }

  /** Token usage accumulated by this session since it was opened. */
  usage(): TokenUsage {
    return { ...this.sessionUsage };
  }

  /** The conversation as the model sees it (tests and diagnostics). */
  conversation(): readonly Message[] {
    return this.messages;
  }

  // ------------------------------------------------------------- the loop

  private async beginTurn(overrides: TurnOverrides, signal: AbortSignal): Promise<Turn> {
    const { deps } = this;
    const lang = normalizeLanguage(overrides.language) ?? "en";
    const credentials = resolveCloudCredentials({
      override: overrides.alibabaCloud,
      env: deps.env,
      configDir: deps.config.configDir,
      homeDir: deps.homeDir,
      logger: this.logger,
    });
    const cloud: CloudContext | undefined = credentials
      ? {
          credentials,
          ros: new RosClient({ credentials, endpoint: deps.cloud.endpoint }),
          pollIntervalMs: deps.cloud.pollIntervalMs,
          maxPollMs: deps.cloud.maxPollMs,
        }
      : undefined;
    const tools = turnTools(cloud !== undefined);
    const model = overrides.model ?? deps.config.model;
    return {
      overrides,
      lang,
      signal,
      tools: new Map(tools.map((tool) => [tool.name, tool])),
      toolDefs: tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
      })),
      ...(cloud ? { cloud } : {}),
      system: await buildSystemPrompt({
        cwd: this.workspace.cwd,
        provider: deps.config.provider.key,
        model,
        regionId: credentials?.regionId,
        cloudTools: cloud !== undefined,
      }),
      model,
      usage: zeroUsage(),
      secrets: [overrides.apiKey ?? "", deps.config.apiKey ?? "", ...credentialSecrets(credentials)].filter(
        Boolean,
      ),
    };
  }

  /** Turns an unexpected exception anywhere in the turn into one sanitised error event. */
  private async *guarded(turn: Turn, inner: AsyncGenerator<RuntimeEvent>): AsyncGenerator<RuntimeEvent> {
    try {
      yield* inner;
    } catch (error) {
      if (error instanceof SessionClosedError) return;
      if (turn.signal.aborted && isAbortError(error)) return;
      yield this.errorEvent(turn.lang, error, turn.secrets);
    }
  }

  private errorEvent(lang: Language, error: unknown, secrets: string[]): RuntimeEvent {
    const errorId = newErrorId();
    const kind = error instanceof ProviderError ? error.kind : "fatal";
    const detail = redactSecrets(
      error instanceof ProviderError ? error.detail : errorMessage(error),
      secrets,
    );
    this.logger.error(
      {
        errorId,
        kind,
        detail,
        ...(error instanceof ProviderError && error.status ? { status: error.status } : {}),
      },
      "turn failed",
    );
    const key =
      kind === "authentication"
        ? "runtime.error.authentication"
        : kind === "retryable"
          ? "runtime.error.retryable"
          : error instanceof ProviderError
            ? "runtime.error.provider"
            : "runtime.error.internal";
    return { type: "error", kind, message: t(lang, key), errorId };
  }

  private async *loop(turn: Turn): AsyncGenerator<RuntimeEvent> {
    for (let round = 0; ; round++) {
      if (turn.signal.aborted) return;
      if (round >= this.deps.limits.maxTurns) {
        yield { type: "message_end", messageId: newMessageId(), stopReason: "max_turns", text: "" };
        return;
      }
      turn.provider ??= createTurnProvider(this.deps.providers, turn.overrides);
      yield* this.maybeCompact(turn, turn.provider);
      if (turn.signal.aborted) return;

      const messageId = newMessageId();
      const collector = new AssistantCollector();
      let end: Extract<ProviderEvent, { type: "message_end" }> | undefined;
      yield { type: "message_start", messageId };
      try {
        const stream = turn.provider.stream({
          system: turn.system,
          messages: effectiveContext(this.messages),
          tools: turn.toolDefs,
          kind: "stream",
          signal: turn.signal,
        });
        const ids = new ToolIdMap(this.messages);
        for await (const raw of stream) {
          const event = ids.map(raw);
          collector.add(event);
          switch (event.type) {
            case "text_delta":
              if (event.text) yield { type: "text_delta", messageId, text: event.text };
              break;
            case "thinking_delta":
              if (event.text) yield { type: "thinking_delta", messageId, text: event.text };
              break;
            case "tool_use_start":
              yield { type: "tool_use_start", toolUseId: event.id, name: event.name };
              break;
            case "tool_input_delta":
              yield {
                type: "tool_input_delta",
                toolUseId: event.id,
                partialJsonLength: event.partialJson.length,
              };
              break;
            case "tool_use_end":
              yield { type: "tool_use_end", toolUseId: event.id, name: event.name, input: event.input };
              break;
            case "message_end":
              end = event;
              break;
          }
        }
      } catch (error) {
        if (turn.signal.aborted || isAbortError(error)) {
          yield { type: "message_end", messageId, stopReason: "cancelled", text: collector.fullText };
          return;
        }
        yield { type: "message_end", messageId, stopReason: "stream_error", text: collector.fullText };
        yield this.errorEvent(turn.lang, error, turn.secrets);
        return;
      }
      if (!end) {
        yield { type: "message_end", messageId, stopReason: "stream_error", text: collector.fullText };
        yield this.errorEvent(
          turn.lang,
          new ProviderError("retryable", "stream ended without message_end"),
          turn.secrets,
        );
        return;
      }

      const assistant = collector.toMessage(messageId);
      if (assistant) {
        this.messages.push(assistant);
        await this.store.appendMessage(assistant);
      }
      let usage: TokenUsage | undefined;
      if (end.usage) {
        usage = {
          inputTokens: end.usage.inputTokens,
          outputTokens: end.usage.outputTokens,
          totalTokens: end.usage.inputTokens + end.usage.outputTokens,
          ...(end.usage.cachedInputTokens !== undefined
            ? { cachedInputTokens: end.usage.cachedInputTokens }
            : {}),
          provider: turn.provider.name,
          model: turn.provider.model,
        };
        this.recordUsage(turn, messageId, usage);
      }
      const stopReason = collector.hasToolCalls ? "tool_use" : end.stopReason;
      yield {
        type: "message_end",
        messageId,
        stopReason,
        ...(usage ? { usage } : {}),
        text: collector.fullText,
      };
      if (!assistant || !collector.hasToolCalls) return;
      const completed = yield* this.toolRound(turn, assistant);
      if (!completed) return;
    }
  }

  private recordUsage(turn: Turn, messageId: string, usage: TokenUsage): void {
    addUsage(turn.usage, usage);
    addUsage(this.sessionUsage, usage);
    this.store
      .appendUsage({
        messageId,
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        totalTokens: usage.totalTokens,
        ...(usage.cachedInputTokens !== undefined ? { cachedInputTokens: usage.cachedInputTokens } : {}),
        provider: usage.provider ?? "",
        model: usage.model ?? "",
      })
      .catch((error: unknown) => this.logger.warn({ err: errorMessage(error) }, "usage record not written"));
  }

  // ------------------------------------------------------------ compaction

  private async *maybeCompact(turn: Turn, provider: Provider): AsyncGenerator<RuntimeEvent> {
    const { limits } = this.deps;
    const context = effectiveContext(this.messages);
    const window = limits.contextWindow ?? contextWindowFor(provider.model);
    const original = estimateTokens(turn.system, context, turn.toolDefs);
    if (original < window * limits.compactThreshold) return;
    const offset = this.messages.length - context.length;
    const split = compactionSplit(context, limits.keepTurns);
    if (split <= 0) return;
    yield { type: "compaction", phase: "started", originalTokens: original };
    try {
      let summary = "";
      const stream = provider.stream({
        system: SUMMARY_SYSTEM_PROMPT,
        messages: [
          {
            id: newMessageId(),
            role: "user",
            content: [{ type: "text", text: renderForSummary(context.slice(0, split)) }],
            createdAt: new Date().toISOString(),
          },
        ],
        tools: [],
        kind: "complete",
        signal: turn.signal,
      });
      for await (const event of stream) {
        if (event.type === "text_delta") summary += event.text;
        if (event.type === "message_end" && event.usage) {
          this.recordUsage(turn, "compaction", {
            inputTokens: event.usage.inputTokens,
            outputTokens: event.usage.outputTokens,
            totalTokens: event.usage.inputTokens + event.usage.outputTokens,
            provider: provider.name,
            model: provider.model,
          });
        }
      }
      summary = summary.trim();
      if (!summary) throw new Error("empty summary");
      const keptFirst = context[split];
      const marker: Message = {
        id: newMessageId(),
        role: "user",
        kind: "compaction_summary",
        content: [{ type: "text", text: `Summary of the earlier conversation:\n${summary}` }],
        createdAt: new Date().toISOString(),
      };
      this.messages.splice(offset + split, 0, marker);
      await this.store.appendMarker(marker, keptFirst.id);
      const compacted = estimateTokens(turn.system, effectiveContext(this.messages), turn.toolDefs);
      yield {
        type: "compaction",
        phase: "finished",
        originalTokens: original,
        compactedTokens: compacted,
        summary,
      };
    } catch (error) {
      if (turn.signal.aborted) return;
      this.logger.warn({ err: redactSecrets(errorMessage(error), turn.secrets) }, "compaction failed");
      yield { type: "compaction", phase: "failed", originalTokens: original };
    }
  }

  // ------------------------------------------------------------ tool rounds

  /** Results already recorded for an assistant message (after a restart or a suspended round). */
  private resultsMessage(assistantId: string): Message | undefined {
    const index = this.messages.findIndex((m) => m.id === assistantId);
    const next = index >= 0 ? this.messages[index + 1] : undefined;
    return next?.id === resultsMessageId(assistantId) ? next : undefined;
  }

  private async recordResult(assistant: Message, block: ToolResultBlock): Promise<void> {
    let holder = this.resultsMessage(assistant.id);
    if (!holder) {
      holder = {
        id: resultsMessageId(assistant.id),
        role: "user",
        content: [],
        createdAt: new Date().toISOString(),
      };
      const index = this.messages.findIndex((m) => m.id === assistant.id);
      this.messages.splice(index + 1, 0, holder);
    }
    holder.content.push(block);
    const order = toolUses(assistant).map((u) => u.id);
    const pos = (b: ContentBlock): number => order.indexOf(b.type === "tool_result" ? b.toolUseId : "");
    holder.content.sort((a, b) => pos(a) - pos(b));
    await this.store.appendToolResult(assistant.id, block);
  }

  /**
   * Runs the tool calls of an assistant message: every call is decided first
   * (asking the user when needed), then the allowed ones run (read-only ones
   * in parallel). Returns true when every call has a result and the loop may
   * continue; false when the turn was cancelled.
   */
  private async *toolRound(turn: Turn, assistant: Message): AsyncGenerator<RuntimeEvent, boolean> {
    const done = new Set(
      (this.resultsMessage(assistant.id)?.content ?? []).flatMap((b) =>
        b.type === "tool_result" ? [b.toolUseId] : [],
      ),
    );
    const round: PendingRound =
      this.round?.assistantMessageId === assistant.id
        ? this.round
        : { version: 1, assistantMessageId: assistant.id, decisions: {}, inputs: [] };
    this.round = round;

    const calls: PreparedCall[] = [];
    for (const use of toolUses(assistant)) {
      if (done.has(use.id)) continue;
      const call = await this.prepare(turn, use, round);
      calls.push(call);
      if (call.error !== undefined) continue;
      const saved = round.decisions[use.id];
      if (saved) {
        call.allowed = saved.allowed;
        call.reason = saved.reason;
        continue;
      }
      if (turn.signal.aborted) break;
      const decision = yield* this.decide(turn, round, call);
      call.allowed = decision.allowed;
      call.reason = decision.reason;
      round.decisions[use.id] = decision;
      if (round.inputs.length > 0) await this.persistRound(round);
    }

    if (!turn.signal.aborted) {
      for (let i = 0; i < calls.length && !turn.signal.aborted;) {
        const call = calls[i];
        if (call.error !== undefined || !call.allowed) {
          const content =
            call.error ??
            (call.reason === "cancelled"
              ? "Permission denied: the request was cancelled."
              : "Permission denied.");
          yield* this.emitResult(turn, assistant, call, {
            type: "tool_result",
            toolUseId: call.use.id,
            content,
            isError: true,
          });
          i++;
          continue;
        }
        const batch = [call];
        const tool = call.tool as AnyTool;
        if (tool.isConcurrencySafe(call.input)) {
          while (batch.length < MAX_PARALLEL_TOOLS && i + batch.length < calls.length) {
            const next = calls[i + batch.length];
            if (next.error !== undefined || !next.allowed || !next.tool?.isConcurrencySafe(next.input)) break;
            batch.push(next);
          }
        }
        i += batch.length;
        yield* this.runBatch(turn, assistant, round, batch);
      }
    }

    if (turn.signal.aborted) {
      // Closing (shutdown) is not cancelling: the round stays as a restart would find it.
      if (this.lifetime.signal.aborted) throw new SessionClosedError();
      const recorded = new Set(
        (this.resultsMessage(assistant.id)?.content ?? []).flatMap((b) =>
          b.type === "tool_result" ? [b.toolUseId] : [],
        ),
      );
      for (const use of toolUses(assistant)) {
        if (recorded.has(use.id)) continue;
        const denied = round.decisions[use.id]?.allowed === false;
        await this.recordResult(assistant, {
          type: "tool_result",
          toolUseId: use.id,
          content: denied
            ? "Permission denied: the request was cancelled."
            : "Cancelled by the user before the tool finished.",
          isError: true,
        });
      }
    }
    this.round = undefined;
    await this.store.savePending(undefined);
    return !turn.signal.aborted;
  }

  private async prepare(turn: Turn, use: ToolUseBlock, round: PendingRound): Promise<PreparedCall> {
    const tool = turn.tools.get(use.name);
    const call: PreparedCall = { use, input: use.input, ...(tool ? { tool } : {}) };
    const asked = round.inputs.some(
      (e) => e.request.kind === "ask_user_question" && e.request.toolUseId === use.id,
    );
    if (round.started?.includes(use.id) && !asked) {
      // It may have had its effect already: never run it twice.
      call.error = "The tool call was interrupted before it finished (the server restarted).";
      return call;
    }
    if (!tool) {
      call.error = `Unknown tool ${use.name}. Available tools: ${[...turn.tools.keys()].join(", ")}.`;
      return call;
    }
    if (use.inputError) {
      call.error = `${use.inputError} Call ${use.name} again with a JSON object of arguments.`;
      return call;
    }
    const invalid = validateToolInput(tool, use.input);
    if (invalid) {
      call.error = invalid;
      return call;
    }
    try {
      await tool.precheck?.(use.input, this.workspace);
    } catch (error) {
      if (!(error instanceof ToolError)) throw error;
      call.error = error.message;
    }
    return call;
  }

  private async *decide(
    turn: Turn,
    round: PendingRound,
    call: PreparedCall,
  ): AsyncGenerator<RuntimeEvent, { allowed: boolean; reason: string }> {
    const tool = call.tool as AnyTool;
    const base = {
      sessionId: this.sessionId,
      toolUseId: call.use.id,
      toolName: tool.name,
      input: call.input,
    };
    let entry = round.inputs.find(
      (e) => e.request.kind === "permission" && e.request.toolUseId === call.use.id,
    );
    if (!entry) {
      const decision = decidePermission(
        tool,
        call.input,
        this.workspace,
        this.deps.config.permissions,
        this.sessionRules,
      );
      if (decision.behavior !== "ask") {
        let allowed = decision.behavior === "allow";
        let reason = decision.reason;
        if (decision.behavior === "allow" && decision.audited) {
          if (
            !(await this.audit.record({
              ...base,
              decision: "allow",
              reason,
              autoApproved: decision.autoApproved,
            }))
          ) {
            allowed = false;
            reason = "audit_failed";
          }
        } else if (decision.behavior === "deny") {
          await this.audit.record({ ...base, decision: "deny", reason, autoApproved: decision.autoApproved });
        }
        yield {
          type: "permission_decided",
          toolUseId: call.use.id,
          toolName: tool.name,
          allowed,
          autoApproved: decision.autoApproved,
          reason,
        };
        return { allowed, reason };
      }
      const request = permissionRequest({
        toolUseId: call.use.id,
        toolName: tool.name,
        input: call.input,
        description: tool.describe(call.input, turn.lang, this.workspace),
        isReadOnly: tool.isReadOnly(call.input),
        lang: turn.lang,
      });
      entry = { request };
      round.inputs.push(entry);
      if (!(await this.persistRound(round))) {
        // Without a durable record the wait could not survive a restart: fail safe.
        round.inputs.pop();
        await this.audit.record({
          ...base,
          decision: "deny",
          reason: "state_unavailable",
          autoApproved: false,
        });
        yield {
          type: "permission_decided",
          toolUseId: call.use.id,
          toolName: tool.name,
          allowed: false,
          autoApproved: false,
          reason: "state_unavailable",
        };
        return { allowed: false, reason: "state_unavailable" };
      }
    }
    const answer = yield* this.waitFor(turn, entry);
    const decision = answer.kind === "permission" ? answer.decision : "deny";
    const cancelled = turn.signal.aborted;
    if (!cancelled) {
      yield {
        type: "input_received",
        inputId: entry.request.inputId,
        toolUseId: call.use.id,
        kind: "permission",
        decision,
      };
    }
    const inputId = entry.request.inputId;
    if (decision === "deny") {
      const reason = cancelled ? "cancelled" : "user:deny";
      await this.audit.record({ ...base, decision: "deny", reason, autoApproved: false, inputId });
      return { allowed: false, reason };
    }
    const reason = `user:${decision}`;
    if (!(await this.audit.record({ ...base, decision: "allow", reason, autoApproved: false, inputId }))) {
      return { allowed: false, reason: "audit_failed" };
    }
    if (decision === "allow_always") {
      const rule = sessionRuleFor(tool, call.input, this.workspace);
      if (rule && !this.sessionRules.some((r) => r.raw === rule.raw)) {
        this.sessionRules = [...this.sessionRules, rule];
        await this.store
          .saveSessionRules(this.sessionRules)
          .catch((error: unknown) =>
            this.logger.warn({ err: errorMessage(error) }, "session rules not saved"),
          );
      }
    }
    return { allowed: true, reason };
  }

  /** Publishes an input (unless already answered) and waits for its answer; an abort answers "deny"/"cancelled". */
  private async *waitFor(turn: Turn, entry: InputEntry): AsyncGenerator<RuntimeEvent, InputAnswer> {
    if (entry.answer) return entry.answer;
    yield { type: "input_required", request: entry.request };
    return await this.answerOf(turn.signal, entry);
  }

  /** The answer of an input; an abort answers deny/cancelled, closing the session rejects. */
  private answerOf(signal: AbortSignal, entry: InputEntry): Promise<InputAnswer> {
    const id = entry.request.inputId;
    return new Promise<InputAnswer>((resolve, reject) => {
      if (entry.answer) return resolve(entry.answer);
      const onAbort = (): void => {
        this.waiters.delete(id);
        if (this.lifetime.signal.aborted) reject(new SessionClosedError());
        else resolve(cancelAnswer(entry.request));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.set(id, (answer) => {
        signal.removeEventListener("abort", onAbort);
        this.waiters.delete(id);
        resolve(answer);
      });
    });
  }

  private async persistRound(round: PendingRound): Promise<boolean> {
    try {
      await this.store.savePending(round);
      return true;
    } catch (error) {
      this.logger.error({ err: errorMessage(error) }, "pending input could not be persisted");
      return false;
    }
  }

  private async *runBatch(
    turn: Turn,
    assistant: Message,
    round: PendingRound,
    batch: PreparedCall[],
  ): AsyncGenerator<RuntimeEvent> {
    const channel = new Channel<RuntimeEvent>();
    const all = Promise.all(
      batch.map(async (call) => {
        const block = await this.execute(turn, round, call, channel);
        if (!block) return;
        await this.recordResult(assistant, block.block);
        channel.push({
          type: "tool_result",
          toolUseId: call.use.id,
          name: call.use.name,
          result: block.data,
          isError: block.block.isError,
          ...(block.artifact ? { artifact: block.artifact } : {}),
        });
      }),
    );
    all.catch(() => undefined);
    yield* channel.drain(all);
    await all;
  }

  private async *emitResult(
    _turn: Turn,
    assistant: Message,
    call: PreparedCall,
    block: ToolResultBlock,
  ): AsyncGenerator<RuntimeEvent> {
    await this.recordResult(assistant, block);
    yield {
      type: "tool_result",
      toolUseId: call.use.id,
      name: call.use.name,
      result: block.content,
      isError: true,
    };
  }

  /** Runs one tool; undefined when the turn was cancelled before it finished (the caller records that). */
  private async execute(
    turn: Turn,
    round: PendingRound,
    call: PreparedCall,
    channel: Channel<RuntimeEvent>,
  ): Promise<{ block: ToolResultBlock; data: unknown; artifact?: ArtifactPayload } | undefined> {
    const tool = call.tool as AnyTool;
    if (round.inputs.length > 0 && !tool.isReadOnly(call.input)) {
      round.started = [...(round.started ?? []), call.use.id];
      await this.persistRound(round);
    }
    const timeoutMs = tool.timeoutMs ?? this.deps.limits.toolTimeoutMs;
    const timeout = new AbortController();
    const timer = timeoutMs > 0 ? setTimeout(() => timeout.abort(), timeoutMs) : undefined;
    const signal = AbortSignal.any([turn.signal, timeout.signal]);
    const ctx: ToolContext = {
      workspace: this.workspace,
      signal,
      toolUseId: call.use.id,
      language: turn.lang,
      progress: (progress) =>
        channel.push({ type: "tool_progress", toolUseId: call.use.id, name: tool.name, progress }),
      askUser: (request) => this.askFromTool(turn, round, request, channel),
      ...(turn.cloud ? { cloud: turn.cloud } : {}),
    };
    const block = (content: string, isError: boolean): ToolResultBlock => ({
      type: "tool_result",
      toolUseId: call.use.id,
      content,
      isError,
    });
    try {
      const result = await tool.run(call.input, ctx);
      let content = result.content;
      let data: unknown = result.data ?? result.content;
      if (content.length > this.deps.limits.largeResultChars) {
        const storedAs = await this.store.storeLargeResult(call.use.id, content);
        const note = `\n\n[Result cut: ${content.length} characters; the full text is stored with the session as ${storedAs}. Narrow the request to see more.]`;
        content = content.slice(0, PREVIEW_CHARS) + note;
        data = { preview: content, truncated: true, originalLength: result.content.length };
      }
      return {
        block: block(content, result.isError === true),
        data,
        ...(result.artifact ? { artifact: result.artifact } : {}),
      };
    } catch (error) {
      if (turn.signal.aborted) return undefined;
      if (timeout.signal.aborted) {
        const limit = timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`;
        const text = `${tool.name} timed out after ${limit}.`;
        return { block: block(text, true), data: text };
      }
      if (error instanceof ToolError) return { block: block(error.message, true), data: error.message };
      const errorId = newErrorId();
      this.logger.error(
        { errorId, tool: tool.name, err: redactSecrets(errorMessage(error), turn.secrets) },
        "tool failed",
      );
      const text = `${tool.name} failed unexpectedly (error id ${errorId}).`;
      return { block: block(text, true), data: text };
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  private async askFromTool(
    turn: Turn,
    round: PendingRound,
    request: InputRequest,
    channel: Channel<RuntimeEvent>,
  ): Promise<InputAnswer> {
    let entry = round.inputs.find((e) => e.request.inputId === request.inputId);
    if (!entry) {
      entry = { request };
      round.inputs.push(entry);
      if (!(await this.persistRound(round))) return cancelAnswer(request);
    }
    if (!entry.answer) channel.push({ type: "input_required", request: entry.request });
    const answer = await this.answerOf(turn.signal, entry);
    if (!turn.signal.aborted) {
      channel.push({
        type: "input_received",
        inputId: entry.request.inputId,
        toolUseId: entry.request.toolUseId,
        kind: "ask_user_question",
        decision: answer.kind === "ask_user_question" && answer.cancelled ? "cancelled" : "answered",
      });
    }
    return answer;
  }

  // --------------------------------------------------------------- restore

  /** Gives every tool call without a result a synthetic error result, except the round that can resume. */
  private async repair(resumable: string | undefined): Promise<void> {
    for (let i = 0; i < this.messages.length; i++) {
      const message = this.messages[i];
      if (message.role !== "assistant" || message.id === resumable) continue;
      const uses = toolUses(message);
      if (uses.length === 0) continue;
      const holder = this.resultsMessage(message.id);
      const have = new Set(
        (holder?.content ?? []).flatMap((b) => (b.type === "tool_result" ? [b.toolUseId] : [])),
      );
      const missing = uses.filter((u) => !have.has(u.id));
      if (missing.length === 0) continue;
      const isLast = this.messages.slice(i + 1).every((m) => m.id === resultsMessageId(message.id));
      for (const use of missing) {
        const block: ToolResultBlock = {
          type: "tool_result",
          toolUseId: use.id,
          content: "The tool call was interrupted before it finished (the server restarted).",
          isError: true,
        };
        if (isLast) await this.recordResult(message, block);
        else {
          let target = this.resultsMessage(message.id);
          if (!target) {
            target = {
              id: resultsMessageId(message.id),
              role: "user",
              content: [],
              createdAt: message.createdAt,
            };
            this.messages.splice(i + 1, 0, target);
          }
          target.content.push(block);
        }
      }
      this.logger.info({ repaired: missing.length }, "interrupted tool calls repaired");
    }
  }

  /** A new message while a restored round waits: the waiting calls are denied and closed. */
  private async supersedeRound(): Promise<void> {
    const round = this.round;
    if (!round) return;
    const assistant = this.messages.find((m) => m.id === round.assistantMessageId);
    for (const entry of round.inputs) {
      if (entry.answer || entry.request.kind !== "permission") continue;
      await this.audit.record({
        sessionId: this.sessionId,
        toolUseId: entry.request.toolUseId,
        toolName: entry.request.toolName,
        decision: "deny",
        reason: "superseded",
        autoApproved: false,
        inputId: entry.request.inputId,
        input: {},
      });
    }
    if (assistant) {
      const have = new Set(
        (this.resultsMessage(assistant.id)?.content ?? []).flatMap((b) =>
          b.type === "tool_result" ? [b.toolUseId] : [],
        ),
      );
      for (const use of toolUses(assistant)) {
        if (have.has(use.id)) continue;
        await this.recordResult(assistant, {
          type: "tool_result",
          toolUseId: use.id,
          content: "Not run: the user sent a new message instead of answering.",
          isError: true,
        });
      }
    }
    this.round = undefined;
    await this.store.savePending(undefined);
  }
}
