// The adapter's error model. Every failure carries a code of the AG-UI error
// catalogue (schemas/errors/catalogue/agui.json: the HTTP status it gets when
// answered before SSE starts) and the i18n key of its wire text, translated per
// request.
import { aguiErrorSpec, type AguiErrorCode } from "../contract/index.js";
import { t, type Language } from "../i18n/index.js";

export type { AguiErrorCode };

/**
 * Message keys of the adapter's wire texts: the AG-UI error catalogue texts live in the
 * errors i18n domain (agui.error.*), adapter-only texts in the agui domain (aguiAdapter.*).
 */
export const MSG = {
  unauthorized: "agui.error.unauthorized",
  unsupportedMediaType: "agui.error.unsupportedMediaType",
  requestTooLarge: "agui.error.requestTooLarge",
  invalidJson: "agui.error.invalidJson",
  jsonTooDeep: "agui.error.jsonTooDeep",
  jsonTooManyValues: "agui.error.jsonTooManyValues",
  threadIdInvalid: "agui.error.threadIdInvalid",
  notAnObject: "agui.error.inputNotObject",
  invalidEnvelope: "agui.error.invalidEnvelope",
  invalidForwardedProps: "agui.error.invalidForwardedProps",
  fieldRequired: "agui.error.fieldRequired",
  fieldUnknown: "agui.error.fieldUnknown",
  fieldType: "agui.error.fieldType",
  fieldConst: "agui.error.fieldConst",
  fieldEnum: "agui.error.fieldEnum",
  fieldEmpty: "agui.error.fieldEmpty",
  fieldTooLong: "agui.error.fieldTooLong",
  fieldMinimum: "agui.error.fieldMinimum",
  fieldInvalid: "agui.error.fieldInvalid",
  llmHeaderName: "agui.error.llmHeaderName",
  llmHeaderValue: "agui.error.llmHeaderValue",
  llmHeaderReserved: "agui.error.llmHeaderReserved",
  llmHeadersTooMany: "agui.error.llmHeadersTooMany",
  toolsNotSupported: "agui.error.toolsNotSupported",
  workspaceNotAbsolute: "workspace.notAbsolute",
  workspaceInvalid: "workspace.invalid",
  workspaceOutsideRoots: "workspace.outsideRoots",
  workspaceNotDirectory: "workspace.notDirectory",
  workspaceMissing: "workspace.missing",
  userMessageEmpty: "agui.error.userMessageEmpty",
  stateUnavailable: "agui.error.stateUnavailable",
  runIdUsed: "agui.error.runIdUsed",
  threadBusy: "agui.error.threadBusy",
  bindingConflict: "agui.error.threadBindingConflict",
  resumeRequired: "agui.error.resumeRequired",
  executionLostResume: "agui.error.executionLost",
  guidanceNoRun: "agui.error.guidanceNoRun",
  resumeMismatch: "agui.error.resumeMismatch",
  taskUnavailable: "agui.error.resumeTaskUnavailable",
  newRunNeedsMessage: "agui.error.userMessageRequired",
  onlyTextAndImages: "agui.error.unsupportedContentPart",
  remoteMedia: "agui.error.remoteMediaUrl",
  imageMediaType: "agui.error.imageMediaType",
  imageBase64: "agui.error.imageBase64",
  imageTooLarge: "agui.error.imageTooLarge",
  imagesTooLarge: "agui.error.imagesTooLarge",
  contentInvalid: "agui.error.contentInvalid",
  duplicateInterruptIds: "agui.error.duplicateInterruptIds",
  incompleteResume: "agui.error.incompleteResume",
  unknownInterrupt: "agui.error.unknownInterrupt",
  payloadRequired: "agui.error.resumePayloadRequired",
  payloadInvalid: "agui.error.resumePayloadInvalid",
  noAnswer: "agui.error.resumeAnswerMissing",
  alreadyApplied: "agui.error.resumeAlreadyApplied",
  expired: "agui.error.executionExpired",
  a2aUnavailable: "agui.error.a2aUnavailable",
  sessionBackupNotReady: "agui.error.sessionBackupNotReady",
  resumeSessionUnavailable: "agui.error.resumeSessionUnavailable",
  interruptNotAccepted: "agui.error.interruptResponseNotAccepted",
  permissionNotAccepted: "agui.error.permissionResponseNotAccepted",
  interruptRejected: "agui.error.interruptResponseRejected",
  contextChanged: "agui.error.contextIdentityChanged",
  taskChanged: "agui.error.taskIdentityChanged",
  sessionChanged: "agui.error.sessionIdentityChanged",
  otherTask: "agui.error.interruptOtherTask",
  otherContext: "agui.error.interruptOtherContext",
  taskIdentityMismatch: "agui.error.taskIdentityMismatch",
  interruptWithoutId: "aguiAdapter.interruptWithoutId",
  executionFailed: "agui.error.a2aExecutionFailed",
  cancelled: "agui.error.cancelled",
  cancelledByResponse: "agui.error.cancelledByInterruptResponse",
  mappingNotCommitted: "agui.error.executionMappingNotCommitted",
  sessionNotCommitted: "agui.error.sessionMappingNotCommitted",
  interruptNotCommitted: "agui.error.interruptNotCommitted",
  responseNotCommitted: "agui.error.acceptedResponseNotCommitted",
  executionNotFound: "agui.error.executionNotFound",
  cancelTooLarge: "agui.error.cancelRequestTooLarge",
  cancelInvalidJson: "agui.error.cancelInvalidJson",
  cancelNotObject: "agui.error.cancelNotObject",
  cancelFieldsRequired: "agui.error.cancelFieldsRequired",
  permissionRequired: "aguiAdapter.permissionRequired",
  inputRequired: "aguiAdapter.inputRequired",
  unknownPipeline: "aguiAdapter.unknownPipeline",
  // The structured interrupts' answers (structured-answers.ts), under RESUME_PAYLOAD_INVALID.
  payloadNotObject: "aguiAdapter.payloadNotObject",
  payloadUnknownField: "aguiAdapter.payloadUnknownField",
  payloadOneOf: "aguiAdapter.payloadOneOf",
  payloadNotString: "aguiAdapter.payloadNotString",
  payloadNotText: "aguiAdapter.payloadNotText",
  payloadTooLong: "aguiAdapter.payloadTooLong",
  labelWithoutValue: "aguiAdapter.labelWithoutValue",
  selectorUnknown: "aguiAdapter.selectorUnknown",
  selectorValueRejected: "aguiAdapter.selectorValueRejected",
  selectorCancelPayload: "aguiAdapter.selectorCancelPayload",
  confirmationOption: "aguiAdapter.confirmationOption",
  confirmationAction: "aguiAdapter.confirmationAction",
  overridesNotObject: "aguiAdapter.overridesNotObject",
  overrideValue: "aguiAdapter.overrideValue",
  overrideName: "aguiAdapter.overrideName",
  overridesTooMany: "aguiAdapter.overridesTooMany",
  // Under A2A_UNAVAILABLE: a confirmation that cannot be offered, a continuation that never came.
  confirmationOptionsInvalid: "aguiAdapter.confirmationOptionsInvalid",
  confirmationNoOptions: "aguiAdapter.confirmationNoOptions",
  continuationLost: "aguiAdapter.continuationLost",
} as const;

