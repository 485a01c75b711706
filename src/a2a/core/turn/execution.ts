// One running turn of one task, its lifecycle (the role of a2a-js's
// AgentExecutor): opens the session, follows the runtime's events until the
// turn ends, is cancelled or detached, and reports the turn (log line, span,
// observer). Each event goes to the event mapper (event-mapper.ts), the input
// waits and answers to input-waits.ts, and what the task hears leaves through
// the publisher (publisher.ts).
import { randomUUID } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import { pb } from "../../../contract/index.js";
import type { AgentSession, PipelineEnvelope, RuntimeEvent } from "../../../runtime/seam.js";
import type { ModelTokens } from "../../../server/model-tokens.js";
import { failSpan, startSpan, withSpan, type Span } from "../../../server/tracing/index.js";
import type { ParsedAnswer } from "../incoming-message/input-answer.js";
import { invalidParams } from "../request/errors.js";
import type { TaskRecord } from "../task-record.js";
import type { BackupGate } from "./backup-gate.js";
import { EventMapper, type MapperDeps } from "./event-mapper.js";
import { InputWaits, type WaitsDeps } from "./input-waits.js";
import { TurnPublisher, type PublisherDeps } from "./publisher.js";

/** One turn as the log line and the metrics see it. */
export interface TurnSummary {
  taskId: string;
  contextId: string;
  /** The context's telemetry channel when the turn started. */
  channel: string;
  /** completed (ready for the next message), failed, canceled, detached (shutdown while waiting), or a pipeline end state. */
  outcome: string;
  /** The failure's code, when failed. */
  code?: string;
  durationMs: number;
  inputTokens: number;
  outputTokens: number;
  /** The same tokens by provider and model (one entry per model the turn called). */
  usage: ModelTokens[];
}

/** Told when a turn ends and when a live turn starts or stops waiting for an answer. */
export interface TurnObserver {
  ended(summary: TurnSummary): void;
  waiting(delta: 1 | -1): void;
}

export type ExecutionDeps = PublisherDeps &
  MapperDeps &
  WaitsDeps & { observer?: TurnObserver; backup?: BackupGate };

/** How long a cancel waits for the runtime to unwind before giving up on it. */
const CANCEL_UNWIND_MS = 30_000;

export class TurnExecution {
  readonly hub: TurnPublisher["hub"];
  private readonly controller = new AbortController();
  private readonly out: TurnPublisher;
  /** The turn's input waits: restored ones expected, answers accepted (turns.ts). */
  readonly waits: InputWaits;
  private readonly mapper: EventMapper;
  private startedAt = performance.now();
  private canceling = false;
  private done: Promise<void> = Promise.resolve();
  private finished = false;
  /** Set on shutdown while the turn waits for input: stop following it, publish nothing. */
  private detached = false;
  /** Ends the wait for the runtime's next event (set while the turn runs). */
  private stopFollowing?: () => void;
  private span?: Span;
  /** The context's telemetry channel (set when the turn is reserved). */
  channel = "unknown";
  /** The turn's session once open (the backup of a wait journals its notice there). */
  private session?: AgentSession;

  constructor(
    private readonly deps: ExecutionDeps,
    readonly record: TaskRecord,
    private readonly onFinished: () => void,
  ) {
    this.out = new TurnPublisher(deps, record);
    this.hub = this.out.hub;
    this.waits = new InputWaits(deps, this.out, (reason) => this.failUnexpectedly(reason));
    this.mapper = new EventMapper(deps, this.out, this.waits);
    if (deps.backup?.enabled) this.waits.beforeWait = (publish) => this.backUpWait(publish);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }
  get taskId(): string {
    return this.record.task.id;
  }
  get contextId(): string {
    return this.record.task.contextId;
  }

  /** Runs a turn: opens the session (may fail), then drives the runtime events. */
  start(
    open: () => Promise<AgentSession>,
    events: (session: AgentSession) => AsyncIterable<RuntimeEvent>,
    resume?: ParsedAnswer,
  ): void {
    this.startedAt = performance.now();
    // The turn's span: child of the A2A call that started it; the runtime's model and tool spans are its children.
    this.span = startSpan("iac-code.a2a", "turn", {
      attributes: {
        "iac_code.task_id": this.taskId,
        "iac_code.context_id": this.contextId,
        "iac_code.channel": this.channel,
        ...(resume ? { "iac_code.turn.resumed": true } : {}),
      },
    });
    if (resume) this.waits.resumeWith(resume);
    this.done = withSpan(this.span, () => this.run(open, events));
  }

