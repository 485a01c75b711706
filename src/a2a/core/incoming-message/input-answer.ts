// Human input over A2A: the envelope published with TASK_STATE_INPUT_REQUIRED
// (metadata.iac_code.input) and the answer a client sends back as a follow-up
// message on the same task carrying exactly one application/json data part.
import { toJson, type JsonObject } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { parseInputAnswer, pb } from "../../../contract/index.js";
import { DEFAULT_LANGUAGE, type Language } from "../../../i18n/index.js";
import type { DisplayParameter, InputAnswer, InputRequest, ResourceSelector } from "../../../runtime/seam.js";
import { invalidParams } from "../request/errors.js";
import {
  checkAgainstRequest,
  checkStructuredKeys,
  isStructuredKind,
  parseDeploymentConfirmation,
  parseResourceSelection,
} from "./structured-answers.js";

export const INPUT_SCHEMA_VERSION = 1;

/** The envelope clients see (a2a/input-request). */
export function inputEnvelope(request: InputRequest, taskId: string, contextId: string): JsonObject {
  const envelope: JsonObject = {
    schemaVersion: INPUT_SCHEMA_VERSION,
    kind: request.kind,
    requestTaskId: taskId,
    contextId,
    inputId: request.inputId,
    toolUseId: request.toolUseId,
    toolName: request.toolName,
    title: cap(request.title, 500),
    purpose: cap(request.purpose, 500),
    effect: request.effect,
    isReadOnly: request.isReadOnly,
    prompt: cap(request.prompt, 1000),
    safeSummary: cap(request.safeSummary, 1200),
    options: request.options.map((o) => ({ ...o })),
    language: request.language,
    required: true,
    responseSchema: request.responseSchema as JsonObject,
  };
  if (request.target !== undefined) envelope.target = cap(request.target, 500);
  if (request.allowFreeText !== undefined) envelope.allowFreeText = request.allowFreeText;
  if (request.freeTextPrompt !== undefined) envelope.freeTextPrompt = cap(request.freeTextPrompt, 500);
  if (request.selector !== undefined) envelope.selector = selectorEnvelope(request.selector);
  if (request.operation !== undefined) envelope.operation = request.operation;
  if (request.displayParameters !== undefined)
    envelope.displayParameters = request.displayParameters.slice(0, 50).map(displayParameter);
  if (request.deploymentSummary !== undefined) envelope.deploymentSummary = { ...request.deploymentSummary };
  return envelope;
}

const cap = (s: string, n: number) => (s.length > n ? s.slice(0, n) : s);

/** The selector as a2a/input-request bounds it; source and associationPropertyMetadata unchanged. */
function selectorEnvelope(selector: ResourceSelector): JsonObject {
  const out: JsonObject = { id: selector.id, source: { ...selector.source } };
  if (selector.parameter !== undefined) out.parameter = cap(selector.parameter, 200);
  if (selector.resourceType !== undefined) out.resourceType = cap(selector.resourceType, 200);
  if (selector.associationPropertyMetadata !== undefined)
    out.associationPropertyMetadata = { ...(selector.associationPropertyMetadata as JsonObject) };
  return out;
}

function displayParameter(p: DisplayParameter): JsonObject {
  const out: JsonObject = { name: cap(p.name, 200), value: cap(p.value, 1024) };
  if (p.label !== undefined) out.label = cap(p.label, 500);
  return out;
}

function dataObject(part: pb.Part): JsonObject | undefined {
  if (part.content.case !== "data") return undefined;
  const value = toJson(ValueSchema, part.content.value);
  return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
}

const ANSWER_KINDS = new Set([
  "permission",
  "ask_user_question",
  "candidate_selection",
  "pipeline_pause_confirmation",
  "cloud_resource_selection",
  "deployment_confirmation",
]);
type ChoiceKind = "ask_user_question" | "candidate_selection" | "pipeline_pause_confirmation";

/** True when the message is meant as an answer (some JSON data part with an answer kind). */
export function looksLikeAnswer(message: pb.Message): boolean {
  return message.parts.some((part) => {
    const mediaType = part.mediaType.trim().toLowerCase();
    const data = dataObject(part);
    return (
      (mediaType === "application/json" || mediaType === "") &&
      !!data &&
      typeof data.kind === "string" &&
      ANSWER_KINDS.has(data.kind)
    );
  });
}

export interface ParsedAnswer {
  requestTaskId: string;
  toolUseId: string;
  answer: InputAnswer;
}

const PERMISSION_KEYS = ["decision", "inputId", "kind", "requestTaskId", "schemaVersion", "toolUseId"];
const QUESTION_KEYS = new Set([
  "schemaVersion",
  "kind",
  "requestTaskId",
  "inputId",
  "toolUseId",
  "selectedId",
  "freeText",
]);

