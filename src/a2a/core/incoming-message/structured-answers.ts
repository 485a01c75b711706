// The two structured answers of a2a/input-answer: a cloud resource selection
// (status selected with the chosen value, or canceled) and a deployment
// confirmation (an action, with template parameter overrides). Every rejection
// is InvalidParams naming the data part's field and why, in the caller's
// language; checkAgainstRequest then holds the answer to what the task asked.
import type { JsonObject } from "@bufbuild/protobuf";
import { t, type Language } from "../../../i18n/index.js";
import type { DeploymentConfirmationAnswer, ResourceSelectionAnswer } from "../../../contract/index.js";
import type { InputAnswer } from "../../../runtime/seam.js";
import { invalidParams } from "../request/errors.js";

/** Where the answer sits in the message: field names in errors start here. */
const DATA = "message.parts[0].data";

/** Every field of each answer in a2a/input-answer (the generated types keep these lists complete). */
const RESOURCE_FIELDS: Record<keyof ResourceSelectionAnswer, true> = {
  schemaVersion: true,
  kind: true,
  requestTaskId: true,
  contextId: true,
  inputId: true,
  toolUseId: true,
  status: true,
  selectorId: true,
  value: true,
  label: true,
  source: true,
  optionsEmpty: true,
};
const CONFIRMATION_FIELDS: Record<keyof DeploymentConfirmationAnswer, true> = {
  schemaVersion: true,
  kind: true,
  requestTaskId: true,
  inputId: true,
  toolUseId: true,
  action: true,
  parameter_overrides: true,
};
const RESOURCE_KEYS = new Set(Object.keys(RESOURCE_FIELDS));
const CONFIRMATION_KEYS = new Set(Object.keys(CONFIRMATION_FIELDS));

export const CONFIRMATION_ACTIONS: readonly DeploymentConfirmationAnswer["action"][] = [
  "confirm",
  "adjust",
  "reselect",
  "cancel",
];
/** Bounds of a2a/input-answer: value and label lengths, overrides' count and name length. */
const VALUE_MAX = 1024;
const SELECTOR_ID_MAX = 100;
const OVERRIDES_MAX = 50;
const OVERRIDE_NAME_MAX = 200;

type Kind = "cloud_resource_selection" | "deployment_confirmation";
type StructuredAnswer = Exclude<InputAnswer, { kind: "permission" }> & { kind: Kind };

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fail(language: Language, key: string, params: Record<string, string>): never {
  throw invalidParams(t(language, key, params), { field: params.field });
}

export function isStructuredKind(kind: unknown): kind is Kind {
  return kind === "cloud_resource_selection" || kind === "deployment_confirmation";
}

/** Unknown keys first: a misspelt field is named before what it left missing. */
export function checkStructuredKeys(data: JsonObject, kind: Kind, language: Language): void {
  const allowed = kind === "cloud_resource_selection" ? RESOURCE_KEYS : CONFIRMATION_KEYS;
  const unknown = Object.keys(data)
    .filter((k) => !allowed.has(k))
    .sort();
  if (unknown.length) fail(language, "a2a.answer.unknownField", { field: `${DATA}.${unknown[0]}`, kind });
}

function checkString(data: JsonObject, key: string, max: number, language: Language): string {
  const value = data[key];
  if (typeof value !== "string" || value.trim() === "" || value.length > max)
    fail(language, "a2a.answer.fieldString", { field: `${DATA}.${key}`, limit: String(max) });
  return value;
}

