// The step run: what one attempt of an agent step has done and publishes.
// Its tool log (appended as each call finishes, replayed after a restart)
// decides complete_step's state (a conclusion, a rollback, a confirmed or
// cancelled deployment); every event of the attempt's loop becomes pipeline
// envelopes with the step's coordinates; its questions go through the run's
// one-at-a-time input gate.
import { toolUses, type Message } from "../messages.js";
import type { InputRequest, RuntimeEvent } from "../seam.js";
import type { WaitingRound } from "../session/waiting-round.js";
import type { StoreLog } from "../store/runtime-store.js";
import type { EnvelopeSpec } from "./emitter.js";
import type { ToolLogEntry } from "./guards.js";
import type { StepAttempt, StepEnv } from "./step-attempt.js";
import { compactionEvent, progressEvent } from "./step-events.js";
import { failureText, stackOf } from "./step-results.js";
import type { CompletionState, ConfirmedDeployment } from "./tools.js";

const THINKING_MAX = 4000;

export class StepRun {
  readonly toolLog: ToolLogEntry[] = [];
  readonly state: CompletionState = {};
  private readonly inputs = new Map<string, Record<string, unknown>>();
  private readonly names = new Map<string, string>();
  private held: string | undefined;
  /** Inputs a restarted attempt waits for again: already announced, they are not journaled twice. */
  private readonly announced = new Set<string>();

  constructor(
    private readonly env: StepEnv,
    private readonly a: StepAttempt,
    private readonly toolLogRows: StoreLog,
    private readonly rounds: WaitingRound,
    private readonly signal: AbortSignal,
  ) {}

  /** Rebuilds the tool log (and complete_step's decision) of an attempt restarted from the store. */
  async restore(): Promise<void> {
    for (const row of await this.toolLogRows.read()) {
      try {
        this.log(JSON.parse(row) as ToolLogEntry);
      } catch {
        // A row that cannot be read: that call's result is not known, as if it had not finished.
      }
    }
  }

  /** Records a finished call; replayed after a restart, it restores what the call decided. */
  private log(entry: ToolLogEntry): void {
    this.toolLog.push(entry);
    if (entry.name === "ros_deploy" && entry.input.action === "create") {
      // A confirmation is good for one deployment.
      delete this.state.confirmed;
      return;
    }
    if (entry.isError) return;
    if (entry.name === "confirm_deployment") {
      const data = (entry.result ?? {}) as {
        decision?: string;
        targetStep?: string;
        reason?: string;
        message?: string;
      };
      if (data.decision === "confirm" && entry.record)
        this.state.confirmed = entry.record as ConfirmedDeployment;
      if (data.decision === "reselect" && data.targetStep && data.reason)
        this.state.rollback = { target_step: data.targetStep, reason: data.reason };
      if (data.decision === "cancel") this.state.cancelled = data.message ?? "The deployment was cancelled.";
      return;
    }
    if (entry.name !== "complete_step") return;
    const input = entry.input as {
      conclusion?: Record<string, unknown>;
      rollback_request?: { target_step: string; reason: string };
    };
    if (input.rollback_request) this.state.rollback = input.rollback_request;
    else if (input.conclusion) this.state.conclusion = input.conclusion;
  }

  /** The tool whose failures reached the step's limit (max_tool_failures), with its last error. */
  failureLimit(
    limits: Readonly<Record<string, number | undefined>>,
  ): { tool: string; count: number; last: string } | undefined {
    for (const [tool, limit] of Object.entries(limits)) {
      if (limit === undefined) continue;
      const failures = this.toolLog.filter((e) => e.name === tool && e.isError);
      if (failures.length >= limit)
        return { tool, count: failures.length, last: failureText(failures[failures.length - 1].result) };
    }
    return undefined;
  }

  /**
   * The calls of a round restored from the store, and the inputs it already
   * announced: their results and waits are published as if the process had
   * not stopped (a create's stack still reaches the ledger).
   */
  restoreRound(assistant: Message, waits: readonly InputRequest[]): void {
    for (const call of toolUses(assistant)) {
      this.inputs.set(call.id, call.input);
      this.names.set(call.id, call.name);
    }
    for (const wait of waits) this.announced.add(wait.inputId);
  }

  /** Failed complete_step calls of this attempt. */
  get conclusionErrors(): number {
    return this.toolLog.filter((e) => e.name === "complete_step" && e.isError).length;
  }

  private spec(
    eventType: string,
    data: Record<string, unknown>,
    extra: Partial<EnvelopeSpec> = {},
  ): EnvelopeSpec {
    return { eventType, data, ...this.a.coords, ...extra };
  }

  /** Runs an inner generator, publishing what it does with the step's coordinates. */
  async *project<T>(inner: AsyncGenerator<RuntimeEvent, T>): AsyncGenerator<RuntimeEvent, T> {
    try {
      for (;;) {
        const step = await inner.next();
        if (step.done) return step.value;
        yield* this.publish(step.value);
      }
    } finally {
      this.releaseHeld();
    }
  }

  private releaseHeld(): void {
    if (this.held === undefined) return;
    this.env.registry.settle(this.held);
    this.held = undefined;
    this.env.gate.release();
  }

