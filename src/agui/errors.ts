// The adapter's error model. Every failure carries a seed error code, the HTTP
// status it gets when answered before SSE starts, and its English wire text.
// Messages are localised by looking the English text up in the i18n catalogs
// (the errors domain holds the AG-UI catalogue texts; the agui domain holds the
// adapter-only ones), so free text from upstream passes through untranslated.
import { catalogKeys, t, type Language } from "../i18n/index.js";

export const AGUI_ERROR_STATUS = {
  UNAUTHORIZED: 401,
  UNSUPPORTED_MEDIA_TYPE: 415,
  REQUEST_TOO_LARGE: 413,
  INVALID_JSON: 400,
  INVALID_INPUT: 400,
  STATE_UNAVAILABLE: 503,
  DUPLICATE_RUN_ID: 409,
  RUN_ID_CONFLICT: 409,
  THREAD_BUSY: 409,
  THREAD_BINDING_CONFLICT: 409,
  RESUME_REQUIRED: 409,
  INCOMPLETE_RESUME: 409,
  UNKNOWN_INTERRUPT: 409,
  RESUME_PAYLOAD_INVALID: 400,
  RESUME_ALREADY_APPLIED: 409,
  EXECUTION_EXPIRED: 409,
  EXECUTION_LOST: 409,
  EXECUTION_NOT_FOUND: 404,
  STATE_PERSISTENCE_FAILED: 503,
  A2A_UNAVAILABLE: 503,
  A2A_PROTOCOL_ERROR: 502,
  A2A_EXECUTION_FAILED: 502,
  CANCELLED: 409,
} as const;

export type AguiErrorCode = keyof typeof AGUI_ERROR_STATUS;

/** The English wire texts (agui-iaccode.md §2.8, §6); clients compare them byte for byte. */
export const MSG = {
  unauthorized: "A valid bearer token is required.",
  unsupportedMediaType: "Content-Type must be application/json.",
  requestTooLarge: "The AG-UI request body is too large.",
  invalidJson: "The request body is not valid JSON.",
  notAnObject: "RunAgentInput must be a JSON object.",
  invalidEnvelope: "Invalid AG-UI RunAgentInput envelope.",
  invalidForwardedProps: "Invalid iac-code forwarded properties.",
  stateUnavailable: "The AG-UI adapter state is unavailable.",
  runIdUsed: "The AG-UI run id has already been used.",
  threadBusy: "The AG-UI thread already has an active run.",
  bindingConflict: "The AG-UI thread is already bound to another workspace or caller.",
  resumeRequired: "The AG-UI thread is waiting for interrupt responses.",
  executionLostResume: "The execution to resume is no longer available.",
  resumeMismatch: "The resume request does not match the interrupted run.",
  taskUnavailable: "The A2A task to resume is unavailable.",
  newRunNeedsMessage: "A new run requires a user message.",
  onlyTextAndImages: "Only text and inline data images are supported.",
  remoteMedia: "Remote media URLs are not supported.",
  imageMediaType: "The image media type is not supported.",
  imageBase64: "The image data is not valid base64.",
  imageTooLarge: "An image exceeds the maximum size.",
  imagesTooLarge: "The total image content exceeds the maximum size.",
  contentInvalid: "The user message content is invalid.",
  duplicateInterruptIds: "The resume contains duplicate interrupt ids.",
  incompleteResume: "The resume must resolve every pending interrupt exactly once.",
  unknownInterrupt: "The resume references an unknown interrupt.",
  payloadRequired: "A resolved interrupt requires a payload.",
  payloadInvalid: "The interrupt response payload is invalid.",
  noAnswer: "The interrupt response does not contain an answer.",
  alreadyApplied: "The interrupt response has already been applied.",
  expired: "The interrupted execution has expired.",
  a2aUnavailable: "The local A2A execution service is unavailable.",
  interruptNotAccepted: "The A2A interrupt response was not accepted.",
  permissionNotAccepted: "The A2A permission response was not accepted.",
  interruptRejected: "The local A2A execution service rejected the interrupt response.",
  contextChanged: "The A2A context identity changed unexpectedly.",
  taskChanged: "The A2A task identity changed unexpectedly.",
  sessionChanged: "The iac-code session identity changed unexpectedly.",
  otherTask: "An interrupt belongs to another A2A task.",
  otherContext: "An interrupt belongs to another A2A context.",
  taskIdentityMismatch: "The A2A task identity does not match the interrupted run.",
  interruptWithoutId: "An A2A input request has no input id.",
  executionFailed: "The A2A execution failed.",
  cancelled: "The execution was cancelled.",
  cancelledByResponse: "The execution was cancelled by the interrupt response.",
  mappingNotCommitted: "The execution mapping could not be committed.",
  sessionNotCommitted: "The execution session mapping could not be committed.",
  interruptNotCommitted: "The interrupted execution state could not be committed.",
  responseNotCommitted: "The accepted interrupt response could not be committed.",
  executionNotFound: "The execution was not found.",
  cancelTooLarge: "The cancel request body is too large.",
  cancelInvalidJson: "The cancel request body is not valid JSON.",
  cancelNotObject: "The cancel request must be a JSON object.",
  cancelFieldsRequired: "threadId and rosInvocationId are required.",
  permissionRequired: "Permission required",
  inputRequired: "Input required",
} as const;

let englishIndex: Map<string, string> | undefined;

/** Localised text for an English wire string; unknown text (e.g. upstream free text) is returned as is. */
export function localize(lang: Language, english: string): string {
  if (!englishIndex) {
    englishIndex = new Map();
    for (const key of catalogKeys("en")) {
      const text = t("en", key);
      if (!englishIndex.has(text)) englishIndex.set(text, key);
    }
  }
  const key = englishIndex.get(english);
  return key ? t(lang, key) : english;
}

/** A failure with a catalogue code; `message` is the English wire text. */
export class AguiError extends Error {
  constructor(
    readonly code: AguiErrorCode,
    message: string,
    readonly status: number = AGUI_ERROR_STATUS[code],
  ) {
    super(message);
    this.name = "AguiError";
  }

  body(lang: Language): { error: { code: string; message: string } } {
    return { error: { code: this.code, message: localize(lang, this.message) } };
  }
}
