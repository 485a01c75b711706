// Interrupts: projecting A2A input requests (metadata.iac_code.input and
// pendingPermissions) into AG-UI interrupts with a response schema, and turning
// resume entries back into A2A answers. Only an allowlisted projection is kept
// (it is persisted): never secrets or tool inputs.
import { Ajv, type ValidateFunction } from "ajv";
import { isObject, type A2aItem, type JsonObject } from "../upstream/a2a-items.js";
import { canonicalJson, dropNulls, type InterruptObject } from "../events.js";
import { MSG } from "../errors.js";
import { normalizeLanguage, t } from "../../i18n/index.js";
import type { ResumeAnswer } from "../threads/execution.js";
import type { PendingInterrupt } from "../threads/thread-store.js";
import {
  checkConfirmationAnswer,
  checkSelectionAnswer,
  confirmationData,
  DEPLOYMENT_CONFIRMATION,
  offeredActions,
  RESOURCE_SELECTION,
  selectionData,
  selectionLabel,
} from "./structured-answers.js";

const KEPT_KEYS = [
  "schemaVersion", "kind", "requestTaskId", "contextId", "inputId", "toolUseId", "toolName", "title",
  "purpose", "effect", "target", "isReadOnly", "prompt", "safeSummary", "options", "language",
  "deploymentSummary", "scope", "subPipelineId", "operation", "displayParameters", "allowFreeText",
  "freeTextPrompt", "required", "selector",
]; // prettier-ignore

/** A pending interrupt as persisted: the kept projection plus its deadline. */

export interface ProjectedInput {
  value: JsonObject;
  sideband: boolean;
}

/** Required inputs of an item, de-duplicated by inputId, projected to the kept keys. */
export function requiredInputs(item: A2aItem): ProjectedInput[] {
  // Most items (text, tools) ask for nothing: no set or list for them.
  if (item.iac.input === undefined && item.iac.pendingPermissions === undefined) return [];
  const found: ProjectedInput[] = [];
  const seen = new Set<string>();
  const add = (raw: unknown, sideband: boolean): void => {
    if (!isObject(raw) || raw.required !== true) return;
    const key = typeof raw.inputId === "string" ? raw.inputId : canonicalJson(raw);
    if (seen.has(key)) return;
    seen.add(key);
    const value: JsonObject = {};
    for (const k of KEPT_KEYS) if (raw[k] !== undefined && raw[k] !== null) value[k] = raw[k];
    found.push({ value, sideband });
  };
  const input = item.iac.input;
  if (isObject(input)) add(input, input.scope === "candidate" || typeof input.subPipelineId === "string");
  if (Array.isArray(item.iac.pendingPermissions)) for (const p of item.iac.pendingPermissions) add(p, true);
  return found;
}

export interface StandardOption {
  id: string;
  title: string;
}

/** Options normalised to unique non-empty ids and display titles. */
export function standardOptions(raw: unknown): StandardOption[] {
  if (!Array.isArray(raw)) return [];
  const used = new Map<string, number>();
  return raw.map((opt, index) => {
    let id: string;
    let title: string;
    if (isObject(opt)) {
      id =
        "id" in opt ? String(opt.id) : "candidate_index" in opt ? String(opt.candidate_index) : String(index);
      const label = [opt.label, opt.name, opt.title].find((v) => typeof v === "string" && v !== "");
      title = typeof label === "string" ? label : id;
    } else {
      id = title = String(opt);
    }
    if (!id) id = `option-${index + 1}`;
    const n = (used.get(id) ?? 0) + 1;
    used.set(id, n);
    if (n > 1) id = `${id}-${n}`;
    return { id, title };
  });
}

const PERMISSION_DECISIONS = ["allow_once", "allow_always", "deny"];

/** Decisions the permission offers (its option ids); allow_once and deny when it lists none. */
function permissionSchema(value: JsonObject): JsonObject {
  const offered = Array.isArray(value.options)
    ? value.options
        .map((o): unknown => (isObject(o) ? o.id : o))
        .filter((id) => PERMISSION_DECISIONS.includes(String(id)))
    : [];
  const decisions = offered.length > 0 ? [...new Set(offered.map(String))] : ["allow_once", "deny"];
  return {
    type: "object",
    properties: { decision: { type: "string", enum: decisions } },
    required: ["decision"],
    additionalProperties: false,
  };
}