  /** Publishes one event of the step (as envelopes, or as it is for the surfaces' own events). */
  async *publish(ev: RuntimeEvent): AsyncGenerator<RuntimeEvent> {
    const { emitter } = this.env;
    switch (ev.type) {
      case "message_start":
        yield await emitter.event(this.spec("message_started", { messageId: ev.messageId }));
        return;
      case "text_delta":
        yield await emitter.event(this.spec("text_delta", { messageId: ev.messageId, text: ev.text }));
        return;
      case "thinking_delta":
        yield await emitter.event(
          this.spec("thinking_delta", { type: "raw_thinking", text: ev.text.slice(0, THINKING_MAX) }),
        );
        return;
      case "tool_use_end":
        this.inputs.set(ev.toolUseId, ev.input);
        this.names.set(ev.toolUseId, ev.name);
        yield await emitter.event(
          this.spec("tool_started", { toolName: ev.name, toolUseId: ev.toolUseId, input: ev.input }),
        );
        return;
      case "tool_result":
        yield* this.toolResult(ev);
        return;
      case "tool_progress": {
        const { eventType, data } = progressEvent(ev);
        yield await emitter.event(this.spec(eventType, data));
        return;
      }
      case "compaction": {
        const { eventType, data } = compactionEvent(ev);
        yield await emitter.event(this.spec(eventType, data));
        return;
      }
      case "message_end":
        if (ev.usage) {
          yield await emitter.event(
            this.spec("usage", {
              provider: ev.usage.provider,
              model: ev.usage.model,
              inputTokens: ev.usage.inputTokens,
              outputTokens: ev.usage.outputTokens,
              totalTokens: ev.usage.totalTokens,
            }),
          );
        }
        return;
      case "input_required":
        yield* this.inputRequired(ev.request);
        return;
      case "input_received": {
        const permission = ev.kind === "permission";
        const envelopes = await emitter.envelopes(
          this.spec(
            permission ? "permission_resolved" : "input_received",
            {
              kind: ev.kind,
              inputId: ev.inputId,
              toolUseId: ev.toolUseId,
              ...(ev.decision !== undefined ? { decision: ev.decision } : {}),
              ...(permission ? { pending: false } : {}),
            },
            { input: { kind: ev.kind, inputId: ev.inputId, toolUseId: ev.toolUseId } },
          ),
        );
        yield { ...ev, pipeline: envelopes };
        if (this.held === ev.inputId) this.releaseHeld();
        return;
      }
      case "permission_decided":
        yield ev;
        return;
      default:
        return;
    }
  }

  private async *inputRequired(request: InputRequest): AsyncGenerator<RuntimeEvent> {
    // One input at a time: a parallel candidate's question waits for the one before it.
    await this.env.gate.acquire(this.signal);
    this.held = request.inputId;
    this.env.registry.publish(request, (answer) => this.rounds.answer(answer));
    if (this.announced.delete(request.inputId)) {
      yield { type: "input_required", request };
      return;
    }
    const permission = request.kind === "permission";
    const data = permission
      ? { toolName: request.toolName, toolUseId: request.toolUseId, inputId: request.inputId }
      : {
          kind: request.kind,
          inputId: request.inputId,
          toolUseId: request.toolUseId,
          question: request.prompt,
          prompt: request.prompt,
          options: request.options,
          allowFreeText: request.allowFreeText ?? false,
          ...(request.freeTextPrompt !== undefined ? { freeTextPrompt: request.freeTextPrompt } : {}),
          // The resource selector and the deployment confirmation carry what they are about.
          ...(request.selector ? { selector: request.selector } : {}),
          ...(request.operation ? { operation: request.operation } : {}),
          ...(request.displayParameters ? { displayParameters: request.displayParameters } : {}),
          ...(request.deploymentSummary ? { deploymentSummary: request.deploymentSummary } : {}),
        };
    const input = { kind: request.kind, inputId: request.inputId, toolUseId: request.toolUseId };
    const envelopes = await this.env.emitter.envelopes(
      this.spec(permission ? "permission_requested" : "input_required", data, {
        input,
        status: permission ? "working" : "input_required",
      }),
    );
    await this.env.emitter.checkpoint();
    yield { type: "input_required", request, pipeline: envelopes };
  }

  private async *toolResult(
    ev: Extract<RuntimeEvent, { type: "tool_result" }>,
  ): AsyncGenerator<RuntimeEvent> {
    const confirmed = this.state.confirmed;
    const entry: ToolLogEntry = {
      toolUseId: ev.toolUseId,
      name: ev.name,
      input: this.inputs.get(ev.toolUseId) ?? {},
      isError: ev.isError,
      result: ev.result,
      // What the user confirmed, unmasked (the published result masks secrets): ros_deploy's after a restart.
      ...(ev.name === "confirm_deployment" && confirmed?.toolUseId === ev.toolUseId
        ? { record: confirmed }
        : {}),
    };
    this.log(entry);
    this.toolLogRows.append([JSON.stringify(entry)]);
    await this.env.session.deps.store.commit();
    const { emitter } = this.env;
    const stack = stackOf(ev, entry.input);
    const specs: EnvelopeSpec[] = [
      this.spec("tool_result", {
        toolName: ev.name,
        toolUseId: ev.toolUseId,
        isError: ev.isError,
        result: ev.result,
        ...(stack ? { stackResult: stack } : {}),
      }),
    ];
    if (stack && stack.created) {
      specs.push(...((await this.a.onStack?.(stack)) ?? []));
      if (this.env.emitStackEvents) {
        specs.push({
          eventType: "stack_current_changed",
          scope: "stack",
          data: {
            toolName: ev.name,
            toolUseId: ev.toolUseId,
            provider: "ros",
            action: "create",
            deployAction: "create",
            regionId: stack.regionId,
            stackId: stack.stackId,
            stackName: stack.stackName,
            ...(stack.group ? { stackGroupName: stack.group.name, regionIds: stack.group.regionIds } : {}),
            stackStatus: stack.status,
            isSuccess: stack.status === "CREATE_COMPLETE",
            current: true,
          },
          ...(this.a.coords.step ? { step: this.a.coords.step } : {}),
        });
      }
    }
    yield await emitter.event(...specs);
  }
}
