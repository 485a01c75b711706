// Durable per-thread state: one small JSON file per thread under
// <root>/threads/<thread-key>.json, loaded lazily, replaced atomically (temp
// file + rename, file-replacer.ts; with syncEveryWrite also fsync of the file
// and the directory), 0700 directories and 0600 files. It holds protocol
// mappings and idempotency digests only: never message text, LLM keys,
// AccessKey secrets or STS tokens.
import { ThreadCache } from "./thread-cache.js";
import { FileReplacer } from "./file-replacer.js";
import { createHash } from "node:crypto";
import { chmodSync, closeSync, constants, lstatSync, mkdirSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { isObject, type JsonObject } from "../upstream/a2a-items.js";

export interface PendingInterrupt {
  value: JsonObject;
  sideband: boolean;
  expiresAt: string;
  /**
   * Selections and confirmations: whether the client was shown the tool call
   * of toolUseId when the interrupt appeared (a runtime may ask them as a
   * tool's question or as the pipeline's own wait). Unset for other kinds.
   */
  toolCallShown?: boolean;
}

export interface ExecutionState {
  executionId: string;
  rosInvocationId: string;
  taskId: string | null;
  lastTaskId: string | null;
  pipelineSequence: number;
  pipelineOpenSteps: string[];
  textSnapshotDigests: string[];
  pending: Record<string, PendingInterrupt>;
  /** Interrupts that expired unanswered (a late resume gets EXECUTION_EXPIRED). */
  expiredInterruptIds?: string[];
}

export interface AppliedDigest {
  executionId: string;
  interruptId: string;
  digest: string;
}

export interface ThreadDoc {
  schemaVersion: 1;
  threadId: string;
  contextId: string;
  cwd: string;
  userId: string | null;
  iacCodeSessionId: string | null;
  execution: ExecutionState;
  runDigests: Record<string, string>;
  appliedResumeDigests: AppliedDigest[];
  terminalExecutionIds: string[];
}

export class StateUnavailableError extends Error {
  constructor(
    readonly threadId: string,
    reason: string,
  ) {
    super(`thread state unavailable: ${reason}`);
    this.name = "StateUnavailableError";
  }
}

const RESERVED = /^(CON|PRN|AUX|NUL|COM[1-9]|LPT[1-9])$/;

/** Longest accepted thread id (UTF-16 code units); longer ones are refused before any state is touched. */
export const MAX_THREAD_ID_LENGTH = 1024;
/** Longest readable file stem; longer safe ids are hashed so file names stay short. */
const MAX_PLAIN_KEY = 100;

/** True unless the text holds a lone surrogate (with the u flag, a pair is one code point, not Cs). */
const isWellFormed = (text: string): boolean => !/\p{Cs}/u.test(text);

/** A thread id the adapter accepts: non-empty, well-formed Unicode, at most MAX_THREAD_ID_LENGTH. */
export function isAcceptableThreadId(threadId: unknown): threadId is string {
  return (
    typeof threadId === "string" &&
    threadId !== "" &&
    threadId.length <= MAX_THREAD_ID_LENGTH &&
    isWellFormed(threadId)
  );
}

/**
 * File stem for a thread id, unique per id and at most 200 characters:
 * readable when short and portable, else hex of its UTF-8 bytes, else a hash.
 * Ids that are not well-formed Unicode (lone surrogates, which UTF-8 would
 * turn into the same replacement character) are hashed over their UTF-16 code
 * units, so they never share a file with another id.
 */
export function threadKey(threadId: string): string {
  if (threadId === "") throw new Error("empty thread id");
  if (!isWellFormed(threadId))
    return `aguihash~u16-${createHash("sha256").update(Buffer.from(threadId, "utf16le")).digest("hex")}`;
  const base = threadId.replace(/\.+$/, "").split(".")[0].toUpperCase();
  const safe =
    threadId.length <= MAX_PLAIN_KEY &&
    /^[A-Za-z0-9_.-]+$/.test(threadId) &&
    !/[A-Z]/.test(threadId) &&
    threadId !== "." &&
    threadId !== ".." &&
    !threadId.endsWith(".") &&
    !RESERVED.test(base);
  if (safe) return threadId;
  const hex = Buffer.from(threadId, "utf8").toString("hex");
  if (hex.length + 7 <= 200) return `aguiid~${hex}`;
  return `aguihash~${createHash("sha256").update(threadId, "utf8").digest("hex")}`;
}

/** contextId of a thread: stable for the thread's life. */
export function contextIdFor(threadId: string): string {
  return `agui-${createHash("sha256").update(threadId, "utf8").digest("hex").slice(0, 40)}`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const k of Object.keys(value).sort()) out[k] = sortKeys(value[k]);
    return out;
  }
  return value;
}