function kindOf(value: JsonObject): string {
  return typeof value.kind === "string" && value.kind ? value.kind : "input_required";
}

const FREE_TEXT_BRANCH: JsonObject = {
  type: "object",
  properties: { freeText: { type: "string", minLength: 1 } },
  required: ["freeText"],
  additionalProperties: false,
};

/** A selection: a resource's id (value, with its label), or one typed by hand (freeText). */
const SELECTION_SCHEMA: JsonObject = {
  oneOf: [
    {
      type: "object",
      properties: { value: { type: "string", minLength: 1 }, label: { type: "string" } },
      required: ["value"],
      additionalProperties: false,
    },
    FREE_TEXT_BRANCH,
  ],
};

/** A confirmation: one branch per option (selectedId), one for the action itself; never free text. */
function confirmationSchema(value: JsonObject): JsonObject {
  const overrides = { type: "object" };
  const branches: JsonObject[] = standardOptions(value.options).map((o) => ({
    type: "object",
    properties: {
      selectedId: { type: "string", const: o.id, title: o.title },
      parameter_overrides: overrides,
    },
    required: ["selectedId"],
    additionalProperties: false,
  }));
  branches.push({
    type: "object",
    properties: { action: { type: "string", enum: offeredActions(value) }, parameter_overrides: overrides },
    required: ["action"],
    additionalProperties: false,
  });
  return { oneOf: branches };
}

/** The JSON Schema a resolved payload must match, per kind. */
export function responseSchemaFor(value: JsonObject): JsonObject {
  const kind = kindOf(value);
  if (kind === "permission") return permissionSchema(value);
  if (kind === RESOURCE_SELECTION) return SELECTION_SCHEMA;
  if (kind === DEPLOYMENT_CONFIRMATION) return confirmationSchema(value);
  const options = standardOptions(value.options);
  const branches: JsonObject[] = options.map((o) => ({
    type: "object",
    properties: { selectedId: { type: "string", const: o.id, title: o.title } },
    required: ["selectedId"],
    additionalProperties: false,
  }));
  if (value.allowFreeText === true || options.length === 0) branches.push(FREE_TEXT_BRANCH);
  return { oneOf: branches };
}

/** The AG-UI interrupt for a pending input. */
export function toInterrupt(pending: PendingInterrupt): InterruptObject {
  const value = pending.value;
  const kind = kindOf(value);
  const lang = normalizeLanguage(typeof value.language === "string" ? value.language : undefined) ?? "en";
  const prompt = typeof value.prompt === "string" && value.prompt ? value.prompt : undefined;
  const title = typeof value.title === "string" && value.title ? value.title : undefined;
  const options = standardOptions(value.options);
  let message: string;
  if (kind === "permission") message = prompt ?? title ?? t(lang, MSG.permissionRequired);
  else {
    message = prompt ?? t(lang, MSG.inputRequired);
    // A selector's options are resources to pick in a form, not answers to list.
    if (options.length && kind !== RESOURCE_SELECTION)
      message += "\n" + options.map((o) => `- ${o.id}: ${o.title}`).join("\n");
  }
  const metadata = dropNulls({
    schemaVersion: 1,
    ...value,
    kind,
    standardOptions: options,
  }) as InterruptObject["metadata"];
  const out: InterruptObject = {
    id: String(value.inputId),
    reason: kind === "permission" ? "tool_call" : "input_required",
    message,
    responseSchema: responseSchemaFor(value),
    expiresAt: pending.expiresAt,
    metadata,
  };
  const toolCallId = shownToolCallId(pending);
  if (toolCallId) out.toolCallId = toolCallId;
  return out;
}

/**
 * Kinds of input the pipeline engine asks itself: their toolUseId names no tool
 * call of the model, so the client never saw a TOOL_CALL_START for it.
 */
const ENGINE_INPUT_KINDS = new Set(["candidate_selection", "pipeline_pause_confirmation"]);
/** Kinds a runtime may ask either way: a tool's question or its own wait (PendingInterrupt.toolCallShown). */
export const EITHER_WAY_KINDS = new Set([RESOURCE_SELECTION, DEPLOYMENT_CONFIRMATION]);

