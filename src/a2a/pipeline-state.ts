// GET /iac-code/pipeline/state?contextId=…|taskId=…&afterSequence=N: what a
// client that reconnects needs to catch up with a pipeline (a2a/pipeline-state):
// the snapshot of the context's latest run and the events after N from its
// journal. Authenticated like the A2A routes; a task or context of another
// caller is not found. Errors are {"error": "<text>"} (400, 404).
import { Router } from "@koa/router";
import type { AgentRuntime } from "../runtime/seam.js";
import type { Authenticator } from "./core/request/auth.js";
import type { ExposureOptions } from "./core/turn/event-mapper.js";
import { isValidA2aId } from "./core/request/ids.js";
import { requireAuth, type A2aState } from "./http-app.js";
import type { ContextStore, TaskStore } from "./stores/state.js";

export const PIPELINE_STATE_PATH = "/iac-code/pipeline/state";

export interface PipelineStateDeps {
  runtime: AgentRuntime;
  tasks: TaskStore;
  contexts: ContextStore;
  auth: Authenticator;
  exposure: ExposureOptions;
}

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function createPipelineStateRouter(deps: PipelineStateDeps): Router<A2aState> {
  const router = new Router<A2aState>();
  router.get(PIPELINE_STATE_PATH, requireAuth(deps.auth), async (ctx) => {
    const fail = (status: number, error: string): void => {
      ctx.status = status;
      ctx.body = { error };
    };
    const owner = ctx.state.caller.owner;
    const taskId = one(ctx.query.taskId);
    let contextId = one(ctx.query.contextId);
    const after = one(ctx.query.afterSequence);
    if (!taskId && !contextId) return fail(400, "contextId or taskId is required");
    if (after !== undefined && (!/^\d{1,15}$/.test(after) || !Number.isSafeInteger(Number(after)))) {
      return fail(400, "afterSequence must be a non-negative integer");
    }
    if (taskId) {
      const task = isValidA2aId(taskId) ? await deps.tasks.get(taskId) : undefined;
      if (!task || task.owner !== owner) return fail(404, "A2A task not found");
      if (contextId && contextId !== task.task.contextId) return fail(404, "A2A task/context mismatch");
      contextId = task.task.contextId;
    }
    const context = contextId && isValidA2aId(contextId) ? await deps.contexts.get(contextId) : undefined;
    if (!context || context.owner !== owner) return fail(404, "A2A context not found");
    const state =
      context.sessionId && deps.runtime.pipelineState
        ? await deps.runtime.pipelineState(context.sessionId, after === undefined ? undefined : Number(after))
        : undefined;
    if (!state) return fail(404, "A2A pipeline state not found");
    // Raw thinking follows the server's exposure setting, as on the live stream.
    const events = deps.exposure.rawThinking
      ? state.events
      : state.events.filter((e) => e.eventType !== "thinking_delta");
    ctx.body = { snapshot: state.snapshot, events };
  });
  return router;
}
