// Session backups (a2a-iaccode.md §12.3): with IAC_CODE_CONFIG_BACKUP_DIR set,
// the durable rows of a context are also committed to a backup store in that
// directory: the context record, its tasks (each with its artifacts index)
// and the runtime session's rows (conversation, usage, audit, pipeline journal
// and documents, step transcripts), read through the state store's interfaces
// (SQLite or Redis alike). One file per context, <dir>/contexts/<contextId>.json,
// written whole to a staging file (IAC_CODE_CONFIG_BACKUP_TMP_DIR, default
// <dir>/.staging), synced, then renamed over the previous one: a reader sees the
// previous backup or the new one, never half of one. The turn publishes its
// end only after the backup (turn/backup-gate.ts decides what a failure does).
//
// A context missing from the primary store is restored from its backup on the
// next message (ensureRestored). Nothing secret is in a backup: tasks are kept
// without per-request credentials (request-secrets.ts) and the runtime stores
// no key.
import { randomBytes } from "node:crypto";
import { constants as fsConstants, promises as fs } from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import type { pb } from "../../contract/index.js";
import { partOf, sessionScope } from "../../runtime/store/runtime-store.js";
import type { ContextRecord, StateStore, StoredTask } from "./state.js";
import { decodeArtifact, decodeTask, encodeArtifact, encodeTask } from "./task-codec.js";

export const BACKUP_DIR_ENV = "IAC_CODE_CONFIG_BACKUP_DIR";
export const BACKUP_TMP_DIR_ENV = "IAC_CODE_CONFIG_BACKUP_TMP_DIR";
export const BACKUP_FORMAT = "iac-code-session-backup";
const BACKUP_VERSION = 1;
const TASK_PAGE = 100;

export interface BackupSettings {
  dir: string;
  tmpDir: string;
}

/** The backup settings of an environment (undefined: backups are off). */
export function backupSettingsFromEnv(env: NodeJS.ProcessEnv): BackupSettings | undefined {
  const dir = env[BACKUP_DIR_ENV]?.trim();
  if (!dir) return undefined;
  const root = path.resolve(dir);
  const tmp = env[BACKUP_TMP_DIR_ENV]?.trim();
  return { dir: root, tmpDir: tmp ? path.resolve(tmp) : path.join(root, ".staging") };
}

/** A restore cannot read the backup now (the path is unavailable, the file half-visible...): retry later. */
export class BackupNotReadyError extends Error {
  override readonly name = "BackupNotReadyError";
}

/** One task as a backup holds it (protobuf binary as base64, as the SQLite store keeps it). */
interface BackupTask {
  id: string;
  owner: string;
  updatedAt: number;
  language: string;
  credentialNames: string[];
  task: string;
  artifacts: string[];
}

interface BackupPart {
  part: string;
  logs: Record<string, string[]>;
  docs: Record<string, string>;
}

/** The file of one context's backup. */
export interface BackupFile {
  format: typeof BACKUP_FORMAT;
  version: number;
  savedAt: string;
  context: ContextRecord;
  tasks: BackupTask[];
  runtime: BackupPart[];
}

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64");

function taskEntry(stored: StoredTask): BackupTask {
  return {
    id: stored.task.id,
    owner: stored.owner,
    updatedAt: stored.updatedAt,
    language: stored.language,
    credentialNames: [...stored.credentialNames],
    task: b64(encodeTask(stored.task)),
    artifacts: stored.task.artifacts.map((a) => b64(encodeArtifact(a))),
  };
}

