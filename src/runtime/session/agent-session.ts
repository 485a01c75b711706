// One agent session: the conversation of one A2A context in one workspace,
// behind the seam's AgentSession. It opens or restores the session, lets one
// turn run at a time, and hands the work to the turn loop (turn-loop.ts),
// whose tool rounds may wait for human answers on a round persisted first
// (waiting-round.ts), so a restarted process can re-publish the inputs and
// resumeTurn() can finish the round.
import type { Logger } from "pino";
import { t } from "../../i18n/index.js";
import { abortError } from "../abort.js";
import { errorMessage } from "../errors.js";
import { newMessageId } from "../ids.js";
import type { ContentBlock, Message } from "../messages.js";
import { AuditLog } from "../permissions/audit.js";
import type {
  AgentSession,
  InputAnswer,
  InputRequest,
  PipelineEnvelope,
  RuntimeEvent,
  TurnInput,
  TurnOverrides,
} from "../seam.js";
import { PipelineHost } from "../pipeline/host.js";
import { Workspace } from "../tools/workspace.js";
import type { SessionDeps } from "./deps.js";
import type { SessionContext } from "./session-context.js";
import { sessionScope } from "../store/runtime-store.js";
import { openSessionData } from "./store.js";
import { runToolRound, supersedeRound } from "./tool-round.js";
import { startTurn, turnLanguage } from "./turn.js";
import { guardTurn, turnErrorEvent } from "./turn-errors.js";
import { restoreTranscript, transcriptContext } from "./transcript-restore.js";
import { runAgentLoop } from "./turn-loop.js";

/** The abort reason of a closed session (an AbortError, as abort() would give, made once). */
const SESSION_CLOSED = abortError();

export class RuntimeSession implements AgentSession {
  private busy = false;
  /** The pipeline side: runs that own the context, their waits, cleanup-only turns. */
  private pipeline!: PipelineHost;
  private onClose?: () => void;
  /** The running turn's abort, which close() pulls too. */
  private turnAbort?: AbortController;
  /** The last turn's writes being committed (hosted: the next turn starts once they are durable). */
  private settling: Promise<void> = Promise.resolve();

  private constructor(
    readonly sessionId: string,
    readonly contextId: string,
    private readonly parts: SessionContext,
    private readonly lifetime: { closed: boolean },
  ) {}

  get cwd(): string {
    return this.parts.workspace.cwd;
  }

  private get logger(): Logger {
    return this.parts.logger;
  }

  /**
   * Opens a new session, or restores a saved one (conversation repaired,
   * pending round kept). `fresh`: the session id was just made, so the store
   * holds nothing of it (nothing is read).
   */
  static async open(
    deps: SessionDeps,
    args: { sessionId: string; contextId: string; cwd: string; fresh?: boolean; onClose?: () => void },
  ): Promise<RuntimeSession> {
    const { sessionId } = args;
    const workspace = await Workspace.open(args.cwd);
    const scope = sessionScope(sessionId, args.contextId);
    const logger = deps.logger.child({ sessionId });
    const fresh = args.fresh === true;
    const [store, auditLog] = await Promise.all([
      openSessionData(deps.store, scope, deps.logger, fresh),
      deps.store.log(scope, "permission-audit", { fresh }),
    ]);
    const audit = new AuditLog(deps.store, auditLog, logger);
    const ids = { sessionId, contextId: args.contextId, cwd: workspace.cwd };
    const transcript = await restoreTranscript(store, deps.logger, ids, fresh);
    const { meta } = transcript;
    const rules = meta ? await store.loadSessionRules() : [];
    const lifetime = { closed: false };
    const base = { sessionId, deps, logger, workspace, store, audit, lifetime };
    const parts = transcriptContext(base, transcript, { store, rules });
    const contextId = meta?.contextId ?? args.contextId;
    const session = new RuntimeSession(sessionId, contextId, parts, lifetime);
    session.onClose = args.onClose;
    if (meta) await parts.conversation.repair(transcript.round?.assistantMessageId, logger);
    session.pipeline = await PipelineHost.open(parts, contextId, fresh);
    return session;
  }

  // ---------------------------------------------------------------- seam API

  pendingInputs(): InputRequest[] {
    return [...this.parts.rounds.pendingInputs(), ...this.pipeline.pendingInputs()];
  }

  revivable(): boolean {
    return this.pipeline.active;
  }

  answerInput(answer: InputAnswer): boolean {
    if (this.pipeline.pendingInputs().some((p) => p.inputId === answer.inputId))
      return this.pipeline.answer(answer);
    return this.parts.rounds.answer(answer);
  }