  /** Resolves a pending input of the live turn (the answer came on the same task). */
  answer(parsed: ParsedAnswer, message: pb.Message, session: AgentSession): void {
    if (this.canceling)
      throw invalidParams("permission_resume_invalid: task cancellation is already in progress.");
    this.waits.answer(parsed, message, session);
  }

  async cancel(session?: AgentSession): Promise<void> {
    if (!this.canceling && !this.finished) {
      this.canceling = true;
      const pending = this.waits.pending;
      // Abort first: a runtime that watches the signal then records the wait as
      // cancelled (not as the user's deny) and announces no answer.
      this.controller.abort();
      if (pending && session) await this.waits.cancel(pending, session);
    }
    await boundedWait(this.done, CANCEL_UNWIND_MS);
  }

  /**
   * Shutdown of a turn that waits for input: stop following it without
   * answering (the runtime keeps its wait point on disk) and leave the durable
   * INPUT_REQUIRED snapshot as it is, so a restarted server can take the
   * answer. Returns false when the turn is not waiting.
   */
  detach(): boolean {
    if (!this.waits.pending || this.finished || this.canceling) return false;
    this.detached = true;
    this.stopFollowing?.();
    return true;
  }

  /** Waits for the turn to end (used on shutdown). */
  whenDone(): Promise<void> {
    return this.done;
  }

  private async run(
    open: () => Promise<AgentSession>,
    events: (session: AgentSession) => AsyncIterable<RuntimeEvent>,
  ): Promise<void> {
    let session: AgentSession | undefined;
    let iterator: AsyncIterator<RuntimeEvent> | undefined;
    try {
      session = await open();
      this.session = session;
      this.out.sessionId = session.sessionId;
      if (this.canceling) throw new CanceledSignal();
      this.out.status(pb.TaskState.WORKING, {});
      iterator = events(session)[Symbol.asyncIterator]();
      const { next, stop } = abortableSteps(iterator, this.signal);
      this.stopFollowing = stop;
      for (;;) {
        const step = await next();
        if (step === "aborted") {
          const unwound = iterator.return?.().catch(() => undefined);
          // A cancelled turn is over once the runtime has unwound (its session is
          // free for the next turn, its audit lines are written); a runtime that
          // ignores the signal is not waited for beyond the bound, a detached one not at all.
          if (unwound && !this.detached) await boundedWait(unwound, CANCEL_UNWIND_MS);
          break;
        }
        if (step.done) break;
        await this.mapper.map(step.value, session);
      }
      await this.finish(session);
    } catch (error) {
      if (error instanceof CanceledSignal || this.canceling) {
        await this.finish(session);
      } else {
        const errorId = randomUUID();
        this.deps.logger.error({ err: error, errorId, taskId: this.taskId }, "turn failed unexpectedly");
        this.mapper.fail(
          looksLikeAuthError(error) ? "MODEL_AUTHENTICATION_FAILED" : "RUNTIME_ERROR",
          errorId,
          false,
        );
        // The runtime's turn may be waiting (for an answer, a tool): stop it, so its session is
        // free for the next turn instead of busy forever.
        this.controller.abort();
        const unwound = iterator?.return?.().catch(() => undefined);
        if (unwound) await boundedWait(unwound, CANCEL_UNWIND_MS);
        await this.finish(session);
      }
    } finally {
      this.finished = true;
      this.waits.pending = undefined;
      this.out.hub.close();
      this.onFinished();
      this.summarize();
    }
  }

  /**
   * Publishes the turn's end; with session backups, only once the backup of
   * what the end leaves holds (backup-gate.ts): a terminal end whose backup
   * fails is published INPUT_REQUIRED with backupBlocked instead.
   */
  private async finish(session: AgentSession | undefined): Promise<void> {
    if (this.detached) return;
    const gate = this.deps.backup;
    if (!gate?.enabled) return this.mapper.finish(this.canceling);
    const ended = this.out.preview(() => this.mapper.finish(this.canceling));
    const verdict = await gate.turnEnd(this.contextId, ended);
    const gated = this.mapper.gatedEnvelopes;
    // Pipeline ends only: the notices join the run's journal (a normal turn has no envelope to gate).
    if (verdict.kind === "blocked") {
      const { reason, error } = verdict.backupBlocked;
      const notice =
        gated.length > 0
          ? await journal(session, [
              {
                eventType: "backup_blocked",
                status: "input_required",
                data: { reason, error, recoverable: true },
              },
            ])
          : undefined;
      this.mapper.blocked(verdict.backupBlocked, notice);
      return;
    }
    if (verdict.kind === "committed" && gated.length > 0) {
      // One acknowledgement per gated envelope (the end, the handoff), after them.
      const notice = await journal(
        session,
        gated.map((e) => ({
          eventType: "backup_committed",
          status: e.status,
          data: {
            committedEventId: e.eventId,
            committedEventType: e.eventType,
            committedSequence: e.sequence,
          },
        })),
      );
      if (notice) this.mapper.appendToEnd(notice);
    }
    this.mapper.finish(this.canceling);
  }