/** The tool call an input belongs to, if the client was shown that call (else undefined). */
export function shownToolCallId(
  pending: Pick<PendingInterrupt, "value" | "toolCallShown">,
): string | undefined {
  const { value } = pending;
  const kind = kindOf(value);
  if (ENGINE_INPUT_KINDS.has(kind)) return undefined;
  if (EITHER_WAY_KINDS.has(kind) && pending.toolCallShown !== true) return undefined;
  return typeof value.toolUseId === "string" && value.toolUseId ? value.toolUseId : undefined;
}

const ajv = new Ajv({ strict: false, allErrors: false });
const compiled = new Map<string, ValidateFunction>();

/** Checks a payload against an interrupt's response schema (compiled validators are cached). */
export function payloadMatches(schema: JsonObject, payload: unknown): boolean {
  const key = canonicalJson(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(key, validate);
  }
  return validate(payload);
}

export function isPermission(value: JsonObject): boolean {
  return kindOf(value) === "permission";
}

/** A cancelled answer to this kind cancels the A2A task (§5.8); a permission denies, a selection answers canceled. */
export function cancelCancelsTask(value: JsonObject): boolean {
  const kind = kindOf(value);
  return kind !== "permission" && kind !== RESOURCE_SELECTION;
}

/**
 * The payload checks a kind adds to its response schema, each naming the
 * resume entry's field (`field`, e.g. resume[0].payload). Throws RunFailure.
 */
export function checkStructuredPayload(value: JsonObject, entry: ResumeAnswer, field: string): boolean {
  const kind = kindOf(value);
  if (kind === RESOURCE_SELECTION) checkSelectionAnswer(value, entry, field);
  else if (kind === DEPLOYMENT_CONFIRMATION) {
    if (entry.status === "resolved") checkConfirmationAnswer(value, entry, field);
  } else return false;
  return true;
}

/**
 * The data part that answers an input on the A2A side. Permissions carry a
 * decision; selections and confirmations their structured answer; other kinds
 * the selected option or the free text.
 */
export function answerPart(
  value: JsonObject,
  entry: ResumeAnswer,
  taskId: string,
  contextId?: string,
): JsonObject {
  const kind = kindOf(value);
  if (kind === RESOURCE_SELECTION)
    return { data: selectionData(value, entry, taskId, contextId), mediaType: "application/json" };
  if (kind === DEPLOYMENT_CONFIRMATION)
    return { data: confirmationData(value, entry, taskId), mediaType: "application/json" };
  const base = {
    schemaVersion: 1,
    kind: kindOf(value),
    requestTaskId: taskId,
    inputId: String(value.inputId),
    toolUseId: typeof value.toolUseId === "string" ? value.toolUseId : "",
  };
  const payload = isObject(entry.payload) ? entry.payload : {};
  const data = isPermission(value)
    ? { ...base, decision: entry.status === "cancelled" ? "deny" : payload.decision }
    : (dropNulls({ ...base, selectedId: payload.selectedId, freeText: payload.freeText }) as JsonObject);
  return { data, mediaType: "application/json" };
}

/**
 * The adapter's own TOOL_CALL_RESULT text for an answered input whose tool
 * call the client saw: a question's answer, a selection's label; none for
 * permissions, confirmations and cancelled answers (A2A reports those tools).
 */
export function toolResultText(pending: PendingInterrupt, entry: ResumeAnswer): string | undefined {
  const kind = kindOf(pending.value);
  if (entry.status !== "resolved" || kind === "permission" || kind === DEPLOYMENT_CONFIRMATION)
    return undefined;
  if (!shownToolCallId(pending)) return undefined;
  return kind === RESOURCE_SELECTION ? selectionLabel(entry) : answerText(pending.value, entry.payload);
}

/** The answer text of a question, for the adapter's own TOOL_CALL_RESULT. */
export function answerText(value: JsonObject, payload: unknown): string {
  if (!isObject(payload)) return "";
  if (typeof payload.freeText === "string") return payload.freeText;
  if (typeof payload.selectedId === "string") {
    const options: unknown[] = Array.isArray(value.options) ? value.options : [];
    const match = options.find((o) => isObject(o) && String(o.id) === payload.selectedId);
    if (isObject(match)) {
      const label = [match.label, match.name, match.id].find((v) => typeof v === "string" && v !== "");
      if (typeof label === "string") return label;
    }
    return payload.selectedId;
  }
  return "";
}
