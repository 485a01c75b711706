// Typed helpers over the generated error catalogues (schemas/errors/catalogue):
// the AG-UI error codes with their HTTP status and localised messages, and the
// A2A error identities on every binding (JSON-RPC code, HTTP status, gRPC code,
// google.rpc.ErrorInfo reason). Bindings build their error bodies here so the
// codes, statuses and wire shapes stay in one place.
import { a2aErrorCatalogue, aguiErrorCatalogue } from "../../generated/error-catalogue.js";
import { t, type Language } from "../i18n/index.js";

export type AguiErrorCode = (typeof aguiErrorCatalogue)[number]["code"];
export type AguiErrorSurface = "http" | "sse";
export type AguiMessageKey = (typeof aguiErrorCatalogue)[number]["messageKeys"][number];

export type A2aErrorName = (typeof a2aErrorCatalogue)[number]["name"];
export type A2aErrorReason = (typeof a2aErrorCatalogue)[number]["reason"];

export const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";
export const BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest";
export const A2A_ERROR_DOMAIN = "a2a-protocol.org";

/** Body of a failed authentication on the A2A HTTP surface (both bindings, card and health when protected). */
export const UNAUTHORIZED_BODY = { error: "Unauthorized" } as const;

export interface AguiErrorEntry {
  code: AguiErrorCode;
  httpStatus: number;
  surfaces: readonly AguiErrorSurface[];
  /** Every message of the code; the first one is the default. */
  messageKeys: readonly AguiMessageKey[];
  description: string;
}

export interface A2aErrorEntry {
  name: A2aErrorName;
  kind: "a2a" | "jsonrpc" | "transport";
  reason: A2aErrorReason;
  /** null for errors answered before JSON-RPC dispatch (401). */
  jsonrpcCode: number | null;
  httpStatus: number;
  /** google.rpc.Code name, e.g. NOT_FOUND. */
  grpcStatus: string;
  /** Numeric google.rpc.Code (same numbers as Connect's Code enum). */
  grpcCode: number;
  /** Default English message, as the A2A SDKs word it. */
  message: string;
}

/** google.rpc.ErrorInfo in ProtoJSON Any form; metadata values must be strings. */
export interface ErrorInfoDetail {
  "@type": typeof ERROR_INFO_TYPE;
  reason: string;
  domain: string;
  metadata?: Record<string, string>;
}

export interface FieldViolation {
  field: string;
  description: string;
}

/** google.rpc.BadRequest in ProtoJSON Any form. */
export interface BadRequestDetail {
  "@type": typeof BAD_REQUEST_TYPE;
  fieldViolations: FieldViolation[];
}

export type StatusDetail = ErrorInfoDetail | BadRequestDetail;

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data: StatusDetail[];
}

export interface RestErrorBody {
  error: { code: number; status: string; message: string; details: StatusDetail[] };
}

const aguiByCode = new Map<string, AguiErrorEntry>(
  aguiErrorCatalogue.map((e) => [e.code, e as AguiErrorEntry]),
);
const a2aByName = new Map<string, A2aErrorEntry>();
const a2aByReason = new Map<string, A2aErrorEntry>();
const a2aByJsonRpcCode = new Map<number, A2aErrorEntry>();
for (const entry of a2aErrorCatalogue) {
  const spec: A2aErrorEntry = { ...entry };
  a2aByName.set(spec.name, spec);
  a2aByReason.set(spec.reason, spec);
  if (spec.jsonrpcCode !== null) a2aByJsonRpcCode.set(spec.jsonrpcCode, spec);
}

export function isAguiErrorCode(value: unknown): value is AguiErrorCode {
  return typeof value === "string" && aguiByCode.has(value);
}

export function aguiErrorSpec(code: AguiErrorCode): AguiErrorEntry {
  const spec = aguiByCode.get(code);
  // Unreachable for typed callers; guards untyped ones (e.g. codes read from state files).
  if (!spec) throw new Error(`Unknown AG-UI error code ${String(code)}`);
  return spec;
}

/**
 * The localised message of an AG-UI error. messageKey picks one of the code's
 * messages (default: its first); a key that does not belong to the code is a
 * programming error and throws, so a wrong pairing never reaches a client.
 */
