// Admission of a RunAgentInput (agui-iaccode.md §2.5): the workspace, the
// thread's durable binding (created on first use), the run-id idempotency
// digest, the one-run-per-thread rule, and the execution a new run rotates to.
// Every refusal is an AguiError answered before the SSE stream starts; an
// admitted request has its run reserved in the core's active runs.
import { createHash } from "node:crypto";
import type { JsonObject } from "../upstream/a2a-items.js";
import type { AdapterCore } from "../adapter-core.js";
import { AguiError, MSG } from "../errors.js";
import { canonicalJson } from "../events.js";
import { freshExecution, hasExpired, hasPending, rotateExecution } from "../threads/execution.js";
import { checkLlmHeaders, resolveWorkspace, type IacCode } from "./inputs.js";
import type { ResumeAnswer } from "../threads/execution.js";
import { contextIdFor, type ThreadDoc } from "../threads/thread-store.js";
import type { Language } from "../../i18n/index.js";
import { bundledPipelineNames } from "../../runtime/pipeline/loader.js";

/** The parts of a validated RunAgentInput the adapter uses. */
export interface RunRequest {
  threadId: string;
  runId: string;
  parentRunId?: string;
  messages: unknown[];
  resume?: ResumeAnswer[];
  iacCode: IacCode;
  /** The whole parsed body (for the request digest). */
  raw: JsonObject;
}

export interface Admission {
  request: RunRequest;
  doc: ThreadDoc;
  cwd: string;
  language: Language;
  isResume: boolean;
  /** activeGuidance (§9.3): the message goes to the running pipeline; no active run is taken. */
  isGuidance?: boolean;
}

/** SHA-256 hex of the canonical JSON of the whole request (only the hash is stored). */
function requestDigest(raw: JsonObject): string {
  return createHash("sha256").update(canonicalJson(raw), "utf8").digest("hex");
}

function newBinding(request: RunRequest, cwd: string, userId: string | null): ThreadDoc {
  return {
    schemaVersion: 1,
    threadId: request.threadId,
    contextId: contextIdFor(request.threadId),
    cwd,
    userId,
    iacCodeSessionId: null,
    execution: freshExecution(request.iacCode.rosInvocationId),
    runDigests: {},
    appliedResumeDigests: [],
    terminalExecutionIds: [],
  };
}

/**
 * A guidance run (§9.3): no resume, runMode pipeline, a task bound to the
 * thread (a finished execution has none) and no interrupt waiting.
 */
function checkGuidance(request: RunRequest, doc: ThreadDoc): void {
  const { iacCode } = request;
  if (request.resume !== undefined || iacCode.runMode !== "pipeline" || !doc.execution.taskId) {
    throw new AguiError("EXECUTION_LOST", MSG.guidanceNoRun);
  }
  if (hasPending(doc)) throw new AguiError("RESUME_REQUIRED", MSG.resumeRequired);
}

/** Throws AguiError with its HTTP status, or reserves the thread for the run. */
export async function admit(core: AdapterCore, request: RunRequest, language: Language): Promise<Admission> {
  core.lastActivity = core.now();
  const cwd = resolveWorkspace(request.iacCode.cwd, core.roots);
  checkLlmHeaders(request.iacCode);
  // The pipelines are the A2A server's bundled ones; an unknown name is never run as a normal turn.
  const pipeline = request.iacCode.pipelineName;
  if (pipeline !== undefined && pipeline !== null && !bundledPipelineNames().includes(pipeline)) {
    throw new AguiError("INVALID_INPUT", MSG.unknownPipeline);
  }
  const isResume = request.resume !== undefined;
  const isGuidance = request.iacCode.activeGuidance === true;
  const userId = request.iacCode.userId ?? null;
  return core.lock.run(request.threadId, async () => {
    let doc = await core.loadThread(request.threadId);
    const created = !doc;
    if (!doc) {
      if (isGuidance) throw new AguiError("EXECUTION_LOST", MSG.guidanceNoRun);
      if (isResume) throw new AguiError("EXECUTION_LOST", MSG.executionLostResume);
      doc = newBinding(request, cwd, userId);
    }
    const digest = requestDigest(request.raw);
    const seen = doc.runDigests[request.runId];
    if (seen !== undefined) {
      throw new AguiError(seen === digest ? "DUPLICATE_RUN_ID" : "RUN_ID_CONFLICT", MSG.runIdUsed);
    }
    if (!isGuidance && core.active.has(request.threadId)) throw new AguiError("THREAD_BUSY", MSG.threadBusy);
    if (doc.cwd !== cwd || doc.userId !== userId) {
      throw new AguiError("THREAD_BINDING_CONFLICT", MSG.bindingConflict);
    }
    const before = structuredClone(doc);
    if (isGuidance) checkGuidance(request, doc);
    else if (isResume) {
      if (request.iacCode.rosInvocationId !== doc.execution.rosInvocationId) {
        throw new AguiError("EXECUTION_LOST", MSG.resumeMismatch);
      }
    } else {
      if (hasPending(doc)) {
        if (!hasExpired(doc, core.now())) throw new AguiError("RESUME_REQUIRED", MSG.resumeRequired);
        await core.expire(doc);
      }
      if (!created) rotateExecution(doc, request.iacCode.rosInvocationId);
    }
    doc.runDigests[request.runId] = digest;
    try {
      await core.store.save(doc);
    } catch (err) {
      core.logger?.error({ err: (err as Error).message }, "admission state write failed");
      if (created) core.store.forget(request.threadId);
      else Object.assign(doc, before);
      throw new AguiError("STATE_UNAVAILABLE", MSG.stateUnavailable);
    }
    // A guidance run takes no active run: the pipeline's own run goes on (§9.3).
    if (isGuidance) return { request, doc, cwd, language, isResume, isGuidance };
    core.active.set(request.threadId, {
      runId: request.runId,
      executionId: doc.execution.executionId,
      upstream: new AbortController(),
      waitStop: new AbortController(),
      paused: false,
      accepting: false,
      done: false,
      cancelledByExtension: false,
    });
    return { request, doc, cwd, language, isResume };
  });
}
