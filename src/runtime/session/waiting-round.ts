// The tool round that waits for human answers (permission prompts and a
// tool's questions). It is written to pending-round.json whenever it gains
// an input, an answer or a started side effect, so a restarted process can
// publish the same inputs again and finish the round; an answer wakes the
// turn that waits for it.
import type { Logger } from "pino";
import { errorMessage } from "../errors.js";
import { resolveConfirmation } from "../permissions/choice-answers.js";
import { checkAnswer } from "../permissions/input-requests.js";
import type { InputAnswer, InputRequest, RuntimeEvent } from "../seam.js";
import type { PendingRound, SessionData } from "./store.js";
import { SessionClosedError } from "./turn-errors.js";

export type InputEntry = PendingRound["inputs"][number];

/** What an aborted wait answers: a permission is denied, anything else cancelled (of its own kind). */
export function cancelAnswer(request: InputRequest): InputAnswer {
  return request.kind === "permission"
    ? { inputId: request.inputId, kind: "permission", decision: "deny" }
    : { inputId: request.inputId, kind: request.kind, cancelled: true };
}

/** What input_received says of a tool question's answer (a confirmation's: its action). */
function decisionOf(request: InputRequest, answer: InputAnswer): string {
  if (answer.kind === "permission") return answer.decision;
  if (answer.cancelled) return "cancelled";
  if (answer.kind === "deployment_confirmation") return resolveConfirmation(request, answer).action;
  if (answer.kind === "cloud_resource_selection") return "selected";
  return "answered";
}

/** Whether the session was closed (shutdown, eviction): read when a wait ends, never waited on. */
export interface SessionLifetime {
  readonly closed: boolean;
}

export class WaitingRound {
  private current: PendingRound | undefined;
  private readonly waiters = new Map<string, (answer: InputAnswer) => void>();

  constructor(
    private readonly store: SessionData,
    private readonly logger: Logger,
    /** Closed when the session closes: a wait then ends the turn instead of answering. */
    private readonly lifetime: SessionLifetime,
    restored: PendingRound | undefined,
  ) {
    this.current = restored;
  }

  /** The round in progress, or the one restored from disk. */
  get round(): PendingRound | undefined {
    return this.current;
  }

  pendingInputs(): InputRequest[] {
    return (this.current?.inputs ?? []).filter((e) => !e.answer).map((e) => e.request);
  }

  /** Records an answer (throws when it does not fit the request); false when nothing waits for it. */
  answer(answer: InputAnswer): boolean {
    const round = this.current;
    const entry = round?.inputs.find((e) => e.request.inputId === answer.inputId);
    if (!round || !entry || entry.answer) return false;
    checkAnswer(entry.request, answer);
    entry.answer = answer;
    this.persist(round).catch(() => undefined);
    this.waiters.get(answer.inputId)?.(answer);
    return true;
  }

  /** The round of an assistant message's calls: the restored one if it is that message's, or a new one. */
  begin(assistantMessageId: string): PendingRound {
    const round: PendingRound =
      this.current?.assistantMessageId === assistantMessageId
        ? this.current
        : { version: 1, assistantMessageId, decisions: {}, inputs: [] };
    this.current = round;
    return round;
  }

  /** The round is over: nothing waits any more and a restart finds nothing to resume. */
  async end(): Promise<void> {
    this.current = undefined;
    await this.store.savePending(undefined);
  }

  /** Writes the round; false (logged) when it could not be written. */
  async persist(round: PendingRound): Promise<boolean> {
    try {
      await this.store.savePending(round);
      return true;
    } catch (error) {
      this.logger.error({ err: errorMessage(error) }, "pending input could not be persisted");
      return false;
    }
  }

  /** The answer of an input; an abort answers deny/cancelled, closing the session rejects. */
  wait(signal: AbortSignal, entry: InputEntry): Promise<InputAnswer> {
    const id = entry.request.inputId;
    return new Promise<InputAnswer>((resolve, reject) => {
      if (entry.answer) return resolve(entry.answer);
      const onAbort = (): void => {
        this.waiters.delete(id);
        if (this.lifetime.closed) reject(new SessionClosedError());
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

  /** The question of a round with this input id, when it was asked before (a restarted tool asks it again). */
  asked(round: PendingRound, inputId: string): InputRequest | undefined {
    return round.inputs.find((e) => e.request.inputId === inputId)?.request;
  }

  /**
   * A running tool's question (ask_user_question, a resource selection, a
   * deployment confirmation): added to the round and persisted (or cancelled
   * when that fails), published unless a restored answer is already there,
   * then awaited. An answer already announced (a tool asking again after a
   * restart replays it) is not announced twice.
   */
  async ask(
    round: PendingRound,
    request: InputRequest,
    signal: AbortSignal,
    publish: (event: RuntimeEvent) => void,
  ): Promise<InputAnswer> {
    let entry = round.inputs.find((e) => e.request.inputId === request.inputId);
    if (!entry) {
      entry = { request };
      round.inputs.push(entry);
      if (!(await this.persist(round))) return cancelAnswer(request);
    }
    if (!entry.answer) publish({ type: "input_required", request: entry.request });
    const answer = await this.wait(signal, entry);
    if (!signal.aborted && !entry.announced) {
      entry.announced = true;
      await this.persist(round);
      publish({
        type: "input_received",
        inputId: entry.request.inputId,
        toolUseId: entry.request.toolUseId,
        kind: entry.request.kind,
        decision: decisionOf(entry.request, answer),
      });
    }
    return answer;
  }
}
