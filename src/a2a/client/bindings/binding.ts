// What every A2A binding of the client offers: one unary and one streaming
// call, keyed by the generated A2AService method descriptors, with protobuf-es
// messages in and out. JSON-RPC, HTTP+JSON and gRPC implement it; a further
// transport (unix socket, WebSocket, ...) only has to carry JSON-RPC requests
// and plugs in as a JsonRpcChannel (jsonrpc.ts).
import type {
  DescMessage,
  DescMethodServerStreaming,
  DescMethodUnary,
  MessageShape,
} from "@bufbuild/protobuf";
import { ClientError, UsageError } from "../errors.js";

export type BindingName = "jsonrpc" | "rest" | "grpc";

export const BINDING_NAMES: readonly BindingName[] = ["jsonrpc", "rest", "grpc"];

export function parseBindingName(value: string): BindingName {
  const name = value.trim().toLowerCase();
  if (!(BINDING_NAMES as readonly string[]).includes(name)) {
    throw new UsageError(`--binding must be one of ${BINDING_NAMES.join(", ")}.`);
  }
  return name as BindingName;
}

export interface CallOptions {
  /** Milliseconds to wait for a reply, or between two events of a stream; 0 waits forever. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface A2aBinding {
  readonly name: BindingName;
  /** The endpoint this binding talks to. */
  readonly url: string;
  unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    input: MessageShape<I>,
    options: CallOptions,
  ): Promise<MessageShape<O>>;
  stream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodServerStreaming<I, O>,
    input: MessageShape<I>,
    options: CallOptions,
  ): AsyncIterable<MessageShape<O>>;
  close(): Promise<void>;
}

/** The connection failed, timed out, or the reply was not what the binding expects. */
export class TransportError extends ClientError {
  override readonly name = "TransportError";
}

/**
 * An abort signal that fires when nothing happened for `timeoutMs` (touch()
 * restarts the wait) or when the caller's signal fires.
 */
export class IdleDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  readonly signal: AbortSignal;
  private expired = false;

  constructor(
    private readonly timeoutMs: number,
    outer?: AbortSignal,
  ) {
    // Without a deadline the caller's signal is the only one (no combined signal per call).
    this.signal =
      outer && timeoutMs > 0
        ? AbortSignal.any([outer, this.controller.signal])
        : (outer ?? this.controller.signal);
    this.touch();
  }

  touch(): void {
    if (this.timeoutMs <= 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort();
    }, this.timeoutMs);
    this.timer.unref();
  }

  /** True when the deadline (not the caller) ended the call. */
  get timedOut(): boolean {
    return this.expired;
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

export function timeoutError(url: string, timeoutMs: number): TransportError {
  return new TransportError(`No reply from ${url} within ${timeoutMs / 1000} s (--timeout).`);
}

/** A readable reason for a failed request: node's error code, or the cause fetch hides behind "fetch failed". */
export function networkReason(error: unknown): string {
  const { code, cause } = error as { code?: unknown; cause?: { code?: string; message?: string } };
  if (typeof code === "string" && code !== "ABORT_ERR") return code;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
