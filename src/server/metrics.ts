// Prometheus metrics of one server (A2A or AG-UI), served as text on GET
// /metrics. Each server has its own registry (two servers in one process do
// not mix their numbers). Labels take values from small fixed sets (method
// names, bindings, outcome codes of the error catalogues), never ids, so the
// number of series stays bounded; the hot path only bumps counters. The one
// label a caller names, the telemetry `channel` of turns and tokens, keeps the
// first MAX_CHANNELS values it sees and counts any later one as "other".
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { ModelTokens } from "./model-tokens.js";

/** Seconds: from 10 ms to 10 min (turns run from a scripted instant to long tool chains). */
const TURN_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** Seconds until the first event a client sees after its request. */
const FIRST_EVENT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Distinct `channel` label values a registry keeps before it counts new ones as "other". */
export const MAX_CHANNELS = 32;

/** The telemetry channel when none is bound or configured. */
export const UNKNOWN_CHANNEL = "unknown";

/** IAC_CODE_CHANNEL trimmed and bounded (128 characters), else "unknown". */
export function defaultChannel(env: NodeJS.ProcessEnv = process.env): string {
  return (env.IAC_CODE_CHANNEL ?? "").trim().slice(0, 128) || UNKNOWN_CHANNEL;
}

export interface MetricsOptions {
  /** "a2a" or "agui": the value of the `server` label on every series. */
  server: string;
  /** Counts the interrupts waiting for an answer, read at scrape time. */
  interruptsWaiting?: () => number;
  /** The AG-UI adapter's managed A2A child (state and respawns), read at scrape time; none: no series. */
  managedA2a?: () => { state: string; restarts: number };
  /** Push jobs waiting for delivery, read at scrape time; none: no series (push off, or the AG-UI server). */
  pushQueueDepth?: () => Promise<number>;
  /** State store transactions written so far, read at scrape time; none: no series (the AG-UI server). */
  stateCommits?: () => number;
  /** Process metrics (CPU, memory, event loop); off in tests that build many servers. */
  processMetrics?: boolean;
}

/** A counter whose count another part keeps (the store, the supervisor), read at scrape time. */
function mirroredCounter(registry: Registry, name: string, help: string, count: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(count());
    },
  });
}

export class ServerMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<"method" | "binding" | "outcome">;
  readonly turnSeconds: Histogram<"outcome" | "channel">;
  readonly firstEventSeconds: Histogram<"binding">;
  readonly openStreams: Gauge<"binding">;
  readonly tokens: Counter<"kind" | "provider" | "model" | "channel">;
  readonly runsStarted: Counter<"kind">;
  readonly runsFinished: Counter<"outcome">;
  readonly runsErrored: Counter<"code">;

  constructor(options: MetricsOptions) {
    this.registry.setDefaultLabels({ server: options.server });
    const registers = [this.registry];
    this.requests = new Counter({
      name: "iac_code_requests_total",
      help: "Requests by method, binding and outcome (ok, or the error code / reason).",
      labelNames: ["method", "binding", "outcome"],
      registers,
    });
    this.turnSeconds = new Histogram({
      name: "iac_code_turn_duration_seconds",
      help: "Duration of a turn (A2A) or a run (AG-UI), by outcome and telemetry channel.",
      labelNames: ["outcome", "channel"],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.firstEventSeconds = new Histogram({
      name: "iac_code_first_event_seconds",
      help: "Time from a streaming request to its first event after the task snapshot / RUN_STARTED.",
      labelNames: ["binding"],
      buckets: FIRST_EVENT_BUCKETS,
      registers,
    });
    this.openStreams = new Gauge({
      name: "iac_code_open_streams",
      help: "Streams (SSE, gRPC server streams) open right now.",
      labelNames: ["binding"],
      registers,
    });
    this.tokens = new Counter({
      name: "iac_code_tokens_total",
      help: "Model tokens used by finished turns (A2A) or runs (AG-UI), by kind (input, output), provider, model and telemetry channel.",
      labelNames: ["kind", "provider", "model", "channel"],
      registers,
    });
    this.runsStarted = new Counter({
      name: "iac_code_agui_runs_started_total",
      help: "AG-UI runs started (RUN_STARTED sent), by kind (run, resume).",
      labelNames: ["kind"],
      registers,
    });
    this.runsFinished = new Counter({
      name: "iac_code_agui_runs_finished_total",
      help: "AG-UI runs ended with RUN_FINISHED, by outcome (success, interrupt).",
      labelNames: ["outcome"],
      registers,
    });
    this.runsErrored = new Counter({
      name: "iac_code_agui_runs_errored_total",
      help: "AG-UI runs ended with RUN_ERROR, by its code.",
      labelNames: ["code"],
      registers,
    });
    const depth = options.pushQueueDepth;
    if (depth) {
      new Gauge({
        name: "iac_code_push_queue_depth",
        help: "Push notification jobs staged for delivery and not yet delivered or dead (retries included).",
        registers,
        async collect() {
          this.set(await depth());
        },
      });
    }
    const commits = options.stateCommits;
    if (commits) {
      mirroredCounter(
        this.registry,
        "iac_code_state_commits_total",
        "State store transactions (group commits: each holds what the requests of one event-loop turn staged).",
        commits,
      );
    }
    const waiting = options.interruptsWaiting;
    new Gauge({
      name: "iac_code_interrupts_waiting",
      help: "Permission requests and questions waiting for an answer (live in this process).",
      registers,
      collect() {
        this.set(waiting ? waiting() : 0);
      },
    });
    const managed = options.managedA2a;
    if (managed) {
      new Gauge({
        name: "iac_code_managed_a2a_up",
        help: "1 while the managed A2A server answers, 0 while it is down or (re)starting.",
        registers,
        collect() {
          this.set(managed().state === "up" ? 1 : 0);
        },
      });
      mirroredCounter(
        this.registry,
        "iac_code_managed_a2a_restarts_total",
        "Respawns of the managed A2A server attempted since the adapter started.",
        () => managed().restarts,
      );
    }
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  private readonly channels = new Set<string>();

  /** The `channel` label of a channel: itself while fewer than MAX_CHANNELS were seen, else "other". */
  channelLabel(channel: string | undefined): string {
    const name = channel || UNKNOWN_CHANNEL;
    if (this.channels.has(name)) return name;
    if (this.channels.size >= MAX_CHANNELS) return "other";
    this.channels.add(name);
    return name;
  }

  /** A finished turn or run: its duration by outcome and channel. */
  observeTurn(outcome: string, channel: string | undefined, seconds: number): void {
    this.turnSeconds.observe({ outcome, channel: this.channelLabel(channel) }, seconds);
  }

  /** Tokens of a finished turn or run, by provider and model ("unknown" when the runtime named none) and channel. */
  countTokens(usage: readonly ModelTokens[], channel?: string): void {
    const label = this.channelLabel(channel);
    for (const { provider, model, inputTokens, outputTokens } of usage) {
      const labels = { provider: provider || "unknown", model: model || "unknown", channel: label };
      if (inputTokens > 0) this.tokens.inc({ kind: "input", ...labels }, inputTokens);
      if (outputTokens > 0) this.tokens.inc({ kind: "output", ...labels }, outputTokens);
    }
  }

  /** The text exposition and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
