// A session's pipeline in the runtime store (part "pipeline" of the session):
//   doc meta        the run: pipeline and version, status, state machine, the
//                   pipeline's own wait (candidate selection), candidates' progress
//   doc context     the versioned context fields
//   log events      the event journal (one envelope per row, numbered by sequence)
//   doc snapshot    the snapshot reduced from the journal (a cache, snapshot.ts)
//   doc ledger      the cleanup ledger (ledger.ts)
// and one part per step attempt, transcript/<attempt key> (its conversation,
// waiting round and tool log). meta and context are committed together at
// every step boundary and wait, so a process killed at any point finds a
// consistent run to resume.
import type { InputOption, PipelineEnvelope, PipelineState } from "../seam.js";
import {
  parseJsonDoc,
  partOf,
  sessionScope,
  type RuntimeStore,
  type StoreLog,
  type StoreScope,
} from "../store/runtime-store.js";
import type { ContextSnapshot } from "./context.js";
import type { EvaluatedCandidate } from "./selection.js";
import { emptySnapshot, reduce, type PipelineSnapshot } from "./snapshot.js";
import type { StateMachineSnapshot } from "./state-machine.js";

export type RunStatus = "running" | "waiting_input" | "completed" | "early_exit" | "failed" | "canceled";

/** The pipeline's own wait: the candidate selection it presented. */
export interface SelectionWait {
  inputId: string;
  toolUseId: string;
  prompt: string;
  options: InputOption[];
  /** Shown above the prompt after an answer that named no option. */
  validationError?: string;
  /** How many times it was asked (each time with a new input id). */
  asked?: number;
}

export interface CandidateProgress {
  attempt: number;
  stateMachine: StateMachineSnapshot;
  context: ContextSnapshot;
  result?: EvaluatedCandidate;
  /** An interrupt restarted the candidate: its new attempt starts with this feedback. */
  restart?: { reason: string };
}

export interface PipelineMeta {
  version: 1;
  pipelineName: string;
  fingerprint: string;
  runNumber: number;
  taskId: string;
  status: RunStatus;
  /** The run ended and the context went back to normal chat. */
  handedOff: boolean;
  presentation: "standard" | "rich";
  /** Language of the texts the run shows (selection prompt...). */
  language: string;
  stateMachine: StateMachineSnapshot;
  /** User feedback (a rollback reason) for the next attempt of the current step. */
  feedback?: string;
  selection?: SelectionWait;
  /** Progress of the candidates of the current parallel step, by index. */
  candidates?: Record<string, CandidateProgress>;
  /** Demo mode: the scenario the first message's tag chose (demo-scenarios.ts). */
  scenario?: string;
  /** How the run ended, as the user reads it (outcome, what is left and how to delete it). */
  outcomeReason?: string;
  startedAt: string;
  updatedAt: string;
}

/** Journal rows as envelopes; a row that cannot be read is skipped (the numbering around it stays valid). */
export function envelopesOf(rows: readonly string[]): PipelineEnvelope[] {
  const out: PipelineEnvelope[] = [];
  for (const row of rows) {
    const envelope = parseJsonDoc<PipelineEnvelope>(row);
    if (envelope) out.push(envelope);
  }
  return out;
}

export class PipelineFiles {
  private constructor(
    readonly store: RuntimeStore,
    readonly scope: StoreScope,
    /** The event journal: envelope n is row n. */
    readonly journal: StoreLog,
  ) {}

  /** The pipeline part of a session (reads need no context: "" when it is not known). */
  static async open(
    store: RuntimeStore,
    sessionId: string,
    contextId = "",
    fresh = false,
  ): Promise<PipelineFiles> {
    const scope = partOf(sessionScope(sessionId, contextId), "pipeline");
    return new PipelineFiles(store, scope, await store.log(scope, "events", { fresh }));
  }

  /** The part of one step attempt's transcript. */
  transcriptScope(attemptKey: string): StoreScope {
    return partOf(this.scope, `transcript/${attemptKey}`);
  }

  async load(): Promise<{ meta: PipelineMeta; context: ContextSnapshot } | undefined> {
    const meta = parseJsonDoc<PipelineMeta>(await this.store.get(this.scope, "meta"));
    if (!meta || meta.version !== 1) return undefined;
    const context = parseJsonDoc<ContextSnapshot>(await this.store.get(this.scope, "context")) ?? {
      fields: {},
    };
    return { meta, context };
  }

  /** Meta and context, in one commit: the meta never names a state the context lacks. */
  save(meta: PipelineMeta, context: ContextSnapshot): Promise<void> {
    meta.updatedAt = new Date().toISOString();
    this.store.put(this.scope, "context", JSON.stringify(context));
    this.store.put(this.scope, "meta", JSON.stringify(meta));
    return this.store.commit();
  }

  /** The saved snapshot brought up to date with the journal after it (only that tail is read). */
  async snapshot(): Promise<PipelineSnapshot> {
    const saved =
      parseJsonDoc<PipelineSnapshot>(await this.store.get(this.scope, "snapshot")) ?? emptySnapshot();
    for (const event of envelopesOf(await this.journal.read(saved.lastSequence))) reduce(saved, event);
    return saved;
  }

  /** Saves the snapshot (a cache of the journal's reduction, at checkpoints). */
  saveSnapshot(snapshot: PipelineSnapshot): Promise<void> {
    this.store.put(this.scope, "snapshot", JSON.stringify(snapshot));
    return this.store.commit();
  }

  /** The ledger document as stored (ledger.ts reads it). */
  loadLedgerText(): Promise<string | undefined> {
    return this.store.get(this.scope, "ledger");
  }

  /** Keeps a ledger document that could not be read, before a new one replaces it. */
  keepUnreadableLedger(text: string): void {
    this.store.put(this.scope, "ledger-unreadable", text);
  }

  saveLedger(ledger: unknown): Promise<void> {
    this.store.put(this.scope, "ledger", JSON.stringify(ledger));
    return this.store.commit();
  }

  /** What a reconnecting client needs: the snapshot and this run's events after a sequence. */
  async state(afterSequence?: number): Promise<PipelineState | undefined> {
    const snapshot = await this.snapshot();
    if (snapshot.runNumber === 0) return undefined;
    const after = Math.max(afterSequence ?? snapshot.lastSequence, snapshot.firstSequence - 1);
    const events = envelopesOf(await this.journal.read(after));
    return { snapshot: snapshot as unknown as Record<string, unknown>, events };
  }
}
