// The pipeline side of a session. A turn goes to the pipeline when it asks
// for one (runMode pipeline, or the server's default mode), when the
// context's run has not ended (every message is then pipeline input), or when
// it is a cleanupOnly request. After the run ends the context is normal chat
// again, with the handoff summary in its conversation. The host also lists
// the inputs the pipeline waits for (after a restart, from disk) and routes
// answers to them.
import type { Language } from "../../i18n/index.js";
import { simulatedCloud, SimulatedRos } from "../cloud/simulated-ros.js";
import { textMessage } from "../messages.js";
import { Channel } from "../loop/channel.js";
import type {
  InputAnswer,
  InputRequest,
  PipelineEnvelope,
  RuntimeEvent,
  TurnInput,
  TurnOverrides,
} from "../seam.js";
import type { SessionContext } from "../session/session-context.js";
import { openSessionData } from "../session/store.js";
import { startTurn, toolSet, turnLanguage, type Turn } from "../session/turn.js";
import { SessionClosedError } from "../session/turn-errors.js";
import { turnTools } from "../tools/registry.js";
import type { SessionDeps } from "../session/deps.js";
import { runCleanup } from "./cleanup.js";
import { demoScenarioOf } from "./demo-scenarios.js";
import { CleanupLedger, cleanupSummary, type LedgerEntry } from "./ledger.js";
import { PipelineContext } from "./context.js";
import { PipelineEmitter, type EnvelopeSpec } from "./emitter.js";
import { PipelineFiles, type PipelineMeta } from "./files.js";
import { InputGate, InputRegistry } from "./inputs.js";
import { StepControl } from "./interrupts.js";
import { merge } from "./merge.js";
import { bundledPipeline, type LoadedPipeline } from "./loader.js";
import { attemptKey, RunEnv } from "./run-env.js";
import { PipelineRunner, type Entry } from "./runner.js";
import { selectionRequest } from "./selection.js";
import { StateMachine } from "./state-machine.js";

/** rich-v1 (the A2A value) and rich (the AG-UI value) ask for rich candidate options. */
export function isRichPresentation(value: string | undefined): boolean {
  const v = value?.trim().toLowerCase();
  return v === "rich-v1" || v === "rich";
}

/** The pipeline a request runs: its own pipelineName, else the server default. */
export function requestedPipeline(overrides: TurnOverrides, defaultName: string): string {
  return overrides.pipelineName ?? defaultName;
}

const SIMULATED_CLOUD_NOTE =
  "Demo mode: the ROS tools call iac-code's simulated ROS endpoint. Nothing is created in Alibaba Cloud; say so when you report a deployment.";

/**
 * The simulated ROS endpoint of each runtime (its sessions share it), so a
 * later turn finds the stacks an earlier one created, e.g. to delete them.
 */
const simulatedEndpoints = new WeakMap<SessionDeps, SimulatedRos>();

function simulatedEndpoint(deps: SessionDeps): SimulatedRos {
  let ros = simulatedEndpoints.get(deps);
  if (!ros) {
    ros = new SimulatedRos();
    simulatedEndpoints.set(deps, ros);
  }
  return ros;
}

export class PipelineHost {
  private registry: InputRegistry | undefined;
  private runner: PipelineRunner | undefined;
  private restored: InputRequest[] = [];
  /** The running turn's emitter and event outbox (journal() numbers its notices there). */
  private live: { emitter: PipelineEmitter; push(event: RuntimeEvent): void } | undefined;

  private constructor(
    private readonly session: SessionContext,
    private readonly contextId: string,
    private readonly files: PipelineFiles,
    private meta: PipelineMeta | undefined,
  ) {}

  /** `fresh`: a session just created, with no run to load. */
  static async open(session: SessionContext, contextId: string, fresh = false): Promise<PipelineHost> {
    const files = await PipelineFiles.open(session.deps.store, session.sessionId, contextId, fresh);
    const loaded = fresh ? undefined : await files.load();
    const host = new PipelineHost(session, contextId, files, loaded?.meta);
    if (
      loaded &&
      host.active &&
      bundledPipeline(loaded.meta.pipelineName)?.fingerprint !== loaded.meta.fingerprint
    ) {
      // Another version of the pipeline: its saved run cannot be continued safely.
      session.logger.warn(
        { pipeline: loaded.meta.pipelineName },
        "saved pipeline run of another version not resumed",
      );
      Object.assign(loaded.meta, { status: "canceled", handedOff: true });
      await files.save(loaded.meta, loaded.context);
    }
    if (host.active) host.restored = await host.inputsOnDisk();
    return host;
  }

  private get defaults(): { mode: "normal" | "pipeline"; pipelineName: string } {
    return this.session.deps.pipelines;
  }

  /** A run that has not ended owns the context. */
  get active(): boolean {
    const meta = this.meta;
    return !!meta && !meta.handedOff && (meta.status === "running" || meta.status === "waiting_input");
  }

  wants(input: TurnInput): boolean {
    const mode = input.overrides.runMode ?? this.defaults.mode;
    return this.active || input.overrides.cleanupOnly === true || mode === "pipeline";
  }