/** Writes a file whole: staged, synced, renamed into place, the directory synced. */
async function writeWhole(target: string, tmpDir: string, text: string): Promise<void> {
  await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
  await fs.mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const staged = path.join(tmpDir, `${path.basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const handle = await fs.open(staged, "w", 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.rename(staged, target);
    } catch (error) {
      // A staging dir on another filesystem: copy beside the target, then rename there.
      if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
      const beside = `${target}.${randomBytes(6).toString("hex")}.tmp`;
      await fs.copyFile(staged, beside, fsConstants.COPYFILE_EXCL);
      await fs.rename(beside, target);
    }
  } finally {
    await fs.rm(staged, { force: true });
  }
  const dir = await fs.open(path.dirname(target), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

export class SessionBackups {
  /** Backups of one context run one after the other (the last one holds the latest rows). */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    readonly settings: BackupSettings,
    private readonly state: Pick<StateStore, "tasks" | "contexts" | "artifacts" | "runtime" | "commit">,
    private readonly logger: Logger,
  ) {}

  /** The backup file of a context. */
  fileOf(contextId: string): string {
    return path.join(this.settings.dir, "contexts", `${contextId}.json`);
  }

  /**
   * Commits the context's durable rows to the backup. `live`: the running
   * task as its next publication leaves it (it replaces the stored row).
   * Rejects when the backup could not be written.
   */
  commit(contextId: string, live?: StoredTask): Promise<void> {
    const previous = this.queues.get(contextId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.write(contextId, live));
    this.queues.set(contextId, next);
    const forget = () => {
      if (this.queues.get(contextId) === next) this.queues.delete(contextId);
    };
    next.then(forget, forget);
    return next;
  }

  private async write(contextId: string, live: StoredTask | undefined): Promise<void> {
    const file = await this.snapshot(contextId, live);
    if (!file) return;
    await writeWhole(this.fileOf(contextId), this.settings.tmpDir, JSON.stringify(file));
    // The session's pointer to its context (the restore preflight names a session, not a context).
    const pointer = this.sessionFileOf(file.context.sessionId);
    const known = await fs.readFile(pointer, "utf8").catch(() => "");
    if (known !== JSON.stringify({ contextId })) {
      await writeWhole(pointer, this.settings.tmpDir, JSON.stringify({ contextId }));
    }
  }

  private sessionFileOf(sessionId: string): string {
    return path.join(this.settings.dir, "sessions", `${sessionId}.json`);
  }

  /** The context a backed-up session belongs to (undefined: none); BackupNotReadyError when unreadable. */
  async contextOfSession(sessionId: string): Promise<string | undefined> {
    try {
      const pointer = JSON.parse(await fs.readFile(this.sessionFileOf(sessionId), "utf8")) as {
        contextId?: unknown;
      };
      return typeof pointer.contextId === "string" ? pointer.contextId : undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new BackupNotReadyError(`session backup unreadable: ${(error as Error).message}`);
    }
  }

  /** What a backup of the context holds now (undefined: the context has no session yet). */
  async snapshot(contextId: string, live?: StoredTask): Promise<BackupFile | undefined> {
    const context = await this.state.contexts.get(contextId);
    if (!context?.sessionId) return undefined;
    const tasks: BackupTask[] = [];
    let startId: string | undefined;
    do {
      const page = await this.state.tasks.list({
        owner: context.owner,
        contextId,
        pageSize: TASK_PAGE,
        startId,
        includeArtifacts: true,
      });
      if (!page) break;
      for (const stored of page.tasks)
        tasks.push(taskEntry(live && stored.task.id === live.task.id ? live : stored));
      startId = page.nextId;
    } while (startId);
    if (live && !tasks.some((t) => t.id === live.task.id)) tasks.push(taskEntry(live));
    const runtime: BackupPart[] = [];
    const scope = sessionScope(context.sessionId, contextId);
    for (const catalog of await this.state.runtime.catalog(context.sessionId)) {
      const partScope = partOf(scope, catalog.part);
      const part: BackupPart = { part: catalog.part, logs: {}, docs: {} };
      for (const name of catalog.logs)
        part.logs[name] = await (await this.state.runtime.log(partScope, name)).read();
      for (const name of catalog.docs) {
        const body = await this.state.runtime.get(partScope, name);
        if (body !== undefined) part.docs[name] = body;
      }
      runtime.push(part);
    }
    return {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      savedAt: new Date().toISOString(),
      context: { ...context },
      tasks,
      runtime,
    };
  }

  /** The context's backup; undefined when there is none. Throws BackupNotReadyError when it cannot be read now. */
  async read(contextId: string): Promise<BackupFile | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.fileOf(contextId), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new BackupNotReadyError(`session backup unreadable: ${(error as Error).message}`);
    }
    let file: BackupFile;
    try {
      file = JSON.parse(text) as BackupFile;
    } catch (error) {
      throw new BackupNotReadyError(`session backup unreadable: ${(error as Error).message}`);
    }
    if (file.format !== BACKUP_FORMAT || file.context?.contextId !== contextId)
      throw new BackupNotReadyError(`session backup of ${contextId} is not an ${BACKUP_FORMAT} file`);
    return file;
  }

  /**
   * "current" when the primary store holds the context, "restored" when its
   * backup was written back into it (and committed), "missing" when neither.
   */
  async ensureRestored(contextId: string): Promise<"current" | "restored" | "missing"> {
    if (await this.state.contexts.get(contextId)) return "current";
    const file = await this.read(contextId);
    if (!file) return "missing";
    // Another request may have restored it while the file was read.
    if (await this.state.contexts.get(contextId)) return "current";
    await restoreInto(this.state, file);
    await this.state.commit();
    this.logger.info(
      { contextId, sessionId: file.context.sessionId, tasks: file.tasks.length, savedAt: file.savedAt },
      "session restored from its backup",
    );
    return "restored";
  }
}

/** Stages a backup's rows into a store whose context is missing (the caller commits). */
export async function restoreInto(
  state: Pick<StateStore, "tasks" | "contexts" | "artifacts" | "runtime">,
  file: BackupFile,
): Promise<void> {
  const { context } = file;
  for (const entry of file.tasks) {
    const task: pb.Task = decodeTask(entry.id, Buffer.from(entry.task, "base64"));
    state.tasks.save({
      task,
      owner: entry.owner,
      updatedAt: entry.updatedAt,
      language: entry.language,
      credentialNames: entry.credentialNames,
    });
    for (const artifact of entry.artifacts)
      state.artifacts.save(entry.id, decodeArtifact(entry.id, Buffer.from(artifact, "base64")));
  }
  const scope = sessionScope(context.sessionId, context.contextId);
  for (const part of file.runtime) {
    const partScope = partOf(scope, part.part);
    for (const [name, rows] of Object.entries(part.logs)) {
      // A fresh log numbers from 1: the rows keep their numbers (they were read in order from 1).
      (await state.runtime.log(partScope, name, { fresh: true })).append(rows);
    }
    for (const [name, body] of Object.entries(part.docs)) state.runtime.put(partScope, name, body);
  }
  state.contexts.save({ ...context, updatedAt: Date.now() });
}