  /**
   * The critical `input_required` backup of a wait, taken from the task as the
   * wait leaves it before the wait is published: backupBlocked when it fails
   * (the wait stays answerable; a pipeline run journals backup_blocked too).
   */
  private async backUpWait(publish: () => void): Promise<JsonObject | undefined> {
    const gate = this.deps.backup;
    if (!gate) return undefined;
    const waiting = this.out.preview(publish);
    const verdict = await gate.inputRequired(this.contextId, waiting);
    if (verdict.kind !== "blocked") return undefined;
    const { reason, error } = verdict.backupBlocked;
    const session = this.session;
    if (session?.revivable?.()) {
      const data = { reason, error, recoverable: true };
      await journal(session, [{ eventType: "backup_blocked", status: "input_required", data }]);
    }
    return verdict.backupBlocked;
  }

  /** One info line per turn (task, context, outcome, duration, tokens), and the same to the observer. */
  private summarize(): void {
    const { tokens, tokensByModel, failure } = this.mapper;
    const summary: TurnSummary = {
      taskId: this.taskId,
      contextId: this.contextId,
      channel: this.channel,
      outcome: this.detached ? "detached" : this.canceling ? "canceled" : this.mapper.outcome(),
      durationMs: Math.round(performance.now() - this.startedAt),
      inputTokens: tokens.input,
      outputTokens: tokens.output,
      usage: [...tokensByModel.values()],
    };
    const code = failure?.error.code;
    if (summary.outcome === "failed" && typeof code === "string") summary.code = code;
    if (this.span) {
      this.span.setAttributes({
        "iac_code.turn.outcome": summary.outcome,
        "gen_ai.usage.input_tokens": summary.inputTokens,
        "gen_ai.usage.output_tokens": summary.outputTokens,
      });
      if (summary.outcome === "failed") failSpan(this.span, new Error(), summary.code ?? "failed");
      this.span.end();
    }
    const { usage: _byModel, ...line } = summary; // the log line keeps its totals
    this.deps.logger.info(line, "turn ended");
    this.deps.observer?.ended(summary);
  }

  private failUnexpectedly(reason: string): void {
    if (this.signal.aborted) return;
    const errorId = randomUUID();
    this.deps.logger.error({ taskId: this.taskId, errorId }, reason);
    this.mapper.fail("RUNTIME_ERROR", errorId, false);
    this.controller.abort();
  }
}

class CanceledSignal extends Error {}

type Notice = { eventType: string; status: PipelineEnvelope["status"]; data: Record<string, unknown> };

/** Backup notices journaled into the session's pipeline run (none without a run, or on failure). */
async function journal(
  session: AgentSession | undefined,
  notices: Notice[],
): Promise<PipelineEnvelope[] | undefined> {
  try {
    return await session?.journalPipeline?.(notices.map((n) => ({ ...n, scope: "pipeline" as const })));
  } catch {
    return undefined;
  }
}

/**
 * The steps of `iterator`, each one ending early with "aborted" once the
 * signal fires or stop() is called. (A Promise.race of each step against one
 * promise of the abort keeps a reaction per step, and so every event of the
 * turn, alive until the turn ends.)
 */
function abortableSteps<T>(
  iterator: AsyncIterator<T>,
  signal: AbortSignal,
): { next: () => Promise<IteratorResult<T> | "aborted">; stop: () => void } {
  let aborted = signal.aborted;
  let wake: ((value: "aborted") => void) | undefined;
  const stop = () => {
    aborted = true;
    wake?.("aborted");
  };
  signal.addEventListener("abort", stop, { once: true });
  const next = () =>
    aborted
      ? Promise.resolve("aborted" as const)
      : new Promise<IteratorResult<T> | "aborted">((resolve, reject) => {
          wake = resolve;
          iterator.next().then(resolve, reject);
        });
  return { next, stop };
}

/** Waits for a promise, at most ms milliseconds. */
async function boundedWait(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** Provider/credential failures are reported as a sanitised authentication error. */
export function looksLikeAuthError(error: unknown): boolean {
  const e = error as { name?: string; status?: number; code?: string; message?: string } | null;
  if (!e) return false;
  if (e.name === "AuthenticationError" || e.status === 401 || e.code === "missing_credentials") return true;
  return /api[ _-]?key|credential|unauthori[sz]ed|authenticat/i.test(e.message ?? "");
}
