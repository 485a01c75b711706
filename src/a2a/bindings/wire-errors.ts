// How a core failure looks on the REST and gRPC wires. The status numbers come
// from the A2A error catalogue carried by each A2AError (spec v1.0.1); this
// module only shapes them. Anything that is not an A2AError is logged in full
// and reaches the client as a generic internal error.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "pino";
import { ErrorInfoSchema } from "../../../generated/proto/google/rpc/error_details_pb.js";
import { ProtoJsonError } from "../../contract/index.js";
import { A2AError } from "../core/errors.js";

/** google.rpc.Code numbers by name (the canonical gRPC status table). */
const GRPC_CODES: Record<string, Code> = {
  CANCELLED: Code.Canceled,
  UNKNOWN: Code.Unknown,
  INVALID_ARGUMENT: Code.InvalidArgument,
  DEADLINE_EXCEEDED: Code.DeadlineExceeded,
  NOT_FOUND: Code.NotFound,
  ALREADY_EXISTS: Code.AlreadyExists,
  PERMISSION_DENIED: Code.PermissionDenied,
  RESOURCE_EXHAUSTED: Code.ResourceExhausted,
  FAILED_PRECONDITION: Code.FailedPrecondition,
  ABORTED: Code.Aborted,
  OUT_OF_RANGE: Code.OutOfRange,
  UNIMPLEMENTED: Code.Unimplemented,
  INTERNAL: Code.Internal,
  UNAVAILABLE: Code.Unavailable,
  DATA_LOSS: Code.DataLoss,
  UNAUTHENTICATED: Code.Unauthenticated,
};

/** Any thrown value as an A2AError; unexpected ones are logged and made generic. */
export function asA2AError(error: unknown, logger: Logger, where: string): A2AError {
  if (error instanceof A2AError) return error;
  if (error instanceof ProtoJsonError)
    return new A2AError("InvalidParams", `Invalid params: ${error.message}`);
  logger.error({ err: error, where }, "unexpected error in A2A binding");
  return new A2AError("Internal");
}

export interface RestErrorBody {
  error: {
    code: number;
    status: string;
    message: string;
    details: Array<ReturnType<A2AError["errorInfo"]>>;
  };
}

/** google.rpc.Status in AIP-193 JSON form; error.code equals the HTTP status. */
export function restErrorBody(error: A2AError): RestErrorBody {
  return {
    error: {
      code: error.spec.httpStatus,
      status: error.spec.grpcStatus,
      message: error.message,
      details: [error.errorInfo()],
    },
  };
}

/** A gRPC status with the ErrorInfo in grpc-status-details-bin. */
export function connectErrorOf(error: A2AError): ConnectError {
  const info = error.errorInfo();
  return new ConnectError(error.message, GRPC_CODES[error.spec.grpcStatus] ?? Code.Internal, undefined, [
    { desc: ErrorInfoSchema, value: { reason: info.reason, domain: info.domain, metadata: info.metadata } },
  ]);
}
