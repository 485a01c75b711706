// The answers of the two structured waits a deployment has: the cloud
// resource selection (a resource id the selector's profile accepts, chosen
// among the options or typed, or none) and the deployment confirmation (one
// of its options' actions, with parameter overrides that must name template
// parameters). Both the answer check (answerInput: a refusal leaves the wait
// open) and the tools that asked read the answer through these functions.
import { selectorProfile } from "../cloud/resource-selectors.js";
import { InvalidInputAnswerError } from "../errors.js";
import type { ConfirmationAction, InputAnswer, InputRequest } from "../seam.js";

type ChoiceAnswer = Exclude<InputAnswer, { kind: "permission" }>;

const LABEL_MAX = 1024;
const OVERRIDES_MAX = 50;

export type Selection =
  { status: "selected"; value: string; label: string } | { status: "canceled"; optionsEmpty?: boolean };

/** The resource an answer chooses; throws InvalidInputAnswerError (naming the field) when it cannot be used. */
export function resolveSelection(request: InputRequest, answer: ChoiceAnswer): Selection {
  if (answer.cancelled) {
    if (answer.optionsEmpty !== undefined && typeof answer.optionsEmpty !== "boolean")
      throw new InvalidInputAnswerError("optionsEmpty must be true or false.");
    return {
      status: "canceled",
      ...(answer.optionsEmpty !== undefined ? { optionsEmpty: answer.optionsEmpty } : {}),
    };
  }
  const offered =
    answer.selectedId !== undefined ? request.options.find((o) => o.id === answer.selectedId) : undefined;
  if (answer.selectedId !== undefined && !offered)
    throw new InvalidInputAnswerError(
      `selectedId: ${answer.selectedId} is not one of the options of input ${request.inputId}.`,
    );
  const value = (answer.value ?? offered?.id ?? answer.freeText ?? "").trim();
  if (!value)
    throw new InvalidInputAnswerError(
      `Input ${request.inputId} needs value (the chosen resource's id), or cancelled to choose none.`,
    );
  const profile = request.selector ? selectorProfile(request.selector.id) : undefined;
  if (!profile) throw new InvalidInputAnswerError(`Input ${request.inputId} has no known selector profile.`);
  const refusal = profile.refusal(value);
  if (refusal) throw new InvalidInputAnswerError(`value: ${refusal}`);
  const label = answer.label ?? request.options.find((o) => o.id === value)?.label ?? value;
  if (label.length > LABEL_MAX)
    throw new InvalidInputAnswerError(`label is longer than ${LABEL_MAX} characters.`);
  return { status: "selected", value, label };
}

export interface Confirmation {
  action: ConfirmationAction;
  overrides: Record<string, string | number | boolean>;
}

const ACTIONS = new Set<ConfirmationAction>(["confirm", "adjust", "reselect", "cancel"]);

/** A typed answer: an option's id, action or label, or JSON {action, parameter_overrides}. */
function fromText(request: InputRequest, text: string): { action?: ConfirmationAction; overrides?: unknown } {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    try {
      const json = JSON.parse(trimmed) as Record<string, unknown>;
      return {
        ...(typeof json.action === "string" ? { action: json.action as ConfirmationAction } : {}),
        overrides: json.parameter_overrides ?? json.parameterOverrides,
      };
    } catch {
      return {};
    }
  }
  const lower = trimmed.toLowerCase();
  const option = request.options.find(
    (o) => o.id.toLowerCase() === lower || o.action === lower || o.label.toLowerCase() === lower,
  );
  return option?.action ? { action: option.action } : {};
}

/** The action an answer takes and the overrides it brings; throws InvalidInputAnswerError when it cannot be used. */
export function resolveConfirmation(request: InputRequest, answer: ChoiceAnswer): Confirmation {
  if (answer.cancelled) return { action: "cancel", overrides: {} };
  const offered = new Set(request.options.flatMap((o) => (o.action ? [o.action] : [])));
  let action = answer.action;
  let overrides: unknown = answer.parameterOverrides;
  if (action === undefined && answer.selectedId !== undefined) {
    const option = request.options.find((o) => o.id === answer.selectedId);
    if (!option)
      throw new InvalidInputAnswerError(
        `selectedId: ${answer.selectedId} is not one of the options of input ${request.inputId}.`,
      );
    action = option.action;
  }
  if (action === undefined && answer.freeText !== undefined) {
    const typed = fromText(request, answer.freeText);
    action = typed.action;
    overrides ??= typed.overrides;
  }
  if (action === undefined)
    throw new InvalidInputAnswerError(
      `Input ${request.inputId} needs action (one of ${[...offered].join(", ")}).`,
    );
  if (!ACTIONS.has(action) || !offered.has(action))
    throw new InvalidInputAnswerError(`action: ${String(action)} is not one of ${[...offered].join(", ")}.`);
  const checked = checkOverrides(request, overrides);
  if (action === "adjust" && Object.keys(checked).length === 0)
    throw new InvalidInputAnswerError(
      "action adjust needs parameterOverrides naming at least one parameter to change.",
    );
  return { action, overrides: checked };
}

/** Overrides must name the template's parameters (those the confirmation displays), with plain values. */
function checkOverrides(
  request: InputRequest,
  overrides: unknown,
): Record<string, string | number | boolean> {
  if (overrides === undefined || overrides === null) return {};
  if (typeof overrides !== "object" || Array.isArray(overrides))
    throw new InvalidInputAnswerError("parameterOverrides must be an object of parameter name to value.");
  const names = (request.displayParameters ?? []).map((p) => p.name);
  const out: Record<string, string | number | boolean> = {};
  const entries = Object.entries(overrides as Record<string, unknown>);
  if (entries.length > OVERRIDES_MAX)
    throw new InvalidInputAnswerError(`parameterOverrides has more than ${OVERRIDES_MAX} entries.`);
  for (const [rawKey, value] of entries) {
    const key = rawKey.trim();
    if (value === null) continue;
    if (!names.includes(key))
      throw new InvalidInputAnswerError(
        `parameterOverrides.${key}: the template has no parameter ${key} (its parameters: ${names.join(", ") || "none"}).`,
      );
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean")
      throw new InvalidInputAnswerError(`parameterOverrides.${key} must be a string, a number or a boolean.`);
    out[key] = value;
  }
  return out;
}
