// Typed A2A failures. The core throws A2AError naming an entry of the A2A error
// catalogue (schemas/errors/catalogue/a2a.json: JSON-RPC code, HTTP and gRPC
// status per spec v1.0.1, ErrorInfo reason); each binding maps it onto its wire
// form and always attaches a google.rpc.ErrorInfo whose reason names the error.
import {
  a2aErrorSpec,
  errorInfo,
  type A2aErrorEntry,
  type A2aErrorName,
  type ErrorInfoDetail,
} from "../../../contract/index.js";
import { t, type Language } from "../../../i18n/index.js";

export class A2AError extends Error {
  readonly errorName: A2aErrorName;
  /** ErrorInfo metadata; values are strings (google.rpc.ErrorInfo). */
  readonly metadata: Record<string, string>;

  constructor(name: A2aErrorName, message?: string, metadata: Record<string, string> = {}) {
    super(message ?? a2aErrorSpec(name).message);
    this.name = "A2AError";
    this.errorName = name;
    this.metadata = metadata;
  }

  get spec(): A2aErrorEntry {
    return a2aErrorSpec(this.errorName);
  }

  /** The ErrorInfo detail every binding attaches. */
  errorInfo(): ErrorInfoDetail {
    return errorInfo(this.spec.reason, this.metadata);
  }
}

export const invalidParams = (message: string, metadata?: Record<string, string>): A2AError =>
  new A2AError("InvalidParamsError", message, metadata);

export const taskNotFound = (taskId: string, message?: string): A2AError =>
  new A2AError("TaskNotFoundError", message ?? `Task ${taskId} not found`, { taskId });

/** A message for a task whose turn runs (here or on another replica) that the turn cannot take. */
export const taskAlreadyWorking = (language: Language, taskId: string): A2AError =>
  new A2AError("UnsupportedOperationError", t(language, "a2a.taskAlreadyWorking"), { taskId });
