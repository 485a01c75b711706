// The managed A2A server of an adapter without --a2a-url, supervised: the
// child (managed-child.ts) is started and probed at start-up (a failure there
// fails the adapter's start, as before); afterwards an exit the adapter did
// not ask for is logged and answered by a respawn on the same port and token,
// after an exponential backoff (capped; reset once a child stayed up long
// enough), so a child that keeps crashing is retried slowly, never in a tight
// loop, while the adapter stays up and says so (status(), /health). The
// respawned child reads the same persistence dir and config, so an interrupt
// that was waiting stays answerable. An adapter that is stopping never respawns.
import { randomBytes } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import type { AdapterLogger } from "../logger.js";
import type { A2aUpstream } from "./a2a-client.js";
import {
  freePort,
  launchManagedChild,
  reapStaleChild,
  waitUntilReady,
  type ChildExit,
  type LaunchedChild,
  type ManagedChildOptions,
} from "./managed-child.js";

export interface RespawnBackoff {
  /** Wait before the first respawn after a crash. */
  initialMs: number;
  /** The longest wait between two attempts (each failure doubles it up to here). */
  maxMs: number;
  /** A child up for this long resets the backoff: its crash waits initialMs again. */
  stableMs: number;
}

export const DEFAULT_RESPAWN_BACKOFF: RespawnBackoff = { initialMs: 1000, maxMs: 30_000, stableMs: 60_000 };

/** The wait before an attempt, after `failures` exits since the child was last stable. */
export function respawnDelay(policy: RespawnBackoff, failures: number): number {
  return Math.min(policy.maxMs, policy.initialMs * 2 ** failures);
}

export interface ManagedA2aOptions extends ManagedChildOptions {
  readyTimeoutMs?: number;
  /** How long a previous child may take to stop on its own before it is killed (default 15 s). */
  staleWaitMs?: number;
  /** Respawn pacing (default DEFAULT_RESPAWN_BACKOFF). */
  backoff?: Partial<RespawnBackoff>;
  /** Where exits, failed starts and recoveries are logged. */
  logger?: AdapterLogger;
}

/** starting: spawned, not ready yet; up: answering; down: exited, waiting for the next attempt. */
export type ManagedA2aState = "starting" | "up" | "down" | "stopped";

export interface ManagedA2aExit extends ChildExit {
  /** When (ISO 8601). */
  at: string;
  /** True when the child died before it was ready (a failed start). */
  duringStartup: boolean;
}

export interface ManagedA2aStatus {
  state: ManagedA2aState;
  /** Since when the child is in this state (ISO 8601). */
  since: string;
  /** Respawns attempted since the adapter started (failed ones included). */
  restarts: number;
  /** Where the child listens now (a respawn may take another port). */
  url: string;
  lastExit?: ManagedA2aExit;
  /** While down: when the next start is attempted (ISO 8601). */
  nextAttemptAt?: string;
  /** The PID of the child running or starting (not shown on /health). */
  pid?: number;
}

export interface ManagedA2a extends A2aUpstream {
  readonly url: string;
  readonly token: string;
  /** The current (or last) child process. */
  readonly child: ChildProcess;
  status(): ManagedA2aStatus;
  /** The adapter began stopping: no respawn from now on (the child may get the same signal, e.g. Ctrl-C). */
  stopRespawning(): void;
  /** Stops respawning and the child; resolves once no child runs and no attempt is in flight. */
  stop(): Promise<void>;
}

type StartResult = { ok: true } | { ok: false; reason: "exited" | "timeout" | "stopping"; exit?: ChildExit };

