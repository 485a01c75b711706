// The client's errors and the exit codes they carry (`iac-code a2a-client`
// exits with them). Every failure the user can act on is a ClientError whose
// message is printed as is; anything else is a bug and is reported with its stack.

export const EXIT = {
  ok: 0,
  /** A call failed, the server answered an error, or a required value is missing. */
  error: 1,
  /** The command line is wrong (unknown option, bad value). */
  usage: 2,
  /** The turn stopped on a permission or question request nobody could answer here. */
  inputRequired: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class ClientError extends Error {
  override readonly name: string = "ClientError";
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.error,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A wrong command line or option value. */
export class UsageError extends ClientError {
  override readonly name = "UsageError";
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** What the server said when it refused a call, in the terms of the binding used. */
export interface A2aErrorDetail {
  /** google.rpc.ErrorInfo reason (A2A 1.0 servers attach one), e.g. TASK_NOT_FOUND. */
  reason?: string;
  /** JSON-RPC error code. */
  code?: number;
  /** HTTP status (REST binding). */
  httpStatus?: number;
  /** gRPC status name, e.g. not_found (gRPC binding). */
  grpcStatus?: string;
  /** The JSON-RPC error's data as sent (ErrorInfo details, or a server's own object). */
  data?: unknown;
}

/** The server answered the call with an error. */
export class A2aCallError extends ClientError {
  override readonly name = "A2aCallError";
  constructor(
    readonly serverMessage: string,
    readonly detail: A2aErrorDetail,
  ) {
    super(`A2A error: ${serverMessage}${describe(detail)}`);
  }
}

function describe(detail: A2aErrorDetail): string {
  const parts = [
    detail.reason,
    detail.code !== undefined ? `JSON-RPC ${detail.code}` : undefined,
    detail.httpStatus !== undefined ? `HTTP ${detail.httpStatus}` : undefined,
    detail.grpcStatus !== undefined ? `gRPC ${detail.grpcStatus}` : undefined,
  ].filter(Boolean);
  return parts.length > 0 ? ` (${parts.join(", ")})` : "";
}
