// Typed A2A failures. The core throws A2AError; each binding maps it onto its
// wire form (JSON-RPC code, HTTP status, gRPC code) using the table below, and
// always attaches a google.rpc.ErrorInfo whose reason names the error.

export const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";
export const ERROR_DOMAIN = "a2a-protocol.org";

export type A2AErrorName =
  | "TaskNotFoundError"
  | "TaskNotCancelableError"
  | "PushNotificationNotSupportedError"
  | "UnsupportedOperationError"
  | "ContentTypeNotSupportedError"
  | "InvalidAgentResponseError"
  | "ExtendedAgentCardNotConfiguredError"
  | "ExtensionSupportRequiredError"
  | "VersionNotSupportedError"
  | "ParseError"
  | "InvalidRequest"
  | "MethodNotFound"
  | "InvalidParams"
  | "Internal";

export interface A2AErrorSpec {
  /** JSON-RPC error code. */
  code: number;
  /** google.rpc.ErrorInfo reason. */
  reason: string;
  /** HTTP status (spec v1.0.1). */
  httpStatus: number;
  /** gRPC status name (spec v1.0.1). */
  grpcStatus: string;
  defaultMessage: string;
}

/** Codes, reasons and statuses per error (A2A spec v1.0.1, see DECISIONS.md). */
export const A2A_ERRORS: Record<A2AErrorName, A2AErrorSpec> = {
  TaskNotFoundError: {
    code: -32001,
    reason: "TASK_NOT_FOUND",
    httpStatus: 404,
    grpcStatus: "NOT_FOUND",
    defaultMessage: "Task not found",
  },
  TaskNotCancelableError: {
    code: -32002,
    reason: "TASK_NOT_CANCELABLE",
    httpStatus: 400,
    grpcStatus: "FAILED_PRECONDITION",
    defaultMessage: "Task cannot be canceled",
  },
  PushNotificationNotSupportedError: {
    code: -32003,
    reason: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    httpStatus: 400,
    grpcStatus: "FAILED_PRECONDITION",
    defaultMessage: "Push notifications are not supported by the agent",
  },
  UnsupportedOperationError: {
    code: -32004,
    reason: "UNSUPPORTED_OPERATION",
    httpStatus: 400,
    grpcStatus: "FAILED_PRECONDITION",
    defaultMessage: "This operation is not supported",
  },
  ContentTypeNotSupportedError: {
    code: -32005,
    reason: "CONTENT_TYPE_NOT_SUPPORTED",
    httpStatus: 400,
    grpcStatus: "INVALID_ARGUMENT",
    defaultMessage: "Incompatible content types",
  },
  InvalidAgentResponseError: {
    code: -32006,
    reason: "INVALID_AGENT_RESPONSE",
    httpStatus: 500,
    grpcStatus: "INTERNAL",
    defaultMessage: "Invalid agent response type",
  },
  ExtendedAgentCardNotConfiguredError: {
    code: -32007,
    reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    httpStatus: 400,
    grpcStatus: "FAILED_PRECONDITION",
    defaultMessage: "Extended Agent Card not configured",
  },
  ExtensionSupportRequiredError: {
    code: -32008,
    reason: "EXTENSION_SUPPORT_REQUIRED",
    httpStatus: 400,
    grpcStatus: "FAILED_PRECONDITION",
    defaultMessage: "Extension support required",
  },
  VersionNotSupportedError: {
    code: -32009,
    reason: "VERSION_NOT_SUPPORTED",
    httpStatus: 400,
    grpcStatus: "FAILED_PRECONDITION",
    defaultMessage: "Version not supported",
  },
  ParseError: {
    code: -32700,
    reason: "PARSE_ERROR",
    httpStatus: 400,
    grpcStatus: "INVALID_ARGUMENT",
    defaultMessage: "Invalid JSON payload",
  },
  InvalidRequest: {
    code: -32600,
    reason: "INVALID_REQUEST",
    httpStatus: 400,
    grpcStatus: "INVALID_ARGUMENT",
    defaultMessage: "Request payload validation error",
  },
  MethodNotFound: {
    code: -32601,
    reason: "METHOD_NOT_FOUND",
    httpStatus: 404,
    grpcStatus: "UNIMPLEMENTED",
    defaultMessage: "Method not found",
  },
  InvalidParams: {
    code: -32602,
    reason: "INVALID_PARAMS",
    httpStatus: 400,
    grpcStatus: "INVALID_ARGUMENT",
    defaultMessage: "Invalid params",
  },
  Internal: {
    code: -32603,
    reason: "INTERNAL",
    httpStatus: 500,
    grpcStatus: "INTERNAL",
    defaultMessage: "Internal error",
  },
};

export class A2AError extends Error {
  readonly errorName: A2AErrorName;
  /** ErrorInfo metadata; values are strings (google.rpc.ErrorInfo). */
  readonly metadata: Record<string, string>;

  constructor(name: A2AErrorName, message?: string, metadata: Record<string, string> = {}) {
    super(message ?? A2A_ERRORS[name].defaultMessage);
    this.name = "A2AError";
    this.errorName = name;
    this.metadata = metadata;
  }

  get spec(): A2AErrorSpec {
    return A2A_ERRORS[this.errorName];
  }

  /** The ErrorInfo detail every binding attaches. */
  errorInfo(): { "@type": string; reason: string; domain: string; metadata: Record<string, string> } {
    return {
      "@type": ERROR_INFO_TYPE,
      reason: this.spec.reason,
      domain: ERROR_DOMAIN,
      metadata: this.metadata,
    };
  }
}

export const invalidParams = (message: string, metadata?: Record<string, string>): A2AError =>
  new A2AError("InvalidParams", message, metadata);

export const taskNotFound = (taskId: string, message?: string): A2AError =>
  new A2AError("TaskNotFoundError", message ?? `Task ${taskId} not found`, { taskId });