export function aguiErrorMessage(code: AguiErrorCode, lang: Language, messageKey?: AguiMessageKey): string {
  const spec = aguiErrorSpec(code);
  const key = messageKey ?? spec.messageKeys[0];
  if (!spec.messageKeys.includes(key))
    throw new Error(`Message ${key} does not belong to AG-UI error ${code}`);
  return t(lang, key);
}

/** Status and errors/error-envelope body of an AG-UI error answered before SSE starts. */
export function aguiErrorBody(
  code: AguiErrorCode,
  lang: Language,
  messageKey?: AguiMessageKey,
): { status: number; body: { error: { code: AguiErrorCode; message: string } } } {
  return {
    status: aguiErrorSpec(code).httpStatus,
    body: { error: { code, message: aguiErrorMessage(code, lang, messageKey) } },
  };
}

/** Looks an A2A error up by class name (TaskNotFoundError) or ErrorInfo reason (TASK_NOT_FOUND). */
export function a2aErrorSpec(nameOrReason: A2aErrorName | A2aErrorReason): A2aErrorEntry {
  const spec = a2aByName.get(nameOrReason) ?? a2aByReason.get(nameOrReason);
  if (!spec) throw new Error(`Unknown A2A error ${String(nameOrReason)}`);
  return spec;
}

/** The catalogue entry of a JSON-RPC error code, if it is one of ours. */
export function a2aErrorByJsonRpcCode(code: number): A2aErrorEntry | undefined {
  return a2aByJsonRpcCode.get(code);
}

/** The catalogue entry of an ErrorInfo reason, if it is one of ours (how clients identify errors). */
export function a2aErrorByReason(reason: string): A2aErrorEntry | undefined {
  return a2aByReason.get(reason);
}

/** A google.rpc.ErrorInfo detail (domain a2a-protocol.org unless given). */
export function errorInfo(
  reason: string,
  metadata?: Record<string, string>,
  domain: string = A2A_ERROR_DOMAIN,
): ErrorInfoDetail {
  const detail: ErrorInfoDetail = { "@type": ERROR_INFO_TYPE, reason, domain };
  if (metadata && Object.keys(metadata).length > 0) detail.metadata = { ...metadata };
  return detail;
}

/** A google.rpc.BadRequest detail listing invalid fields. */
export function badRequest(fieldViolations: FieldViolation[]): BadRequestDetail {
  return { "@type": BAD_REQUEST_TYPE, fieldViolations: fieldViolations.map((v) => ({ ...v })) };
}

export interface A2aErrorOptions {
  /** Replaces the default message (already sanitised: no paths, secrets or provider details). */
  message?: string;
  /** ErrorInfo metadata, e.g. { taskId }. */
  metadata?: Record<string, string>;
  /** Extra details after the ErrorInfo (e.g. a BadRequest). */
  details?: StatusDetail[];
}

function detailsOf(spec: A2aErrorEntry, options: A2aErrorOptions): StatusDetail[] {
  return [errorInfo(spec.reason, options.metadata), ...(options.details ?? [])];
}

/** The `error` member of a JSON-RPC error response (only code, message, data). */
export function jsonRpcError(
  name: A2aErrorName | A2aErrorReason,
  options: A2aErrorOptions = {},
): JsonRpcErrorObject {
  const spec = a2aErrorSpec(name);
  if (spec.jsonrpcCode === null) throw new Error(`${spec.name} is not a JSON-RPC error`);
  return { code: spec.jsonrpcCode, message: options.message ?? spec.message, data: detailsOf(spec, options) };
}

/** Status and google.rpc.Status body of an error on the HTTP+JSON (REST) binding. */
export function restError(
  name: A2aErrorName | A2aErrorReason,
  options: A2aErrorOptions = {},
): { status: number; body: RestErrorBody } {
  const spec = a2aErrorSpec(name);
  return {
    status: spec.httpStatus,
    body: {
      error: {
        code: spec.httpStatus,
        status: spec.grpcStatus,
        message: options.message ?? spec.message,
        details: detailsOf(spec, options),
      },
    },
  };
}
