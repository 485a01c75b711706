// Reading A2A 1.0 ProtoJSON stream items as the adapter needs them: the
// unwrapped payload, task/context ids, the normalised task state, agent text
// and the metadata.iac_code projection. Tolerant of shapes: unknown fields are
// ignored, missing ones are undefined.

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export type ItemKind = "task" | "statusUpdate" | "artifactUpdate" | "message" | "other";

export interface A2aItem {
  kind: ItemKind;
  payload: JsonObject;
  taskId?: string;
  contextId?: string;
  /** Normalised: working, input-required, completed, failed, canceled, rejected, auth-required, submitted. */
  state?: string;
  /** metadata.iac_code of the payload (status updates and tasks). */
  iac: JsonObject;
}

const KINDS: ItemKind[] = ["task", "statusUpdate", "artifactUpdate", "message"];

export const FAILED_STATES = new Set(["failed", "rejected", "auth-required"]);
/** States after which the task does nothing more. */
export const TERMINAL_STATES = new Set([...FAILED_STATES, "canceled", "completed"]);
/** States at which a run's stream stops: terminal, or waiting for the next input. */
export const STOP_STATES = new Set([...TERMINAL_STATES, "input-required"]);

/** States seen so far, normalised (a handful of values; every stream item has one). */
const NORMALIZED = new Map<string, string>();

/** TASK_STATE_INPUT_REQUIRED -> input-required. */
export function normalizeState(raw: unknown): string | undefined {
  if (typeof raw !== "string") return undefined;
  const known = NORMALIZED.get(raw);
  if (known !== undefined) return known;
  if (raw.trim() === "") return undefined;
  const state = raw
    .trim()
    .toLowerCase()
    .replace(/^task_state_/, "")
    .replace(/_/g, "-");
  if (NORMALIZED.size < 64) NORMALIZED.set(raw, state);
  return state;
}

export function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Unwraps a StreamResponse (or a JSON-RPC response around one, or a bare Task). */
export function readItem(raw: unknown): A2aItem {
  let result: unknown = raw;
  if (isObject(raw) && "result" in raw) result = raw.result;
  const obj = isObject(result) ? result : {};
  let kind: ItemKind = "other";
  let payload: JsonObject = obj;
  for (const k of KINDS) {
    if (isObject(obj[k])) {
      kind = k;
      payload = obj[k];
      break;
    }
  }
  if (kind === "other" && isObject(obj.status) && str(obj.id)) kind = "task";
  const status = isObject(payload.status) ? payload.status : undefined;
  const metadata = isObject(payload.metadata) ? payload.metadata : undefined;
  const iac = metadata && isObject(metadata.iac_code) ? metadata.iac_code : {};
  return {
    kind,
    payload,
    taskId: str(payload.taskId) ?? (kind === "task" ? str(payload.id) : undefined),
    contextId: str(payload.contextId),
    state: normalizeState(status?.state),
    iac,
  };
}

function isAgentRole(role: unknown): boolean {
  return role === undefined || role === "ROLE_AGENT" || role === "agent";
}

function textOfParts(parts: unknown): string {
  if (!Array.isArray(parts)) return "";
  let text = "";
  for (const p of parts) if (isObject(p) && typeof p.text === "string") text += p.text;
  return text;
}

/** Agent text of the item's status message, with its messageId. */
export function statusText(item: A2aItem): { text: string; messageId?: string } {
  const status = isObject(item.payload.status) ? item.payload.status : undefined;
  const message = status && isObject(status.message) ? status.message : undefined;
  if (!message || !isAgentRole(message.role)) return { text: "" };
  return { text: textOfParts(message.parts), messageId: str(message.messageId) };
}

/** iac-code session id: on the projection, or on a pipeline envelope. */
export function sessionIdOf(item: A2aItem): string | undefined {
  const direct = str(item.iac.iacCodeSessionId);
  if (direct) return direct;
  if (isObject(item.iac.pipeline)) {
    const s = str(item.iac.pipeline.iacCodeSessionId);
    if (s) return s;
  }
  const batch = isObject(item.iac.pipelineBatch) ? item.iac.pipelineBatch.events : undefined;
  if (Array.isArray(batch)) {
    for (const e of batch) if (isObject(e) && str(e.iacCodeSessionId)) return e.iacCodeSessionId as string;
  }
  return undefined;
}
