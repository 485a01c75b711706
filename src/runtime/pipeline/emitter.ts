// Turns pipeline events into numbered envelopes (a2a/pipeline-envelope, the
// §4.5 shape): identity, eventId, a sequence that only grows, createdAt.
// Each batch is journaled (committed to the runtime store) before it is handed
// out, folded into the snapshot, and the snapshot is saved at checkpoints
// (waits and step boundaries).
import { randomBytes } from "node:crypto";
import { PIPELINE_EVENTS_EXTENSION, type PipelineEnvelope, type RuntimeEvent } from "../seam.js";
import type { PipelineFiles } from "./files.js";
import { reduce, type PipelineSnapshot } from "./snapshot.js";

export type EnvelopeSpec = Pick<PipelineEnvelope, "eventType" | "scope" | "data"> &
  Partial<Pick<PipelineEnvelope, "status" | "step" | "candidate" | "candidateStep" | "input" | "artifact">>;

export type PipelineIdentity = Pick<
  PipelineEnvelope,
  "pipelineRunId" | "taskId" | "contextId" | "pipelineName" | "iacCodeSessionId"
>;

export type PipelineEvent = Extract<RuntimeEvent, { type: "pipeline" }>;

export class PipelineEmitter {
  constructor(
    private readonly files: PipelineFiles,
    readonly snapshot: PipelineSnapshot,
    public identity: PipelineIdentity,
  ) {}

  /** evt-<16 random hex of this emitter><8 hex counter>: unique without a random draw per event. */
  private readonly idPrefix = randomBytes(8).toString("hex");
  private ids = 0;

  private nextEventId(): string {
    return `evt-${this.idPrefix}${(this.ids++ % 0x100000000).toString(16).padStart(8, "0")}`;
  }

  /** Resolves once everything journaled is durable. */
  close(): Promise<void> {
    return this.files.store.commit();
  }

  /** The sequence of the last envelope numbered so far. */
  get lastSequence(): number {
    return this.files.journal.nextSeq - 1;
  }

  /** Numbers, journals and folds a batch; the envelopes are ready to publish once it resolves. */
  async envelopes(...specs: EnvelopeSpec[]): Promise<PipelineEnvelope[]> {
    // Serialised once: the journal row, and parsed back, the published envelope
    // (plain JSON: no undefined, no NaN), so both are exactly the same. Numbered
    // and staged in one synchronous step: the journal is numbered in append order.
    const first = this.files.journal.nextSeq;
    const lines = specs.map((spec, i) =>
      JSON.stringify({
        schemaVersion: "1.0",
        extensionUri: PIPELINE_EVENTS_EXTENSION,
        eventId: this.nextEventId(),
        sequence: first + i,
        createdAt: new Date().toISOString(),
        ...this.identity,
        status: spec.status ?? "working",
        eventType: spec.eventType,
        scope: spec.scope,
        data: spec.data,
        ...(spec.step ? { step: spec.step } : {}),
        ...(spec.candidate ? { candidate: spec.candidate } : {}),
        ...(spec.candidateStep ? { candidateStep: spec.candidateStep } : {}),
        ...(spec.input ? { input: spec.input } : {}),
        ...(spec.artifact ? { artifact: spec.artifact } : {}),
      } satisfies PipelineEnvelope),
    );
    const envelopes = lines.map((line) => JSON.parse(line) as PipelineEnvelope);
    this.files.journal.append(lines);
    await this.files.store.commit();
    for (const envelope of envelopes) reduce(this.snapshot, envelope);
    return envelopes;
  }

  /** A batch as the runtime event that publishes it. */
  async event(...specs: EnvelopeSpec[]): Promise<PipelineEvent> {
    return { type: "pipeline", envelopes: await this.envelopes(...specs) };
  }

  /** Saves the snapshot (in the same commit as, or after, the journal it was reduced from). */
  checkpoint(): Promise<void> {
    return this.files.saveSnapshot(this.snapshot);
  }
}