class ManagedA2aSupervisor implements ManagedA2a {
  readonly token = randomBytes(32).toString("base64url");
  private readonly backoff: RespawnBackoff;
  private readonly logger?: AdapterLogger;
  private current?: LaunchedChild;
  private last!: LaunchedChild;
  private state: ManagedA2aState = "starting";
  private since = Date.now();
  private upSince = 0;
  /** When the last child that was up exited. */
  private downSince = 0;
  private restarts = 0;
  /** Exits since the child was last stable: the backoff exponent. */
  private failures = 0;
  private lastExit?: ManagedA2aExit;
  private retryTimer?: NodeJS.Timeout;
  private nextAttemptAt?: number;
  private respawning: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    private port: number,
    private readonly options: ManagedA2aOptions,
  ) {
    this.backoff = { ...DEFAULT_RESPAWN_BACKOFF, ...options.backoff };
    this.logger = options.logger;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  get child(): ChildProcess {
    return this.last.child;
  }

  unavailable(): string | undefined {
    if (this.state === "up") return undefined;
    return `the managed A2A server is ${this.state}`;
  }

  status(): ManagedA2aStatus {
    const status: ManagedA2aStatus = {
      state: this.state,
      since: new Date(this.since).toISOString(),
      restarts: this.restarts,
      url: this.url,
    };
    if (this.lastExit) status.lastExit = { ...this.lastExit };
    if (this.state === "down" && this.nextAttemptAt !== undefined)
      status.nextAttemptAt = new Date(this.nextAttemptAt).toISOString();
    if (this.current?.child.pid !== undefined) status.pid = this.current.child.pid;
    return status;
  }

  /** The first start: an error here fails the adapter's start-up (nothing is respawned). */
  async start(): Promise<void> {
    const result = await this.attempt();
    if (result.ok) return;
    if (result.reason === "exited") {
      throw new Error(
        `The local A2A process exited during startup (exit code ${String(result.exit?.code ?? null)}).`,
      );
    }
    throw new Error("The local A2A process did not become ready in time.");
  }

  stopRespawning(): void {
    this.stopping = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  async stop(): Promise<void> {
    this.stopRespawning();
    const stopping = this.current?.stop();
    await this.respawning;
    await stopping;
    await this.current?.stop();
    this.setState("stopped");
  }

  private setState(state: ManagedA2aState): void {
    if (this.state === state) return;
    this.state = state;
    this.since = Date.now();
  }

  /** Spawns a child and waits for it to be ready; a child that is not ready is stopped. */
  private async attempt(): Promise<StartResult> {
    if (this.stopping) return { ok: false, reason: "stopping" };
    this.setState("starting");
    const launched = launchManagedChild(this.port, this.token, this.options);
    this.current = this.last = launched;
    const ready = await waitUntilReady(
      launched,
      this.url,
      this.token,
      this.options.readyTimeoutMs ?? 20_000,
      () => this.stopping,
    );
    if (ready.ready) {
      this.upSince = Date.now();
      this.setState("up");
      void launched.exited.then((exit) => this.onExit(launched, exit));
      return { ok: true };
    }
    await launched.stop();
    if (this.current === launched) this.current = undefined;
    return { ok: false, reason: ready.reason, exit: launched.exit };
  }

  /** A child that was up exited: unless the adapter is stopping, log it and schedule a respawn. */
  private onExit(launched: LaunchedChild, exit: ChildExit): void {
    if (this.current !== launched) return;
    this.current = undefined;
    this.lastExit = { ...exit, at: new Date().toISOString(), duringStartup: false };
    this.downSince = Date.now();
    if (this.stopping) {
      this.setState("stopped");
      return;
    }
    const upMs = Date.now() - this.upSince;
    if (upMs >= this.backoff.stableMs) this.failures = 0;
    const retryInMs = this.scheduleRespawn();
    this.logger?.error(
      { pid: launched.child.pid, code: exit.code, signal: exit.signal, upMs, retryInMs },
      "managed A2A server exited; respawning",
    );
  }

  /** Goes down and arms the next attempt; returns its delay. */
  private scheduleRespawn(): number {
    const delay = respawnDelay(this.backoff, this.failures);
    this.failures += 1;
    this.setState("down");
    this.nextAttemptAt = Date.now() + delay;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.respawning = this.respawn();
    }, delay);
    // The adapter's listener keeps the process alive; this timer alone must not.
    this.retryTimer.unref();
    return delay;
  }

  private async respawn(): Promise<void> {
    if (this.stopping) return;
    this.restarts += 1;
    const result = await this.attempt();
    if (result.ok) {
      this.logger?.info(
        {
          pid: this.current?.child.pid,
          url: this.url,
          restarts: this.restarts,
          downMs: Date.now() - this.downSince,
        },
        "managed A2A server is back",
      );
      return;
    }
    const exit = result.exit ?? { code: null, signal: null };
    if (result.reason !== "stopping")
      this.lastExit = { ...exit, at: new Date().toISOString(), duringStartup: true };
    // The port may have been taken meanwhile: the next attempt takes a new one (same token).
    if (!this.stopping) this.port = await freePort();
    if (this.stopping) {
      this.setState("stopped");
      return;
    }
    const retryInMs = this.scheduleRespawn();
    this.logger?.warn(
      {
        reason: result.reason === "timeout" ? "not ready in time" : "exited during startup",
        code: exit.code,
        signal: exit.signal,
        restarts: this.restarts,
        retryInMs,
        url: this.url,
      },
      "managed A2A server failed to start; retrying",
    );
  }
}

/** Starts the managed A2A server (after the child a previous adapter left, if any) and supervises it. */
export async function startManagedA2a(options: ManagedA2aOptions = {}): Promise<ManagedA2a> {
  if (options.pidFile) await reapStaleChild(options.pidFile, options.staleWaitMs ?? 15_000);
  const supervisor = new ManagedA2aSupervisor(await freePort(), options);
  await supervisor.start();
  return supervisor;
}
