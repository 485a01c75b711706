// Resume answers to the two structured interrupts (agui-iaccode.md §5.6): a
// cloud resource selection (value or freeText, checked against the selector's
// profile; or cancelled, optionally saying there was nothing to choose) and a
// deployment confirmation (an option's id or an action, with template
// parameter overrides). Every refusal is RESUME_PAYLOAD_INVALID naming the
// resume entry's field and why, before anything is sent; the A2A data part is
// built from the checked answer, never from the option's localised label.
import { isObject, type JsonObject } from "../upstream/a2a-items.js";
import { MSG, RunFailure } from "../errors.js";
import type { ResumeAnswer } from "../threads/execution.js";
import { SELECTOR_PROFILES, selectorProfile } from "./selector-profiles.js";

export const RESOURCE_SELECTION = "cloud_resource_selection";
export const DEPLOYMENT_CONFIRMATION = "deployment_confirmation";
export const CONFIRMATION_ACTIONS = ["confirm", "adjust", "reselect", "cancel"];

/** Bounds of the A2A answer (a2a/input-answer): value and label, overrides' count and names. */
const VALUE_MAX = 1024;
const OVERRIDES_MAX = 50;
const OVERRIDE_NAME_MAX = 200;
/** How much of a refused value a message repeats. */
const ECHO_MAX = 100;

const echo = (value: string): string => (value.length > ECHO_MAX ? `${value.slice(0, ECHO_MAX)}…` : value);

function invalid(key: (typeof MSG)[keyof typeof MSG], params: Record<string, string>): never {
  throw new RunFailure("RESUME_PAYLOAD_INVALID", key, params);
}

/** The payload as an object whose keys are all allowed; `field` names it in messages. */
function payloadObject(payload: unknown, field: string, allowed: string[]): JsonObject {
  if (!isObject(payload)) invalid(MSG.payloadNotObject, { field });
  const unknown = Object.keys(payload)
    .filter((k) => !allowed.includes(k))
    .sort();
  if (unknown.length) invalid(MSG.payloadUnknownField, { field: `${field}.${unknown[0]}` });
  return payload;
}

function nonEmptyString(payload: JsonObject, key: string, field: string): string {
  const value = payload[key];
  if (typeof value !== "string" || value.trim() === "")
    invalid(MSG.payloadNotString, { field: `${field}.${key}` });
  return value;
}

/** The selector of a pending selection, as A2A must have sent it (else the answer cannot be built). */
function selectorOf(value: JsonObject): { id: string; source: JsonObject | null } {
  const selector = isObject(value.selector) ? value.selector : undefined;
  const source = selector?.source ?? null;
  if (
    !selector ||
    typeof selector.id !== "string" ||
    !selector.id ||
    typeof value.toolUseId !== "string" ||
    !value.toolUseId ||
    (source !== null && !isObject(source))
  ) {
    throw new RunFailure("A2A_PROTOCOL_ERROR", MSG.interruptNotAccepted);
  }
  return { id: selector.id, source };
}

/** The chosen value and its label (default, also for a blank one: the value) of a resolved selection. */
function chosen(payload: JsonObject): { value: string; label: string } {
  const value = typeof payload.value === "string" ? payload.value : (payload.freeText as string);
  const label = typeof payload.label === "string" && payload.label.trim() !== "" ? payload.label : value;
  return { value, label };
}

/**
 * A selection answer fit to send: the selector and tool use named by A2A
 * (else A2A_PROTOCOL_ERROR), and the payload of `field` (resume[i].payload).
 */
export function checkSelectionAnswer(value: JsonObject, entry: ResumeAnswer, field: string): void {
  const selector = selectorOf(value);
  if (entry.status === "cancelled") {
    const p = entry.payload;
    if (p === undefined || p === null) return;
    const ok =
      isObject(p) &&
      Object.keys(p).every((k) => k === "optionsEmpty") &&
      (p.optionsEmpty === undefined || typeof p.optionsEmpty === "boolean");
    if (!ok) invalid(MSG.selectorCancelPayload, { field });
    return;
  }
  const p = payloadObject(entry.payload, field, ["value", "label", "freeText"]);
  if ((p.value === undefined) === (p.freeText === undefined))
    invalid(MSG.payloadOneOf, { field, fields: "value, freeText" });
  const key = p.value !== undefined ? "value" : "freeText";
  const given = nonEmptyString(p, key, field);
  if (p.label !== undefined) {
    if (key === "freeText") invalid(MSG.labelWithoutValue, { field: `${field}.label` });
    if (typeof p.label !== "string") invalid(MSG.payloadNotText, { field: `${field}.label` });
  }
  const { label } = chosen(p);
  if (given.length > VALUE_MAX)
    invalid(MSG.payloadTooLong, { field: `${field}.${key}`, limit: String(VALUE_MAX) });
  if (label.length > VALUE_MAX)
    invalid(MSG.payloadTooLong, { field: `${field}.label`, limit: String(VALUE_MAX) });
  const profile = selectorProfile(selector.id);
  if (!profile)
    invalid(MSG.selectorUnknown, { selector: selector.id, known: Object.keys(SELECTOR_PROFILES).join(", ") });
  if (!profile.pattern.test(given)) {
    invalid(MSG.selectorValueRejected, {
      field: `${field}.${key}`,
      value: echo(given),
      selector: selector.id,
      shape: profile.shape,
    });
  }
}