  pendingInputs(): InputRequest[] {
    return this.registry ? this.registry.pending() : this.restored;
  }

  answer(answer: InputAnswer): boolean {
    return this.registry?.answer(answer) ?? false;
  }

  /**
   * Envelopes the server adds to the latest run's journal (backup notices);
   * undefined without a run. While a run goes on they join its events (the
   * turn publishes them, in sequence order): [] is returned.
   */
  async journal(specs: EnvelopeSpec[]): Promise<PipelineEnvelope[] | undefined> {
    const meta = this.meta;
    if (!meta) return undefined;
    if (this.live) {
      this.live.push(await this.live.emitter.event(...specs));
      return [];
    }
    const emitter = await this.emitterFor({ taskId: meta.taskId, pipelineName: meta.pipelineName });
    const envelopes = await emitter.envelopes(...specs);
    await emitter.checkpoint();
    return envelopes;
  }

  /** A message while the run goes on (see PipelineRunner.interject); false when no run goes on. */
  interject(input: TurnInput): boolean {
    return this.runner?.interject(input.text) ?? false;
  }

  /** The inputs a stopped run was waiting for: its selection, or the open tool rounds of its running steps. */
  private async inputsOnDisk(): Promise<InputRequest[]> {
    const meta = this.meta as PipelineMeta;
    const lang = (meta.language ?? "en") as Language;
    if (meta.selection) return [selectionRequest({ ...meta.selection, lang })];
    const keys: string[] = [];
    for (const [stepId, status] of Object.entries(meta.stateMachine.stepStatuses)) {
      if (status === "running")
        keys.push(attemptKey(meta.runNumber, stepId, meta.stateMachine.attempts[stepId]));
    }
    for (const [index, progress] of Object.entries(meta.candidates ?? {})) {
      if (progress.result) continue;
      for (const [stepId, status] of Object.entries(progress.stateMachine.stepStatuses)) {
        if (status === "running")
          keys.push(
            attemptKey(meta.runNumber, stepId, progress.stateMachine.attempts[stepId], Number(index)),
          );
      }
    }
    const inputs: InputRequest[] = [];
    for (const key of keys) {
      const transcript = await openSessionData(
        this.session.deps.store,
        this.files.transcriptScope(key),
        this.session.logger,
      );
      const round = await transcript.loadPending();
      if (round) inputs.push(...round.inputs.filter((e) => !e.answer).map((e) => e.request));
    }
    return inputs;
  }

  /** A turn routed to the pipeline (wants() said yes). */
  async *turn(input: TurnInput, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    if (input.overrides.cleanupOnly === true) {
      yield* this.cleanupOnly(input, signal);
      return;
    }
    if (this.active) {
      yield* this.drive(input.overrides, input.taskId, { kind: "continue", text: input.text }, signal);
      return;
    }
    yield* this.drive(input.overrides, input.taskId, { kind: "start", text: input.text }, signal);
  }

  /** Continues a run a restart interrupted (its waits are published again first). */
  async *resume(overrides: TurnOverrides, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    if (!this.active) return;
    yield* this.drive(overrides, undefined, { kind: "resume" }, signal);
  }

  private pipelineOf(overrides: TurnOverrides): LoadedPipeline {
    const name = this.active
      ? (this.meta as PipelineMeta).pipelineName
      : requestedPipeline(overrides, this.defaults.pipelineName);
    const pipeline = bundledPipeline(name);
    // The surfaces check names before a task exists (AgentRuntime.checkTurn); this is the last guard.
    if (!pipeline) throw new Error(`unknown pipeline ${name}`);
    return pipeline;
  }

  /** The turn's tools and cloud: demo mode runs pipelines against the simulated ROS endpoint. */
  private async baseTurn(overrides: TurnOverrides, signal: AbortSignal): Promise<Turn> {
    const { deps, workspace, logger } = this.session;
    const turn = await startTurn(deps, workspace, logger, overrides, signal, "pipeline");
    const demo = deps.config.demo && overrides.model === undefined && overrides.apiKey === undefined;
    if (turn.cloud || !demo) return turn;
    // The MCP servers' tools stay (the turn listed them); the cloud tools join them.
    const tools = [...turnTools(true, turn.skills), ...(turn.mcp ? (deps.mcp?.tools() ?? []) : [])];
    return {
      ...turn,
      cloud: simulatedCloud(simulatedEndpoint(deps)),
      ...toolSet(tools),
      system: `${turn.system}\n\n${SIMULATED_CLOUD_NOTE}`,
    };
  }

  private async emitterFor(identity: { taskId: string; pipelineName: string }): Promise<PipelineEmitter> {
    const snapshot = await this.files.snapshot();
    return new PipelineEmitter(this.files, snapshot, {
      pipelineRunId: this.contextId,
      taskId: identity.taskId,
      contextId: this.contextId,
      pipelineName: identity.pipelineName,
      iacCodeSessionId: this.session.sessionId,
    });
  }