const HEX64 = /^[0-9a-f]{64}$/;
const nonEmpty = (v: unknown): v is string => typeof v === "string" && v !== "";
const strOrNull = (v: unknown): boolean => v === null || typeof v === "string";

/** Validates a loaded document; throws with the reason. */
/** A thread document from its stored JSON text (STATE_UNAVAILABLE when it is not one). */
export function parseThreadDoc(text: string, threadId: string): ThreadDoc {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new StateUnavailableError(threadId, "invalid JSON");
  }
  return validateThreadDoc(parsed, threadId);
}

export function validateThreadDoc(raw: unknown, threadId: string): ThreadDoc {
  const fail = (why: string): never => {
    throw new StateUnavailableError(threadId, why);
  };
  if (!isObject(raw)) return fail("not an object");
  if (raw.schemaVersion !== 1) fail("unknown schemaVersion");
  if (raw.threadId !== threadId) fail("threadId mismatch");
  if (!nonEmpty(raw.contextId) || !nonEmpty(raw.cwd)) fail("contextId/cwd");
  if (!strOrNull(raw.userId) || !strOrNull(raw.iacCodeSessionId)) fail("userId/iacCodeSessionId");
  const ex = raw.execution;
  if (!isObject(ex)) return fail("execution");
  if (!nonEmpty(ex.executionId) || !nonEmpty(ex.rosInvocationId)) fail("execution ids");
  if (!strOrNull(ex.taskId) || !strOrNull(ex.lastTaskId ?? null)) fail("taskId");
  if (typeof ex.pipelineSequence !== "number" || !Number.isInteger(ex.pipelineSequence) || ex.pipelineSequence < 0)
    fail("pipelineSequence");
  if (!Array.isArray(ex.pipelineOpenSteps) || !ex.pipelineOpenSteps.every(nonEmpty)) fail("pipelineOpenSteps");
  if (!Array.isArray(ex.textSnapshotDigests) || !ex.textSnapshotDigests.every((d) => typeof d === "string" && HEX64.test(d)))
    fail("textSnapshotDigests");
  if (!isObject(ex.pending)) fail("pending");
  for (const [id, p] of Object.entries(ex.pending as JsonObject)) {
    if (!isObject(p) || !isObject(p.value) || typeof p.sideband !== "boolean" || p.value.inputId !== id) fail("pending entry");
    if (!nonEmpty((p as JsonObject).expiresAt) || Number.isNaN(Date.parse((p as JsonObject).expiresAt as string))) fail("expiresAt");
  }
  if (ex.expiredInterruptIds !== undefined && (!Array.isArray(ex.expiredInterruptIds) || !ex.expiredInterruptIds.every(nonEmpty)))
    fail("expiredInterruptIds");
  if (!isObject(raw.runDigests)) fail("runDigests");
  const runDigests: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw.runDigests as JsonObject)) if (nonEmpty(k) && nonEmpty(v)) runDigests[k] = v;
  if (!Array.isArray(raw.appliedResumeDigests)) fail("appliedResumeDigests");
  for (const a of raw.appliedResumeDigests as unknown[])
    if (!isObject(a) || !nonEmpty(a.executionId) || !nonEmpty(a.interruptId) || !nonEmpty(a.digest)) fail("applied entry");
  if (!Array.isArray(raw.terminalExecutionIds) || !raw.terminalExecutionIds.every(nonEmpty)) fail("terminalExecutionIds");
  const doc = raw as unknown as ThreadDoc;
  doc.runDigests = runDigests;
  doc.execution.lastTaskId = (ex.lastTaskId as string | null | undefined) ?? null;
  return doc;
} // prettier-ignore

export interface ThreadStoreOptions {
  root: string;
  /** Fault injection for tests: called before each write; throwing fails the write. */
  beforeWrite?: (doc: ThreadDoc) => void;
  /** Idle threads kept in memory (default DEFAULT_THREAD_CACHE_LIMIT). */
  cacheLimit?: number;
  /**
   * fsync each file and the directory before a write counts as done (sync-every-commit):
   * the state survives a power loss too. Without it a write survives the process
   * being killed, as the A2A server's commits do by default.
   */
  syncEveryWrite?: boolean;
}

