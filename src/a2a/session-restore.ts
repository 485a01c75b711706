// POST /iac-code/session/ensure-restored {cwd, sessionId, taskId}: the AG-UI
// adapter's preflight before it resumes an interrupted run (agui-iaccode.md
// §3.1, §5.5): the session must be in the primary store, else it is restored
// from its session backup (IAC_CODE_CONFIG_BACKUP_DIR, stores/session-backup.ts).
// 200 {"status":"current"|"restored"}; 404 when neither store has the task's
// session for this caller (or the cwd or session differ); 409
// {"error":{"code":"SESSION_BACKUP_NOT_READY","message","retryable":true}}
// when the backup cannot be read now; 400 naming a bad field.
import { Router } from "@koa/router";
import { t } from "../i18n/index.js";
import { readJsonBody } from "../server/json-body.js";
import type { Authenticator } from "./core/request/auth.js";
import { isValidA2aId } from "./core/request/ids.js";
import { requireAuth, type A2aState } from "./http-app.js";
import { BackupNotReadyError, type SessionBackups } from "./stores/session-backup.js";
import type { ContextStore, TaskStore } from "./stores/state.js";

export const SESSION_RESTORE_PATH = "/iac-code/session/ensure-restored";

export interface SessionRestoreDeps {
  tasks: TaskStore;
  contexts: ContextStore;
  auth: Authenticator;
  backups?: SessionBackups;
}

type Body = { cwd: string; sessionId: string; taskId: string };

function checkBody(value: unknown): Body | string {
  if (!value || typeof value !== "object" || Array.isArray(value)) return "the body must be a JSON object";
  const body = value as Record<string, unknown>;
  for (const field of ["cwd", "sessionId", "taskId"]) {
    const v = body[field];
    if (typeof v !== "string" || v === "") return `${field} must be a non-empty string`;
    if (field !== "cwd" && !isValidA2aId(v)) return `${field} is not a valid id`;
  }
  return body as Body;
}

export function createSessionRestoreRouter(deps: SessionRestoreDeps): Router<A2aState> {
  const router = new Router<A2aState>();
  router.post(SESSION_RESTORE_PATH, requireAuth(deps.auth), async (ctx) => {
    const fail = (status: number, error: unknown): void => {
      ctx.status = status;
      ctx.body = { error };
    };
    const read = await readJsonBody(ctx.req, { maxBytes: 64 * 1024 });
    if (!read.ok) return fail(400, read.message);
    const body = checkBody(read.value);
    if (typeof body === "string") return fail(400, body);
    const owner = ctx.state.caller.owner;
    const unavailable = () => fail(404, "A2A session not found");
    // The context the session belongs to: from the task in the primary store, else from the backup.
    let status: "current" | "restored" = "current";
    let contextId = (await deps.tasks.get(body.taskId))?.task.contextId;
    try {
      if (!contextId) {
        contextId = await deps.backups?.contextOfSession(body.sessionId);
        if (!contextId) return unavailable();
        const outcome = await deps.backups!.ensureRestored(contextId);
        if (outcome === "missing") return unavailable();
        status = outcome;
      }
    } catch (error) {
      if (!(error instanceof BackupNotReadyError)) throw error;
      return fail(409, {
        code: "SESSION_BACKUP_NOT_READY",
        message: t("en", "a2a.backupNotReady"),
        retryable: true,
      });
    }
    const task = await deps.tasks.get(body.taskId);
    const context = await deps.contexts.get(contextId);
    if (!task || task.owner !== owner || task.task.contextId !== contextId) return unavailable();
    if (!context || context.owner !== owner || context.sessionId !== body.sessionId) return unavailable();
    if (context.cwd !== body.cwd) return unavailable();
    ctx.body = { status };
  });
  return router;
}
