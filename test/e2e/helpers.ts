/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// End-to-end harness: the real A2A server (startA2aServer) in front of the real
// agent runtime (createAgentRuntime, scripted provider) on 127.0.0.1:0 over
// temporary directories, a way to restart it on the same directories, the
// `iac-code` CLI as a child process, and small readers for A2A stream events.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pino, { type Logger } from "pino";
import BetterSqlite3 from "better-sqlite3";
import { Redis } from "ioredis";
import { openStateStore, startA2aServer, type RunningA2aServer } from "../../src/a2a/server.js";
import { STATE_FILE } from "../../src/a2a/stores/sqlite-state.js";
import type { StateStore } from "../../src/a2a/stores/state.js";
import { createAgentRuntime, type AgentRuntime } from "../../src/runtime/index.js";
import { resolveSettings } from "../../src/a2a/config/server-settings.js";
import { createLogger } from "../../src/server/logger.js";
import { openStream, resultOf, stateOf, userMessage, type AnyJson } from "../a2a/helpers.js";
import type { AuditLine } from "../../src/runtime/permissions/audit.js";
import type { AguiSettings } from "../../src/agui/config.js";
import { SESSION_PREFIX } from "../../src/runtime/store/redis-runtime-store.js";

export type { AuditLine };

export const SCRIPTS = path.resolve(import.meta.dirname, "..", "fixtures", "scripts");
export const BIN = path.resolve(import.meta.dirname, "..", "..", "bin", "iac-code.mjs");

export function tempDir(prefix = "iac-e2e-"): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface E2eServer {
  url: string;
  dir: string;
  workspace: string;
  configDir: string;
  persistDir: string;
  server: RunningA2aServer;
  runtime: AgentRuntime;
  /** The state store the server and the runtime share (as `iac-code a2a` opens it). */
  state: StateStore;
  /** Stops the server, then the runtime, then the store (turns waiting for input stay answerable). */
  close(): Promise<void>;
}

export interface E2eOptions {
  /** Script: a name under test/fixtures/scripts, or an absolute path. */
  script: string;
  /** Reuse the directories of an earlier server (restart). */
  dir?: string;
  /** Extra keys of the A2A server config (thinking-exposure, token, ...). */
  file?: Record<string, unknown>;
  /** Where the server and the runtime log (default: silent). */
  logger?: Logger;
  /** Safe mode on both sides, as IAC_CODE_A2A_SAFE_MODE sets it: the server's projection, the runtime's tools. */
  safeMode?: boolean;
  /** More of the server's environment (IAC_CODE_CONFIG_BACKUP_DIR...). */
  env?: NodeJS.ProcessEnv;
}

/**
 * The A2A server and the real runtime, both in this process, on the directories
 * under `dir`, sharing one state store as `iac-code a2a` does.
 */
export async function startE2eServer(options: E2eOptions): Promise<E2eServer> {
  const dir = options.dir ?? tempDir();
  const workspace = path.join(dir, "workspace");
  const configDir = path.join(dir, "config");
  const persistDir = path.join(dir, "persist");
  mkdirSync(workspace, { recursive: true });
  const settings = resolveSettings(
    {
      port: 0,
      "persistence-dir": persistDir,
      ...(options.safeMode ? { "safe-mode": true } : {}),
      ...(options.file ?? {}),
    },
    {},
    {},
  );
  const logger = options.logger ?? createLogger({ silent: true });
  const state = await openStateStore(settings, undefined, logger);
  const runtime = await createAgentRuntime({
    configDir,
    scriptFile: path.resolve(SCRIPTS, options.script),
    env: { HOME: dir },
    homeDir: dir,
    logger: options.logger ?? pino({ level: "silent" }),
    store: state.runtime,
    safeMode: options.safeMode === true,
  });
  const server = await startA2aServer(settings, {
    runtime,
    logger,
    cwd: workspace,
    env: { IACCODE_A2A_ALLOWED_CWDS: dir, ...options.env },
    state,
  });
  return {
    url: server.url,
    dir,
    workspace,
    configDir,
    persistDir,
    server,
    runtime,
    state,
    async close() {
      await server.close();
      await runtime.close();
      await state.close();
    },
  };
}