const fieldsMismatch = () =>
  invalidParams("Permission response payload fields do not match schemaVersion 1.");
const nonEmptyString = (v: unknown): v is string => typeof v === "string" && v.trim() !== "";

/** The a2a/input-answer contract decides what the precise checks below do not spell out. */
function checkContract(data: JsonObject): void {
  if (!parseInputAnswer(data).ok) throw fieldsMismatch();
}

export interface AnswerChecks {
  /** The language of the rejection texts (the request's). */
  language?: Language;
  /** The request the task shows (metadata.iac_code.input), when it waits. */
  request?: JsonObject;
}

/** Validates an answer message; every failure is InvalidParams with a precise text. */
export function parseAnswer(
  message: pb.Message,
  taskId: string,
  contextId: string,
  checks: AnswerChecks = {},
): ParsedAnswer {
  const language = checks.language ?? DEFAULT_LANGUAGE;
  if (message.role !== pb.Role.USER) throw invalidParams("Permission responses must use ROLE_USER.");
  const only = message.parts.length === 1 ? message.parts[0] : undefined;
  const data = only ? dataObject(only) : undefined;
  const mediaType = only?.mediaType.trim().toLowerCase();
  if (!only || !data || (mediaType !== "application/json" && mediaType !== "")) {
    throw invalidParams("Permission responses must contain exactly one application/json DataPart.");
  }
  const kind = data.kind;
  if (kind === "permission") {
    if (Object.keys(data).sort().join(",") !== PERMISSION_KEYS.join(",")) {
      throw fieldsMismatch();
    }
  } else if (isStructuredKind(kind)) {
    checkStructuredKeys(data, kind, language);
  } else if (Object.keys(data).some((k) => !QUESTION_KEYS.has(k))) {
    throw fieldsMismatch();
  }
  if (data.schemaVersion !== INPUT_SCHEMA_VERSION)
    throw invalidParams("Permission response schemaVersion must be 1.");
  if (
    !nonEmptyString(taskId) ||
    !nonEmptyString(contextId) ||
    !nonEmptyString(data.requestTaskId) ||
    !nonEmptyString(data.inputId) ||
    !nonEmptyString(data.toolUseId)
  ) {
    throw invalidParams("Permission response correlation fields are required.");
  }
  if (data.requestTaskId !== taskId)
    throw invalidParams("Permission response taskId does not match requestTaskId.");
  if (kind === "permission") {
    const decision = data.decision;
    if (decision !== "allow_once" && decision !== "deny" && decision !== "allow_always") {
      throw invalidParams("Permission decision must be allow_once, allow_always or deny.");
    }
    checkContract(data);
    return {
      requestTaskId: data.requestTaskId,
      toolUseId: data.toolUseId,
      answer: { kind: "permission", inputId: data.inputId, decision },
    };
  }
  if (isStructuredKind(kind)) {
    const answer =
      kind === "cloud_resource_selection"
        ? parseResourceSelection(data, contextId, language)
        : parseDeploymentConfirmation(data, language);
    checkAgainstRequest(data, answer, checks.request, language);
    checkContract(data);
    return { requestTaskId: data.requestTaskId, toolUseId: data.toolUseId, answer };
  }
  if (typeof kind !== "string" || !ANSWER_KINDS.has(kind)) {
    throw fieldsMismatch();
  }
  const answer: InputAnswer = { kind: kind as ChoiceKind, inputId: data.inputId };
  for (const key of ["selectedId", "freeText"] as const) {
    const value = data[key];
    if (value === undefined) continue;
    if (typeof value !== "string" || value === "") {
      throw invalidParams(`Question answer ${key} must be a non-empty string.`);
    }
    answer[key] = value;
  }
  if (!answer.selectedId && !answer.freeText)
    throw invalidParams("Question answer needs selectedId or freeText.");
  checkContract(data);
  return { requestTaskId: data.requestTaskId, toolUseId: data.toolUseId, answer };
}

/** The refusals of an answer that does not fit the task's wait (the text's prefix names the reason). */
export const answerRefusal = {
  mismatch: () => invalidParams("input_response_mismatch: permission correlation does not match."),
  inactive: () => invalidParams("permission_resume_invalid: pending permission is not active."),
  unavailable: () => invalidParams("permission_resume_invalid: permission wait point is unavailable."),
};

/** The answer matches the pending request (same input, tool use and kind)? */
export function matchesRequest(
  parsed: ParsedAnswer,
  request: { inputId: string; toolUseId: string; kind: string },
): boolean {
  return (
    parsed.answer.inputId === request.inputId &&
    parsed.toolUseId === request.toolUseId &&
    parsed.answer.kind === request.kind
  );
}
