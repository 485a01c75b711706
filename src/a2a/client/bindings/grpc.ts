// The gRPC binding: lf.a2a.v1.A2AService through Connect's gRPC transport and
// the generated service descriptors. Auth and A2A-Version travel as metadata;
// a failed call's ErrorInfo reason is read from grpc-status-details-bin.
import type {
  DescMessage,
  DescMethodServerStreaming,
  DescMethodUnary,
  MessageShape,
} from "@bufbuild/protobuf";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { rpc } from "../../../contract/index.js";
import { A2aCallError } from "../errors.js";
import { IdleDeadline, TransportError, timeoutError, type A2aBinding, type CallOptions } from "./binding.js";

/** grpc://host:port, grpcs://, http(s):// or a bare host:port (as our card advertises it). */
export function grpcBaseUrl(target: string): string {
  if (/^grpcs:\/\//i.test(target)) return target.replace(/^grpcs/i, "https");
  if (/^grpc:\/\//i.test(target)) return target.replace(/^grpc/i, "http");
  if (/^https?:\/\//i.test(target)) return target;
  return `http://${target}`;
}

export class GrpcBinding implements A2aBinding {
  readonly name = "grpc";
  readonly url: string;
  private readonly sessions: Http2SessionManager;
  private readonly transport: Transport;

  constructor(
    target: string,
    private readonly headers: Record<string, string>,
  ) {
    this.url = grpcBaseUrl(target).replace(/\/+$/, "");
    this.sessions = new Http2SessionManager(this.url);
    this.transport = createGrpcTransport({ baseUrl: this.url, sessionManager: this.sessions });
  }

  async unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    input: MessageShape<I>,
    options: CallOptions,
  ): Promise<MessageShape<O>> {
    const deadline = new IdleDeadline(options.timeoutMs, options.signal);
    try {
      const response = await this.transport.unary(method, deadline.signal, undefined, this.headers, input);
      return response.message;
    } catch (error) {
      throw grpcFailure(this.url, error, deadline, options);
    } finally {
      deadline.clear();
    }
  }

  async *stream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodServerStreaming<I, O>,
    input: MessageShape<I>,
    options: CallOptions,
  ): AsyncGenerator<MessageShape<O>> {
    const deadline = new IdleDeadline(options.timeoutMs, options.signal);
    // Leaving the loop early must end the call, not just stop reading it.
    const stop = new AbortController();
    const signal = AbortSignal.any([deadline.signal, stop.signal]);
    try {
      const response = await this.transport.stream(method, signal, undefined, this.headers, once(input));
      for await (const message of response.message) {
        deadline.touch();
        yield message;
      }
    } catch (error) {
      throw grpcFailure(this.url, error, deadline, options);
    } finally {
      deadline.clear();
      stop.abort();
    }
  }

  close(): Promise<void> {
    this.sessions.abort();
    return Promise.resolve();
  }
}

/** A failed gRPC call as the client reports it: timeout, unreachable, or the server's status and reason. */
export function grpcFailure(
  url: string,
  error: unknown,
  deadline: IdleDeadline,
  options: CallOptions,
): Error {
  if (deadline.timedOut) return timeoutError(url, options.timeoutMs);
  if (options.signal?.aborted) return error as Error;
  const connect = ConnectError.from(error);
  if (connect.code === Code.Unavailable && connect.findDetails(rpc.ErrorInfoSchema).length === 0) {
    return new TransportError(`Cannot reach ${url}: ${connect.rawMessage}`);
  }
  const reason = connect.findDetails(rpc.ErrorInfoSchema)[0]?.reason;
  return new A2aCallError(connect.rawMessage, { reason, grpcStatus: Code[connect.code] });
}

// eslint-disable-next-line @typescript-eslint/require-await -- a one-message request stream
export async function* once<T>(value: T): AsyncGenerator<T> {
  yield value;
}