/** An AG-UI adapter's settings in front of a test A2A server (its token if any; thread state in its dir). */
export function adapterSettings(a2a: { url: string; dir: string }, token?: string): AguiSettings {
  return {
    host: "127.0.0.1",
    port: 0,
    a2aUrl: a2a.url,
    ...(token === undefined ? {} : { a2aToken: token }),
    stateDir: path.join(a2a.dir, "agui-state"),
    idleShutdown: 0,
    interruptTtl: 540,
    allowedCwds: [a2a.dir],
    debug: false,
    logStdout: false,
  };
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** metadata.iac_code of a status update (or of the task snapshot). */
export function iacOf(event: Record<string, unknown>): AnyJson | undefined {
  const r = resultOf(event);
  return (r?.statusUpdate?.metadata?.iac_code ?? r?.task?.metadata?.iac_code) as AnyJson | undefined;
}

/** Agent text of a status update (streamed chunks and final texts alike). */
export function textOf(event: Record<string, unknown>): string | undefined {
  return resultOf(event)?.statusUpdate?.status?.message?.parts?.[0]?.text as string | undefined;
}

export function texts(events: Array<Record<string, unknown>>): string[] {
  return events.map(textOf).filter((t): t is string => t !== undefined);
}

/** Tool trace entries (metadata.iac_code.tool) in stream order. */
export function toolTrace(events: Array<Record<string, unknown>>): AnyJson[] {
  return events.map((e) => iacOf(e)?.tool as AnyJson | undefined).filter((t): t is AnyJson => !!t);
}

export const isInputRequest = (e: Record<string, unknown>): boolean =>
  stateOf(e) === "TASK_STATE_INPUT_REQUIRED" && iacOf(e)?.input !== undefined;

export const isEndOfTurn = (e: Record<string, unknown>): boolean =>
  (stateOf(e) === "TASK_STATE_INPUT_REQUIRED" && iacOf(e)?.input === undefined) ||
  stateOf(e) === "TASK_STATE_FAILED" ||
  stateOf(e) === "TASK_STATE_CANCELED";

export interface WaitingTurn {
  taskId: string;
  contextId: string;
  /** The a2a/input-request envelope. */
  envelope: AnyJson;
  events: Array<Record<string, unknown>>;
}

/** Sends a message on a stream and reads until the turn asks for input (then stops reading). */
export async function sendUntilInput(
  url: string,
  text: string,
  extra: Record<string, unknown> = {},
): Promise<WaitingTurn> {
  const stream = await openStream(url, "SendStreamingMessage", { message: userMessage(text, extra) });
  const events = await stream.until((e) => isInputRequest(e) || isEndOfTurn(e));
  stream.stop();
  const last = events.at(-1)!;
  const envelope = iacOf(last)?.input as AnyJson | undefined;
  if (!envelope) throw new Error(`the turn ended without asking: ${JSON.stringify(events.slice(-3))}`);
  const task = resultOf(events[0]).task as AnyJson;
  return { taskId: task.id as string, contextId: task.contextId as string, envelope, events };
}

/** Sends a message on a stream and reads it to the end of the turn. */
export async function sendToEnd(
  url: string,
  text: string,
  extra: Record<string, unknown> = {},
): Promise<Array<Record<string, unknown>>> {
  const stream = await openStream(url, "SendStreamingMessage", { message: userMessage(text, extra) });
  return stream.rest();
}

/**
 * The answer message to an input request (one application/json data part of
 * the request's kind): `answer` is the decision of a permission, or
 * `{selectedId}` / `{freeText}` of a choice.
 */
export function inputAnswerMessage(
  waiting: Pick<WaitingTurn, "taskId" | "contextId" | "envelope">,
  answer: Record<string, unknown>,
): Record<string, unknown> {
  return userMessage("", {
    taskId: waiting.taskId,
    contextId: waiting.contextId,
    parts: [
      {
        mediaType: "application/json",
        data: {
          schemaVersion: 1,
          kind: (waiting.envelope.kind as string | undefined) ?? "permission",
          requestTaskId: waiting.taskId,
          inputId: waiting.envelope.inputId as string,
          toolUseId: waiting.envelope.toolUseId as string,
          ...answer,
        },
      },
    ],
  });
}

/** The answer message to a permission request. */
export function answerMessage(
  waiting: Pick<WaitingTurn, "taskId" | "contextId" | "envelope">,
  decision: "allow_once" | "allow_always" | "deny",
): Record<string, unknown> {
  return inputAnswerMessage(waiting, { decision });
}

/** Answers a permission with SendStreamingMessage and reads the continuation to its end. */
export async function answer(
  url: string,
  waiting: Pick<WaitingTurn, "taskId" | "contextId" | "envelope">,
  decision: "allow_once" | "allow_always" | "deny",
): Promise<Array<Record<string, unknown>>> {
  const stream = await openStream(url, "SendStreamingMessage", {
    message: answerMessage(waiting, decision),
  });
  return stream.rest();
}

/** Lines of a session's permission audit log (<config>/sessions/<id>/permission-audit.jsonl). */
/** The runtime's permission audit of a session, from a state store in this process. */
export async function auditLines(state: StateStore, sessionId: string): Promise<AuditLine[]> {
  const rows = await (
    await state.runtime.log({ sessionId, contextId: "", part: "" }, "permission-audit")
  ).read();
  return rows.map((row) => JSON.parse(row) as AuditLine);
}

/** The same, from the Redis that replicas with store: redis share. */
export async function redisAuditLines(redisUrl: string, sessionId: string): Promise<AuditLine[]> {
  const client = new Redis(redisUrl);
  try {
    const rows = await client.lrange(`${SESSION_PREFIX}${sessionId}::l:permission-audit`, 0, -1);
    return rows.map((row) => JSON.parse(row) as AuditLine);
  } finally {
    client.disconnect();
  }
}

/**
 * The same (of every session without one), read from a persistence dir's
 * state.db as committed: the server that owns the dir must have stopped (it
 * holds the database exclusively).
 */
export function storedAuditLines(persistDir: string, sessionId?: string): AuditLine[] {
  const db = new BetterSqlite3(path.join(persistDir, STATE_FILE), { readonly: true });
  try {
    return db
      .prepare<[string, string], { body: string }>(
        `SELECT body FROM runtime_log_rows WHERE (session_id = ? OR ? = '') AND part = ''
         AND log = 'permission-audit' ORDER BY session_id, seq`,
      )
      .all(sessionId ?? "", sessionId ?? "")
      .map((r) => JSON.parse(r.body) as AuditLine);
  } finally {
    db.close();
  }
}

/** Leftover temporary files of atomic writes (".<name>.<hex>.tmp") in a directory. */
export function tempLeftovers(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.endsWith(".tmp"));
}