/** Where thread documents live: files (ThreadStore, the default) or Redis (RedisThreadStore). */
export interface ThreadStates {
  /** The thread's document; the same object while it is loaded here (callers mutate it and save). */
  load(threadId: string): Promise<ThreadDoc | undefined>;
  forget(threadId: string): void;
  save(doc: ThreadDoc): Promise<void>;
  /** Threads loaded in memory (for idle checks and expiry timers). */
  loaded(): ThreadDoc[];
  /** Which loaded threads are in use (kept in memory); the others may be evicted (thread-cache.ts). */
  keepInUse?(inUse: (doc: ThreadDoc) => boolean): void;
  /** The adapter stops: what the store holds for this process only is released. */
  close?(): void;
}

/** The document as it is written: sets in sorted order, keys sorted (stable bytes for the same state). */
export function serializeThreadDoc(doc: ThreadDoc): string {
  if (doc.schemaVersion !== 1 || !doc.threadId)
    throw new Error("refusing to save an invalid thread document");
  const normalized: ThreadDoc = {
    ...doc,
    execution: {
      ...doc.execution,
      pipelineOpenSteps: [...doc.execution.pipelineOpenSteps].sort(),
      textSnapshotDigests: [...doc.execution.textSnapshotDigests].sort(),
    },
    terminalExecutionIds: [...doc.terminalExecutionIds].sort(),
    appliedResumeDigests: [...doc.appliedResumeDigests].sort((a, b) =>
      a.executionId === b.executionId
        ? a.interruptId.localeCompare(b.interruptId)
        : a.executionId.localeCompare(b.executionId),
    ),
  };
  return JSON.stringify(sortKeys(normalized), null, 2) + "\n";
}

export class ThreadStore implements ThreadStates {
  readonly root: string;
  readonly threadsDir: string;
  private readonly cache: ThreadCache<{ doc: ThreadDoc }>;
  beforeWrite?: (doc: ThreadDoc) => void;
  private readonly files: FileReplacer;

  constructor(options: ThreadStoreOptions) {
    this.root = path.resolve(options.root);
    this.threadsDir = path.join(this.root, "threads");
    this.beforeWrite = options.beforeWrite;
    this.files = new FileReplacer(this.threadsDir, options.syncEveryWrite ?? false, () => this.prepareDirs());
    this.cache = new ThreadCache(options.cacheLimit);
  }

  keepInUse(inUse: (doc: ThreadDoc) => boolean): void {
    this.cache.inUse = inUse;
  }

  fileFor(threadId: string): string {
    return path.join(this.threadsDir, `${threadKey(threadId)}.json`);
  }

  /** The thread's document (memory first, then its file); undefined when none exists. */
  load(threadId: string): Promise<ThreadDoc | undefined> {
    // A throw (StateUnavailableError) becomes the rejection.
    return new Promise((resolve) => resolve(this.read(threadId)));
  }

  private read(threadId: string): ThreadDoc | undefined {
    const cached = this.cache.get(threadId);
    if (cached) return cached.doc;
    const file = this.fileFor(threadId);
    let text: string;
    try {
      // A new thread (every first run) has no file: told without the cost of an exception.
      if (!lstatSync(file, { throwIfNoEntry: false })) return undefined;
      // Synchronous, as the writes: a small file in the page cache, read once per thread.
      const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        text = readFileSync(fd, "utf8");
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new StateUnavailableError(threadId, (err as Error).message);
    }
    const doc = parseThreadDoc(text, threadId);
    this.cache.set(threadId, { doc });
    return doc;
  }

  forget(threadId: string): void {
    this.cache.delete(threadId);
  }

  /** Atomically replaces the thread's file with `doc`. */
  async save(doc: ThreadDoc): Promise<void> {
    if (doc.schemaVersion !== 1 || !doc.threadId)
      throw new Error("refusing to save an invalid thread document");
    this.beforeWrite?.(doc);
    await this.files.replace(this.fileFor(doc.threadId), serializeThreadDoc(doc));
    this.cache.set(doc.threadId, { doc });
  }

  /** Removes what only this process used (the spare files of the replacer). */
  close(): void {
    this.files.close();
  }

  /** The directories, mode 0700 (made at the first write, again if they vanish). */
  private prepareDirs(): void {
    mkdirSync(this.threadsDir, { recursive: true, mode: 0o700 });
    chmodSync(this.root, 0o700);
    chmodSync(this.threadsDir, 0o700);
  }

  /** Threads loaded in memory (for idle checks and expiry timers). */
  loaded(): ThreadDoc[] {
    return this.cache.docs();
  }
}
