// Builds the InputRequests the surfaces show (permission prompts and
// ask_user_question) and checks answers against them. Display strings are
// localised, redacted and bounded here, once, for every surface.
import { t, type Language } from "../../i18n/index.js";
import { InvalidInputAnswerError, redactSecrets } from "../errors.js";
import { askInputId, newPermissionInputId } from "../ids.js";
import { resolveConfirmation, resolveSelection } from "./choice-answers.js";
import type { InputAnswer, InputOption, InputRequest } from "../seam.js";
import type { ToolDescription } from "../tools/types.js";

export const PERMISSION_DECISIONS = ["allow_once", "allow_always", "deny"] as const;

const DISPLAY_MAX = 500;
const SUMMARY_MAX = 1200;
/** Argument names whose values are shown in summaries (paths, names, actions); others are shape-only. */
const SHOWN_FIELDS = new Set([
  "path",
  "pattern",
  "glob",
  "action",
  "stack_name",
  "stack_id",
  "region_id",
  "template_path",
  "offset",
  "limit",
  "replace_all",
  "ignore_case",
]);

function cap(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function shape(value: unknown, key: string | undefined, depth: number): unknown {
  if (value === null || typeof value === "boolean" || typeof value === "number") return value;
  if (typeof value === "string") {
    return key !== undefined && SHOWN_FIELDS.has(key)
      ? cap(redactSecrets(value), 200)
      : { type: "string", length: value.length };
  }
  if (Array.isArray(value)) return { type: "array", length: value.length };
  if (typeof value === "object") {
    if (depth >= 3) return { type: "object" };
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>).slice(0, 20))
      out[k] = shape(v, k, depth + 1);
    return out;
  }
  return { type: typeof value };
}

/** "<tool>: <shape JSON>", redacted and at most 1200 characters. */
export function safeSummary(toolName: string, input: Record<string, unknown>): string {
  return cap(`${toolName}: ${JSON.stringify(shape(input, undefined, 0))}`, SUMMARY_MAX);
}

export function permissionOptions(lang: Language): InputOption[] {
  return [
    { id: "allow_once", label: t(lang, "runtime.permission.option.allowOnce") },
    { id: "allow_always", label: t(lang, "runtime.permission.option.allowAlways") },
    { id: "deny", label: t(lang, "runtime.permission.option.deny") },
  ];
}

export function permissionRequest(args: {
  toolUseId: string;
  toolName: string;
  input: Record<string, unknown>;
  description: ToolDescription;
  isReadOnly: boolean;
  lang: Language;
}): InputRequest {
  const { description, lang } = args;
  const title = cap(redactSecrets(description.title), DISPLAY_MAX);
  return {
    inputId: newPermissionInputId(),
    kind: "permission",
    toolUseId: args.toolUseId,
    toolName: args.toolName,
    title,
    purpose: cap(redactSecrets(description.purpose), DISPLAY_MAX),
    effect: cap(description.effect, 80),
    ...(description.target !== undefined
      ? { target: cap(redactSecrets(description.target), DISPLAY_MAX) }
      : {}),
    isReadOnly: args.isReadOnly,
    prompt: cap(t(lang, "runtime.permission.prompt", { title }), DISPLAY_MAX),
    safeSummary: safeSummary(args.toolName, args.input),
    options: permissionOptions(lang),
    responseSchema: {
      type: "object",
      properties: { decision: { type: "string", enum: [...PERMISSION_DECISIONS] } },
      required: ["decision"],
      additionalProperties: false,
    },
    language: lang,
  };
}

export interface QuestionOption {
  id: string;
  label: string;
  description?: string;
}

export function questionRequest(args: {
  toolUseId: string;
  question: string;
  options: QuestionOption[];
  allowFreeText: boolean;
  freeTextPrompt?: string;
  lang: Language;
}): InputRequest {
  const { lang } = args;
  const question = cap(redactSecrets(args.question), 1000);
  const options = args.options.slice(0, 50).map((o) => ({
    id: cap(o.id, 200),
    label: cap(redactSecrets(o.label), DISPLAY_MAX),
    ...(o.description !== undefined ? { description: cap(redactSecrets(o.description), DISPLAY_MAX) } : {}),
  }));
  const freeTextPrompt = args.allowFreeText
    ? cap(args.freeTextPrompt ?? t(lang, "runtime.question.freeTextPrompt"), DISPLAY_MAX)
    : undefined;
  const selected = { type: "string", enum: options.map((o) => o.id) };
  return {
    inputId: askInputId(args.toolUseId),
    kind: "ask_user_question",
    toolUseId: args.toolUseId,
    toolName: "ask_user_question",
    title: t(lang, "runtime.question.title"),
    purpose: question,
    effect: "read",
    isReadOnly: true,
    prompt: question,
    safeSummary: question,
    options,
    allowFreeText: args.allowFreeText,
    ...(freeTextPrompt !== undefined ? { freeTextPrompt } : {}),
    responseSchema: args.allowFreeText
      ? {
          type: "object",
          properties: { selectedId: selected, freeText: { type: "string", minLength: 1 } },
          minProperties: 1,
          additionalProperties: false,
        }
      : {
          type: "object",
          properties: { selectedId: selected },
          required: ["selectedId"],
          additionalProperties: false,
        },
    language: lang,
  };
}

/** Throws InvalidInputAnswerError when the answer does not fit the request. */
export function checkAnswer(request: InputRequest, answer: InputAnswer): void {
  if (answer.kind !== request.kind) {
    throw new InvalidInputAnswerError(`Input ${request.inputId} expects a ${request.kind} answer.`);
  }
  if (answer.kind === "permission") {
    if (!(PERMISSION_DECISIONS as readonly string[]).includes(answer.decision)) {
      throw new InvalidInputAnswerError("A permission decision must be allow_once, allow_always or deny.");
    }
    return;
  }
  if (request.kind === "cloud_resource_selection") {
    resolveSelection(request, answer);
    return;
  }
  if (request.kind === "deployment_confirmation") {
    resolveConfirmation(request, answer);
    return;
  }
  if (answer.cancelled) return;
  if (answer.selectedId !== undefined && !request.options.some((o) => o.id === answer.selectedId)) {
    throw new InvalidInputAnswerError(`Unknown option ${answer.selectedId} for input ${request.inputId}.`);
  }
  if (answer.freeText !== undefined && !request.allowFreeText) {
    throw new InvalidInputAnswerError(`Input ${request.inputId} does not accept free text.`);
  }
  if (answer.selectedId === undefined && (answer.freeText === undefined || answer.freeText.trim() === "")) {
    throw new InvalidInputAnswerError(`Input ${request.inputId} needs a selected option or free text.`);
  }
}