  private async *drive(
    overrides: TurnOverrides,
    taskId: string | undefined,
    entry: Entry,
    signal: AbortSignal,
  ): AsyncGenerator<RuntimeEvent> {
    const pipeline = this.pipelineOf(overrides);
    const lang = turnLanguage(overrides);
    const loaded = this.active ? await this.files.load() : undefined;
    const now = new Date().toISOString();
    const meta: PipelineMeta = loaded?.meta ?? {
      version: 1,
      pipelineName: pipeline.name,
      fingerprint: pipeline.fingerprint,
      runNumber: (this.meta?.runNumber ?? 0) + 1,
      taskId: taskId ?? "",
      status: "running",
      handedOff: false,
      presentation: isRichPresentation(overrides.candidatePresentation) ? "rich" : "standard",
      language: lang,
      stateMachine: new StateMachine(pipeline.steps, pipeline.def.max_rollbacks ?? 3).snapshot(),
      startedAt: now,
      updatedAt: now,
    };
    if (taskId) meta.taskId = taskId;
    this.meta = meta;
    const emitter = await this.emitterFor({ taskId: meta.taskId, pipelineName: pipeline.name });
    const registry = new InputRegistry();
    this.registry = registry;
    this.restored = [];
    const baseTurn = await this.baseTurn(overrides, signal);
    if (entry.kind === "start" && baseTurn.cloud?.credentials.source === "simulated") {
      // Demo mode: a tag in the first message plays a scenario (demo-scenarios.ts).
      const scenario = demoScenarioOf(entry.text);
      if (scenario) meta.scenario = scenario;
    }
    const env = new RunEnv(
      {
        session: this.session,
        contextId: this.contextId,
        baseTurn,
        emitter,
        registry,
        gate: new InputGate(),
        transcripts: (key) => this.files.transcriptScope(key),
        pipelineName: pipeline.name,
        emitStackEvents: pipeline.def.emit_stack_events !== false,
        control: new StepControl(),
      },
      pipeline,
      this.files,
      await CleanupLedger.open(this.files),
      meta,
      new PipelineContext(pipeline.def.context_dependencies ?? {}, loaded?.context),
      new StateMachine(pipeline.steps, pipeline.def.max_rollbacks ?? 3, 10, meta.stateMachine),
      lang,
    );
    const runner = new PipelineRunner(env, signal);
    this.runner = runner;
    // Interruptions are handled beside the step loop; their events join the turn's.
    const outbox = new Channel<RuntimeEvent>();
    runner.outbox = (event) => outbox.push(event);
    const live = { emitter, push: (event: RuntimeEvent) => outbox.push(event) };
    this.live = live;
    let ended = (): void => undefined;
    const done = new Promise<void>((resolve) => (ended = resolve));
    const main = (async function* () {
      try {
        yield* runner.turn(entry);
      } finally {
        ended();
      }
    })();
    try {
      yield* merge([main, outbox.drain(done)], { firstSequence: emitter.lastSequence + 1 });
    } catch (error) {
      // Shutdown while waiting: the run stays on disk for the next process.
      if (!(error instanceof SessionClosedError)) throw error;
    } finally {
      if (this.live === live) this.live = undefined;
      if (this.runner === runner) this.runner = undefined;
      if (this.registry === registry) this.registry = undefined;
      if (!this.active && !signal.aborted) await this.recordHandoff(runner.summary(meta.status));
      // A closed session keeps its waits on disk for the next process.
      if (this.active) this.restored = await this.inputsOnDisk();
      await emitter.close();
    }
  }

  /** The normal chat that follows sees what the pipeline decided. */
  private async recordHandoff(summary: string): Promise<void> {
    const { conversation } = this.session;
    const at = new Date().toISOString();
    await conversation.append(textMessage("user", `[pipeline handoff]\n${summary}`, at));
    await conversation.append(textMessage("assistant", summary, at));
  }

  /** cleanupOnly: deletes exactly the stacks the ledger holds for cleanup, nothing else. */
  private async *cleanupOnly(input: TurnInput, signal: AbortSignal): AsyncGenerator<RuntimeEvent> {
    const ledger = await CleanupLedger.open(this.files);
    const entries = ledger.pending();
    const emitter = await this.emitterFor({
      taskId: input.taskId ?? "",
      pipelineName: this.meta?.pipelineName ?? this.defaults.pipelineName,
    });
    const baseTurn = entries.length ? await this.baseTurn(input.overrides, signal) : undefined;
    let failed: LedgerEntry[] = [];
    // A ledger that cannot be read: say so (its stacks are no longer known), then clean up what is known.
    const lost = ledger.takeWarnings();
    try {
      if (lost.length) yield await emitter.event(...lost);
      if (entries.length) {
        failed = yield* runCleanup({
          ledger,
          entries,
          cloud: baseTurn?.cloud,
          workspace: this.session.workspace,
          emitter,
          language: turnLanguage(input.overrides),
          signal,
        });
      }
    } finally {
      await emitter.close();
    }
    const status =
      lost.length > 0 && entries.length === 0
        ? "unavailable"
        : entries.length === 0
          ? "completed"
          : !baseTurn?.cloud
            ? "unavailable"
            : failed.length
              ? "failed"
              : "completed";
    yield { type: "pipeline", envelopes: [], cleanupOnly: cleanupSummary(entries, status) };
  }
}