/** The A2A answer of a checked selection: status selected (value, label, the request's source) or canceled. */
export function selectionData(
  value: JsonObject,
  entry: ResumeAnswer,
  taskId: string,
  contextId?: string,
): JsonObject {
  const selector = selectorOf(value);
  const base = {
    schemaVersion: 1,
    kind: RESOURCE_SELECTION,
    requestTaskId: taskId,
    ...(contextId ? { contextId } : {}),
    inputId: String(value.inputId),
    toolUseId: String(value.toolUseId),
  };
  if (entry.status === "cancelled") {
    const optionsEmpty = isObject(entry.payload) ? entry.payload.optionsEmpty : undefined;
    return { ...base, status: "canceled", ...(typeof optionsEmpty === "boolean" ? { optionsEmpty } : {}) };
  }
  const { value: chosenValue, label } = chosen(entry.payload as JsonObject);
  return {
    ...base,
    status: "selected",
    selectorId: selector.id,
    value: chosenValue,
    label,
    source: selector.source,
  };
}

/** The label shown as the selector tool's result (the adapter's own TOOL_CALL_RESULT). */
export function selectionLabel(entry: ResumeAnswer): string {
  return chosen(entry.payload as JsonObject).label;
}

/** A confirmation's options as [id, action] (projection checked them: ids unique, actions known). */
function confirmationOptions(value: JsonObject): Array<{ id: string; action: string }> {
  const options: unknown[] = Array.isArray(value.options) ? value.options : [];
  return options.filter(isObject).map((o) => ({ id: String(o.id), action: String(o.action) }));
}

/** The actions a confirmation offers, sorted and distinct. */
export function offeredActions(value: JsonObject): string[] {
  return [...new Set(confirmationOptions(value).map((o) => o.action))].sort();
}

/**
 * Why a confirmation's options cannot be offered (agui-iaccode.md §5.3): the
 * index of the first option without a unique, non-blank id of at most 200
 * characters and a known action; -1 when there are none; undefined when fine.
 */
export function confirmationOptionsProblem(value: JsonObject): number | undefined {
  const options: unknown[] = Array.isArray(value.options) ? value.options : [];
  if (options.length === 0) return -1;
  const seen = new Set<string>();
  for (const [index, option] of options.entries()) {
    const id = isObject(option) ? option.id : undefined;
    const ok =
      isObject(option) &&
      typeof id === "string" &&
      id.trim() !== "" &&
      id.length <= 200 &&
      !seen.has(id) &&
      typeof option.action === "string" &&
      CONFIRMATION_ACTIONS.includes(option.action);
    if (!ok) return index;
    seen.add(id);
  }
  return undefined;
}

/** The parameter overrides of an answer: null values dropped, names trimmed; refused when unfit. */
function overridesOf(raw: unknown, field: string): Record<string, string | number | boolean> {
  if (raw === undefined) return {};
  if (!isObject(raw)) invalid(MSG.overridesNotObject, { field });
  const out: Record<string, string | number | boolean> = {};
  for (const [key, v] of Object.entries(raw)) {
    if (v === null) continue;
    if (typeof v !== "string" && typeof v !== "boolean" && !(typeof v === "number" && Number.isFinite(v)))
      invalid(MSG.overrideValue, { field: `${field}.${key}` });
    const name = key.trim();
    if (name === "" || name.length > OVERRIDE_NAME_MAX || Object.hasOwn(out, name))
      invalid(MSG.overrideName, { field: `${field}.${key}`, limit: String(OVERRIDE_NAME_MAX) });
    out[name] = v;
  }
  if (Object.keys(out).length > OVERRIDES_MAX)
    invalid(MSG.overridesTooMany, { field, limit: String(OVERRIDES_MAX) });
  return out;
}

/** The action an answer takes: its own, or the one of the option it selects; refused when not offered. */
function actionOf(value: JsonObject, payload: JsonObject, field: string): string {
  const options = confirmationOptions(value);
  if (payload.selectedId !== undefined) {
    const id = payload.selectedId;
    const option = options.find((o) => o.id === id);
    if (typeof id !== "string" || !option) {
      invalid(MSG.confirmationOption, {
        field: `${field}.selectedId`,
        value: echo(typeof id === "string" ? id : (JSON.stringify(id) ?? "")),
        allowed: options.map((o) => o.id).join(", "),
      });
    }
    return option.action;
  }
  const action = payload.action;
  const offered = offeredActions(value);
  if (typeof action !== "string" || !offered.includes(action)) {
    invalid(MSG.confirmationAction, {
      field: `${field}.action`,
      value: echo(typeof action === "string" ? action : (JSON.stringify(action) ?? "")),
      allowed: offered.join(", "),
    });
  }
  return action;
}

/** A resolved confirmation's payload of `field`: one of selectedId or action, overrides that fit. */
export function checkConfirmationAnswer(value: JsonObject, entry: ResumeAnswer, field: string): void {
  const p = payloadObject(entry.payload, field, ["selectedId", "action", "parameter_overrides"]);
  if ((p.selectedId === undefined) === (p.action === undefined))
    invalid(MSG.payloadOneOf, { field, fields: "selectedId, action" });
  actionOf(value, p, field);
  overridesOf(p.parameter_overrides, `${field}.parameter_overrides`);
}

/** The A2A answer of a checked confirmation: the action (never the option's label) and the overrides. */
export function confirmationData(value: JsonObject, entry: ResumeAnswer, taskId: string): JsonObject {
  const p = entry.payload as JsonObject;
  return {
    schemaVersion: 1,
    kind: DEPLOYMENT_CONFIRMATION,
    requestTaskId: taskId,
    inputId: String(value.inputId),
    toolUseId: typeof value.toolUseId === "string" ? value.toolUseId : "",
    action: actionOf(value, p, "payload"),
    parameter_overrides: overridesOf(p.parameter_overrides, "payload.parameter_overrides"),
  };
}