  interject(input: TurnInput): boolean {
    return this.pipeline.interject(input);
  }

  journalPipeline(
    specs: Array<Pick<PipelineEnvelope, "eventType" | "scope" | "status" | "data">>,
  ): Promise<PipelineEnvelope[] | undefined> {
    return this.pipeline.journal(specs);
  }

  async *runTurn(input: TurnInput, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    const pipeline = this.pipeline.wants(input);
    yield* this.exclusively(input.overrides, signal, (turnSignal) =>
      pipeline ? this.pipeline.turn(input, turnSignal) : this.userTurn(input, turnSignal),
    );
  }

  async *resumeTurn(overrides: TurnOverrides, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    if (this.pipeline.active) {
      yield* this.exclusively(overrides, signal, (turnSignal) => this.pipeline.resume(overrides, turnSignal));
      return;
    }
    if (!this.parts.rounds.round) return;
    yield* this.exclusively(overrides, signal, (turnSignal) => this.resumedTurn(overrides, turnSignal));
  }

  async close(): Promise<void> {
    this.lifetime.closed = true;
    this.onClose?.();
    this.turnAbort?.abort(SESSION_CLOSED);
    await this.parts.store.flush();
  }

  /** The conversation as the model sees it (tests and diagnostics). */
  conversation(): readonly Message[] {
    return this.parts.conversation.messages;
  }

  // ------------------------------------------------------------------ turns

  /**
   * Runs `body` as the session's only turn, with a signal that also aborts
   * when the session closes. What it recorded (conversation, usage) is
   * durable when the turn ends (standalone) or before the next turn starts,
   * committed with the task state it ends in (hosted by a server).
   */
  private async *exclusively(
    overrides: TurnOverrides,
    signal: AbortSignal,
    body: (turnSignal: AbortSignal) => AsyncGenerator<RuntimeEvent>,
  ): AsyncGenerator<RuntimeEvent> {
    const lang = turnLanguage(overrides);
    if (this.busy || this.lifetime.closed) {
      yield { type: "error", kind: "fatal", message: t(lang, "runtime.error.busy") };
      return;
    }
    this.busy = true;
    await this.settling;
    // The caller's signal or the session's close aborts the turn.
    const turnAbort = new AbortController();
    const onAbort = () => turnAbort.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    this.turnAbort = turnAbort;
    try {
      yield* body(turnAbort.signal);
    } catch (error) {
      yield turnErrorEvent(this.logger, lang, error, []);
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.turnAbort = undefined;
      // What the turn wrote is durable before the next one starts; a store that cannot commit
      // now keeps it staged (the turn already failed on it, or fails its next write). A hosting
      // server commits it with the task state the turn ends in, staged once the turn has ended:
      // waiting here would write that task twice (its working state, then its final one).
      this.settling = this.parts.store.flush().catch((error: unknown) => {
        this.logger.error({ err: errorMessage(error) }, "session state not committed");
      });
      if (!this.parts.deps.hostCommitsTurns) await this.settling;
      this.busy = false;
    }
  }

  /** A user message: a round still waiting for answers is superseded, then the loop runs. */
  private async *userTurn(input: TurnInput, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    const session = this.parts;
    if (session.rounds.round) await supersedeRound(session);
    const turn = await startTurn(session.deps, session.workspace, this.logger, input.overrides, signal);
    const content: ContentBlock[] = [];
    if (input.text.length > 0) content.push({ type: "text", text: input.text });
    for (const image of input.images)
      content.push({ type: "image", mediaType: image.mediaType, data: image.data });
    await session.conversation.append({
      id: newMessageId(),
      role: "user",
      content,
      createdAt: new Date().toISOString(),
    });
    yield* guardTurn(this.logger, turn, runAgentLoop(session, turn));
  }

  /** The restored round: its inputs are published again, then the round and the loop finish. */
  private async *resumedTurn(overrides: TurnOverrides, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    const session = this.parts;
    const turn = await startTurn(session.deps, session.workspace, this.logger, overrides, signal);
    const round = session.rounds.round;
    const assistant = round && session.conversation.find(round.assistantMessageId);
    if (!assistant) {
      await session.rounds.end();
      return;
    }
    yield* guardTurn(
      this.logger,
      turn,
      (async function* () {
        const completed = yield* runToolRound(session, turn, assistant);
        if (completed && !turn.signal.aborted) yield* runAgentLoop(session, turn);
      })(),
    );
  }
}
