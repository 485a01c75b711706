// How a core failure looks on the REST and gRPC wires. Statuses and codes come
// from the A2A error catalogue (src/contract/errors.ts, spec v1.0.1), looked up
// by the ErrorInfo reason the A2AError carries; this module only shapes them.
// Anything that is not an A2AError is logged in full and reaches the client as
// a generic internal error.
import { randomUUID } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import type { Logger } from "pino";
import {
  A2A_ERROR_DOMAIN,
  a2aErrorSpec,
  ProtoJsonError,
  restError,
  rpc,
  type RestErrorBody,
} from "../../contract/index.js";
import { A2AError } from "../core/request/errors.js";

/** A request that does not decode: InvalidParams, naming the field when the decoder knows it. */
export function invalidParamsOf(error: ProtoJsonError): A2AError {
  return error.field
    ? new A2AError("InvalidParamsError", `Invalid params: ${error.message}`, { field: error.field })
    : new A2AError("InvalidParamsError", "Invalid params", { detail: error.message.slice(0, 500) });
}

/** Any thrown value as an A2AError; unexpected ones are logged (with an id the client also sees) and made generic. */
export function asA2AError(error: unknown, logger: Logger, where: string): A2AError {
  if (error instanceof A2AError) return error;
  if (error instanceof ProtoJsonError) return invalidParamsOf(error);
  const errorId = randomUUID();
  logger.error({ err: error, errorId, where }, "unexpected error in A2A binding");
  return new A2AError("InternalError", "Internal error", { errorId });
}

/** HTTP status and google.rpc.Status JSON body (AIP-193 form; error.code equals the status). */
export function restErrorOf(error: A2AError): { status: number; body: RestErrorBody } {
  return restError(error.errorName, {
    message: error.message,
    metadata: error.metadata,
  });
}

/** A gRPC status with the ErrorInfo in grpc-status-details-bin. */
export function connectErrorOf(error: A2AError): ConnectError {
  const spec = error.spec;
  return new ConnectError(error.message, spec.grpcCode, undefined, [
    {
      desc: rpc.ErrorInfoSchema,
      value: { reason: spec.reason, domain: A2A_ERROR_DOMAIN, metadata: error.metadata },
    },
  ]);
}

/** A failed authentication on gRPC: UNAUTHENTICATED, as HTTP answers 401. */
/** `challenge`: the 401's WWW-Authenticate value; a refused JWT's reason goes into the message. */
export function unauthenticated(challenge?: string): ConnectError {
  const spec = a2aErrorSpec("UNAUTHENTICATED");
  const reason = challenge && /error_description="([^"]*)"/.exec(challenge)?.[1];
  // No colon: Connect percent-encodes it and grpc-js's decodeURI leaves it as %3A.
  return new ConnectError(reason ? `Unauthorized (${reason})` : "Unauthorized", spec.grpcCode);
}