export type MessageKey = (typeof MSG)[keyof typeof MSG];

/** Placeholder values of a wire text (the field a rejection names, an error id...). */
export type MessageParams = Record<string, string>;

/** A failure with a catalogue code; `message` is the English wire text (for logs). */
export class AguiError extends Error {
  constructor(
    readonly code: AguiErrorCode,
    readonly messageKey: MessageKey,
    readonly params: MessageParams = {},
    readonly status: number = aguiErrorSpec(code).httpStatus,
  ) {
    super(t("en", messageKey, params));
    this.name = "AguiError";
  }

  /** The wire text in a language. */
  text(lang: Language): string {
    return t(lang, this.messageKey, this.params);
  }

  body(lang: Language): { error: { code: string; message: string } } {
    return { error: { code: this.code, message: this.text(lang) } };
  }
}

/** Thrown inside a run to end it with RUN_ERROR. */
export class RunFailure extends Error {
  constructor(
    readonly code: AguiErrorCode,
    readonly messageKey: MessageKey,
    readonly params: MessageParams = {},
    /** A wire text the A2A server already localised (a model failure with its error id). */
    readonly localized?: string,
  ) {
    super(t("en", messageKey, params));
  }
}

/** What an A2A error's data says: the session backup is not ready (retryable). */
function backupNotReadyData(data: unknown): boolean {
  const entries = Array.isArray(data) ? data : [data];
  return entries.some((entry) => {
    if (!entry || typeof entry !== "object") return false;
    // The reference's shape {code, retryable: true}; this A2A server's ErrorInfo metadata (strings).
    const e = entry as {
      code?: unknown;
      retryable?: unknown;
      metadata?: { code?: unknown; retryable?: unknown };
    };
    if (e.code === "SESSION_BACKUP_NOT_READY" && e.retryable === true) return true;
    return e.metadata?.code === "SESSION_BACKUP_NOT_READY" && e.metadata.retryable === "true";
  });
}

/**
 * SESSION_BACKUP_NOT_READY for a JSON-RPC error whose data says the session
 * backup is still synchronizing (agui-iaccode.md §5.5, §10 item 55), with the
 * A2A server's message; undefined for any other error.
 */
export function backupNotReady(err: unknown): RunFailure | undefined {
  const e = err as { detail?: { data?: unknown }; serverMessage?: unknown } | null;
  if (!e?.detail || !backupNotReadyData(e.detail.data)) return undefined;
  const message = typeof e.serverMessage === "string" && e.serverMessage ? e.serverMessage : undefined;
  return new RunFailure("SESSION_BACKUP_NOT_READY", MSG.sessionBackupNotReady, {}, message);
}