/** A running `iac-code` child process and what it printed. */
export interface CliChild {
  child: ChildProcess;
  /** The first http URL the child announced as "listening on <url>". */
  url: string;
  /** What it printed on stdout (the banner) and stderr (the log lines). */
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout or stderr contains the text (rejects if the child exits first). */
  waitForOutput(text: string): Promise<void>;
  /** Sends the signal (default SIGTERM) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** An environment with no IAC_CODE_* / IACCODE_* variable of the parent, and a private HOME. */
export function cleanEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  for (const key of Object.keys(env))
    if (/^(IAC_CODE_|IACCODE_)/.test(key) && key !== "IAC_CODE_FROM_SOURCE") delete env[key];
  return { ...env, ...extra };
}

/** The CLI entry run from the TypeScript sources (whatever bin/ runs). */
export const SOURCE_MAIN = path.resolve(import.meta.dirname, "..", "..", "src", "cli", "main.ts");

/** `node --import tsx src/cli/main.ts <args>`: the CLI from the sources. */
export function sourceCliArgs(args: string[]): string[] {
  return ["--import", "tsx", SOURCE_MAIN, ...args];
}

/** Starts `iac-code <args>` and waits for its "listening on" line (on stdout or stderr). */
export async function startCli(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<CliChild> {
  return startNode([BIN, ...args], args, env, cwd);
}

/** Like startCli, from the sources (`node --import tsx src/cli/main.ts <args>`). */
export async function startSourceCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<CliChild> {
  return startNode(sourceCliArgs(args), args, env, cwd);
}

/** Runs node with nodeArgs; `args` (the iac-code arguments) name the child in errors. */
async function startNode(
  nodeArgs: string[],
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<CliChild> {
  const child = spawn(process.execPath, nodeArgs, { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  // Registered first, so the buffers are up to date when a waiter looks.
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  /** Resolves with what `test` finds in the output so far or later; rejects if the child exits first. */
  const watch = <T>(test: () => T | undefined): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const exited = (code: number | null) =>
        reject(new Error(`iac-code ${args.join(" ")} exited (${String(code)}): ${out}${err}`));
      const look = (): boolean => {
        const found = test();
        if (found === undefined) return false;
        child.stdout.off("data", look);
        child.stderr.off("data", look);
        child.off("exit", exited);
        resolve(found);
        return true;
      };
      if (look()) return;
      child.stdout.on("data", look);
      child.stderr.on("data", look);
      child.once("exit", exited);
    });
  const url = await watch(() => {
    const m = /listening on (http:\/\/\S+?)[\s,)]/.exec(`${out}\n${err}\n`);
    return m ? (m[1].endsWith("/") ? m[1] : `${m[1]}/`) : undefined;
  });
  return {
    child,
    url,
    stdout: () => out,
    stderr: () => err,
    async waitForOutput(text: string) {
      await watch(() => (`${out}${err}`.includes(text) ? true : undefined));
    },
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill(signal);
      // A child that ignores the signal must not hang the suite.
      const force = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(force);
    },
  };
}
