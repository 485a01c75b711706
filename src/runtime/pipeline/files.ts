// A session's pipeline directory (<session>/pipeline/):
//   meta.json       the run: pipeline and version, status, state machine, the
//                   pipeline's own wait (candidate selection), candidates' progress
//   context.json    the versioned context fields
//   events.jsonl    the event journal (journal.ts)
//   snapshot.json   the snapshot reduced from the journal (a cache, snapshot.ts)
//   ledger.json     the cleanup ledger (cleanup.ts)
//   transcripts/    one directory per step attempt (conversation, pending round, tool log)
// meta.json and context.json are replaced atomically at every step boundary and
// wait, so a process killed at any point finds a consistent run to resume.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { ensureDir, writeFileAtomic } from "../fs-util.js";
import type { InputOption, PipelineState } from "../seam.js";
import type { ContextSnapshot } from "./context.js";
import { readJournal } from "./journal.js";
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
  startedAt: string;
  updatedAt: string;
}

export class PipelineFiles {
  constructor(readonly dir: string) {}

  static dirFor(sessionDir: string): string {
    return path.join(sessionDir, "pipeline");
  }

  get journalFile(): string {
    return path.join(this.dir, "events.jsonl");
  }
  get snapshotFile(): string {
    return path.join(this.dir, "snapshot.json");
  }
  get transcriptsDir(): string {
    return path.join(this.dir, "transcripts");
  }

  async ensure(): Promise<void> {
    await ensureDir(this.transcriptsDir);
  }

  private async readJson<T>(name: string): Promise<T | undefined> {
    try {
      return JSON.parse(await readFile(path.join(this.dir, name), "utf8")) as T;
    } catch {
      return undefined;
    }
  }

  async load(): Promise<{ meta: PipelineMeta; context: ContextSnapshot } | undefined> {
    const meta = await this.readJson<PipelineMeta>("meta.json");
    if (!meta || meta.version !== 1) return undefined;
    const context = (await this.readJson<ContextSnapshot>("context.json")) ?? { fields: {} };
    return { meta, context };
  }

  /** Context first, then meta: the meta never names a state the context lacks. */
  async save(meta: PipelineMeta, context: ContextSnapshot): Promise<void> {
    meta.updatedAt = new Date().toISOString();
    await writeFileAtomic(path.join(this.dir, "context.json"), JSON.stringify(context), { mode: 0o600 });
    await writeFileAtomic(path.join(this.dir, "meta.json"), JSON.stringify(meta), { mode: 0o600 });
  }

  /** The saved snapshot brought up to date with the journal tail (only the tail is read). */
  async snapshot(): Promise<PipelineSnapshot> {
    const saved = (await this.readJson<PipelineSnapshot>("snapshot.json")) ?? emptySnapshot();
    const { events } = await readJournal(this.journalFile, saved.lastSequence);
    for (const event of events) reduce(saved, event);
    return saved;
  }

  /** What a reconnecting client needs: the snapshot and this run's events after a sequence. */
  async state(afterSequence?: number): Promise<PipelineState | undefined> {
    const snapshot = await this.snapshot();
    if (snapshot.runNumber === 0) return undefined;
    const after = Math.max(afterSequence ?? snapshot.lastSequence, snapshot.firstSequence - 1);
    const { events } = await readJournal(this.journalFile, after);
    return { snapshot: snapshot as unknown as Record<string, unknown>, events };
  }
}