/** A cloud_resource_selection answer: the seam's value/label, or cancelled (with optionsEmpty). */
export function parseResourceSelection(
  data: JsonObject,
  contextId: string,
  language: Language,
): StructuredAnswer {
  const kind = "cloud_resource_selection";
  checkStructuredKeys(data, kind, language);
  if (data.contextId !== undefined && data.contextId !== contextId)
    fail(language, "a2a.answer.contextMismatch", { field: `${DATA}.contextId` });
  const status = data.status;
  if (status !== "selected" && status !== "canceled")
    fail(language, "a2a.answer.fieldEnum", { field: `${DATA}.status`, allowed: "selected, canceled" });
  if (data.source !== undefined && data.source !== null && !isPlainObject(data.source))
    fail(language, "a2a.answer.sourceType", { field: `${DATA}.source` });
  if (data.selectorId !== undefined) checkString(data, "selectorId", SELECTOR_ID_MAX, language);
  const inputId = data.inputId as string;
  if (status === "canceled") {
    for (const key of ["value", "label"])
      if (data[key] !== undefined) fail(language, "a2a.answer.canceledForbids", { field: `${DATA}.${key}` });
    const answer: StructuredAnswer = { kind, inputId, cancelled: true };
    if (data.optionsEmpty !== undefined) {
      if (typeof data.optionsEmpty !== "boolean")
        fail(language, "a2a.answer.fieldBoolean", { field: `${DATA}.optionsEmpty` });
      answer.optionsEmpty = data.optionsEmpty;
    }
    return answer;
  }
  for (const key of ["selectorId", "value"])
    if (data[key] === undefined) fail(language, "a2a.answer.selectedNeeds", { field: `${DATA}.${key}` });
  const answer: StructuredAnswer = { kind, inputId, value: checkString(data, "value", VALUE_MAX, language) };
  if (data.label !== undefined) {
    if (typeof data.label !== "string" || data.label.length > VALUE_MAX)
      fail(language, "a2a.answer.fieldTooLong", { field: `${DATA}.label`, limit: String(VALUE_MAX) });
    answer.label = data.label;
  }
  return answer;
}

/** A deployment_confirmation answer: the action and the parameters the user changed. */
export function parseDeploymentConfirmation(data: JsonObject, language: Language): StructuredAnswer {
  const kind = "deployment_confirmation";
  checkStructuredKeys(data, kind, language);
  const action = data.action;
  if (typeof action !== "string" || !(CONFIRMATION_ACTIONS as readonly string[]).includes(action))
    fail(language, "a2a.answer.fieldEnum", {
      field: `${DATA}.action`,
      allowed: CONFIRMATION_ACTIONS.join(", "),
    });
  const answer: StructuredAnswer = {
    kind,
    inputId: data.inputId as string,
    action: action as DeploymentConfirmationAnswer["action"],
  };
  if (data.parameter_overrides !== undefined)
    answer.parameterOverrides = parseOverrides(data.parameter_overrides, language);
  return answer;
}

function parseOverrides(raw: unknown, language: Language): Record<string, string | number | boolean> {
  const field = `${DATA}.parameter_overrides`;
  if (!isPlainObject(raw)) fail(language, "a2a.answer.overridesType", { field });
  const entries = Object.entries(raw);
  if (entries.length > OVERRIDES_MAX)
    fail(language, "a2a.answer.overridesTooMany", { field, limit: String(OVERRIDES_MAX) });
  const overrides: Record<string, string | number | boolean> = {};
  for (const [name, value] of entries) {
    if (name.length === 0 || name.length > OVERRIDE_NAME_MAX)
      fail(language, "a2a.answer.overrideName", { field, limit: String(OVERRIDE_NAME_MAX) });
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean")
      fail(language, "a2a.answer.overrideValue", { field: `${field}.${name}` });
    overrides[name] = value;
  }
  return overrides;
}

/**
 * The answer against the request the task shows (its metadata.iac_code.input),
 * when the answer is for that request: the selector answered is the one asked
 * for, and the action is one the confirmation's options offer.
 */
export function checkAgainstRequest(
  data: JsonObject,
  answer: StructuredAnswer,
  request: JsonObject | undefined,
  language: Language,
): void {
  if (!request || request.inputId !== answer.inputId || request.kind !== answer.kind) return;
  if (answer.kind === "cloud_resource_selection") {
    const asked = isPlainObject(request.selector) ? request.selector.id : undefined;
    const given = data.selectorId;
    if (typeof asked === "string" && typeof given === "string" && given !== asked) {
      fail(language, "a2a.answer.selectorMismatch", {
        field: `${DATA}.selectorId`,
        value: given,
        expected: asked,
      });
    }
    return;
  }
  const offered = Array.isArray(request.options)
    ? [...new Set(request.options.map((o) => (isPlainObject(o) ? o.action : undefined)))].filter(
        (a): a is string => typeof a === "string",
      )
    : [];
  if (answer.action && !offered.includes(answer.action)) {
    fail(language, "a2a.answer.actionNotOffered", {
      field: `${DATA}.action`,
      value: answer.action,
      allowed: offered.sort().join(", "),
    });
  }
}
