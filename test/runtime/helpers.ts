// Shared helpers for the runtime tests: temporary directories, loggers that
// capture output, and a turn driver that answers input requests.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import BetterSqlite3 from "better-sqlite3";
import pino, { type Logger } from "pino";
import { createAgentRuntime, type RuntimeOptions } from "../../src/runtime/index.js";
import type {
  AgentRuntime,
  AgentSession,
  InputAnswer,
  InputRequest,
  RuntimeEvent,
  TurnOverrides,
} from "../../src/runtime/seam.js";
import { STANDALONE_STORE_FILE } from "../../src/runtime/store/standalone-store.js";

export const SCRIPTS = path.join(import.meta.dirname, "..", "fixtures", "scripts");
export const TOOLS_SCRIPT = path.join(SCRIPTS, "runtime-tools.yaml");

const created: string[] = [];

export async function tempDir(prefix = "iac-runtime-"): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(created.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

/** A logger whose JSON lines are kept in `lines` (to check what reaches the logs). */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      done();
    },
  });
  return { logger: pino({ level: "debug" }, sink), lines };
}

/** An answer without its inputId (filled in by the driver). */
export type AnswerBody = InputAnswer extends infer A
  ? A extends unknown
    ? Omit<A, "inputId">
    : never
  : never;

export interface TurnOptions {
  overrides?: TurnOverrides;
  signal?: AbortSignal;
  /** Called for each input_required; the returned answer is given right away (undefined: leave pending). */
  answer?: (request: InputRequest) => AnswerBody | undefined;
  /** Called for every event (e.g. to abort at a given point). */
  onEvent?: (event: RuntimeEvent) => void;
}

/** Runs one turn to its end and returns its events. */
export async function turn(
  session: AgentSession,
  text: string,
  options: TurnOptions = {},
): Promise<RuntimeEvent[]> {
  return drive(
    session.runTurn(
      { text, images: [], overrides: options.overrides ?? {} },
      options.signal ?? new AbortController().signal,
    ),
    session,
    options,
  );
}

export async function drive(
  iterable: AsyncIterable<RuntimeEvent>,
  session: AgentSession,
  options: TurnOptions = {},
): Promise<RuntimeEvent[]> {
  const events: RuntimeEvent[] = [];
  for await (const event of iterable) {
    events.push(event);
    options.onEvent?.(event);
    if (event.type === "input_required" && options.answer) {
      const answer = options.answer(event.request);
      if (answer) {
        // Answer after the loop has started waiting, as a client would.
        setImmediate(() => session.answerInput({ ...answer, inputId: event.request.inputId }));
      }
    }
  }
  return events;
}

export function ofType<T extends RuntimeEvent["type"]>(
  events: RuntimeEvent[],
  type: T,
): Array<Extract<RuntimeEvent, { type: T }>> {
  return events.filter((e): e is Extract<RuntimeEvent, { type: T }> => e.type === type);
}

export const allowOnce = (): AnswerBody => ({ kind: "permission", decision: "allow_once" });
export const allowAlways = (): AnswerBody => ({
  kind: "permission",
  decision: "allow_always",
});
export const deny = (): AnswerBody => ({ kind: "permission", decision: "deny" });

/** A scripted runtime over its config dir, and one session in a workspace. */
export interface ToolSession {
  runtime: AgentRuntime;
  session: AgentSession;
  cwd: string;
  configDir: string;
}

/** Opens (or, with sessionId, restores) a session of the tools script. */
export async function openToolSession(
  configDir: string,
  cwd: string,
  options: { contextId?: string; sessionId?: string; runtime?: Partial<RuntimeOptions> } = {},
): Promise<ToolSession> {
  const runtime = await createAgentRuntime({
    configDir,
    env: {},
    provider: "scripted",
    scriptFile: TOOLS_SCRIPT,
    logger: silentLogger(),
    ...options.runtime,
  });
  const session = await runtime.openSession({
    contextId: options.contextId ?? "ctx-1",
    cwd,
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
  });
  return { runtime, session, cwd, configDir };
}

/**
 * What a standalone runtime (no server) keeps in its config dir's runtime.db:
 * the rows of a log or a document of a session part, read on a connection of
 * the test's own (the runtime's commits are visible to it).
 */
export function storedRows(configDir: string, sessionId: string, log: string, part = ""): string[] {
  const db = new BetterSqlite3(path.join(configDir, STANDALONE_STORE_FILE), { readonly: true });
  try {
    return db
      .prepare<[string, string, string], { body: string }>(
        "SELECT body FROM runtime_log_rows WHERE session_id = ? AND part = ? AND log = ? ORDER BY seq",
      )
      .all(sessionId, part, log)
      .map((r) => r.body);
  } finally {
    db.close();
  }
}

export function storedJsonRows(configDir: string, sessionId: string, log: string, part = ""): unknown[] {
  return storedRows(configDir, sessionId, log, part).map((r) => JSON.parse(r) as unknown);
}

export function storedDoc(configDir: string, sessionId: string, name: string, part = ""): string | undefined {
  const db = new BetterSqlite3(path.join(configDir, STANDALONE_STORE_FILE), { readonly: true });
  try {
    return db
      .prepare<[string, string, string], { body: string }>(
        "SELECT body FROM runtime_docs WHERE session_id = ? AND part = ? AND name = ?",
      )
      .get(sessionId, part, name)?.body;
  } finally {
    db.close();
  }
}

/**
 * Makes every commit of the runtime database that writes a row of `log` fail
 * (a trigger, as a full disk would fail it); returns the undo.
 */
export function failWritesOf(configDir: string, log: string): () => void {
  const db = new BetterSqlite3(path.join(configDir, STANDALONE_STORE_FILE));
  const name = `fail_${log.replace(/\W/g, "_")}`;
  db.exec(
    `CREATE TRIGGER ${name} BEFORE INSERT ON runtime_log_rows WHEN NEW.log = '${log}'
     BEGIN SELECT RAISE(FAIL, 'disk I/O error (test)'); END`,
  );
  return () => {
    db.exec(`DROP TRIGGER ${name}`);
    db.close();
  };
}

/** Writes rows of a log and documents straight into a closed standalone runtime's database. */
export function seedStore(
  configDir: string,
  sessionId: string,
  seed: { rows?: Record<string, unknown[]>; docs?: Record<string, unknown> },
  part = "",
): void {
  const db = new BetterSqlite3(path.join(configDir, STANDALONE_STORE_FILE));
  try {
    const putRow = db.prepare(
      "INSERT OR REPLACE INTO runtime_log_rows (session_id, part, log, seq, body) VALUES (?, ?, ?, ?, ?)",
    );
    const putDoc = db.prepare(
      "INSERT OR REPLACE INTO runtime_docs (session_id, part, name, body) VALUES (?, ?, ?, ?)",
    );
    for (const [log, rows] of Object.entries(seed.rows ?? {})) {
      rows.forEach((row, i) =>
        putRow.run(sessionId, part, log, i + 1, typeof row === "string" ? row : JSON.stringify(row)),
      );
    }
    for (const [name, doc] of Object.entries(seed.docs ?? {}))
      putDoc.run(sessionId, part, name, JSON.stringify(doc));
  } finally {
    db.close();
  }
}
