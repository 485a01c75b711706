// The gRPC binding's unary calls without Connect's call pipeline. Connect runs
// every call through a chain of async iterables and AbortControllers, about
// five times grpc-js's whole transport cost per call (DECISIONS.md, Measured).
// A unary call in the binary codec without compression needs none of it: read
// one envelope, decode it, call the same implementation Connect calls, write
// one envelope and the status trailers (encoded by Connect's setTrailerStatus).
// Everything else (the streaming methods, grpc+json, compressed requests,
// unknown paths) is Connect's. The helpers taken from connect/protocol-grpc
// are marked internal by Connect: the pinned version (2.1.2) is what they are
// tested against.
import {
  create,
  fromBinary,
  type DescMessage,
  type Message,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import {
  contentTypeProto,
  parseContentType,
  parseTimeout,
  setTrailerStatus,
} from "@connectrpc/connect/protocol-grpc";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Logger } from "pino";
import { pb } from "../../contract/index.js";
import { encodeBinary } from "../../contract/fast-binary.js";
import type { Http2Handler } from "../../server/one-port.js";

/**
 * What the binding reads of a call: its metadata and its signal. Connect's
 * HandlerContext is one; this fast path makes its own.
 */
export interface GrpcCall {
  requestHeader: { get(name: string): string | null };
  signal: AbortSignal;
}

/** The service implementation, each method taking a GrpcCall where Connect passes its HandlerContext. */
export type A2AGrpcImpl = {
  [K in keyof ServiceImpl<typeof pb.A2AService>]: (
    request: Parameters<ServiceImpl<typeof pb.A2AService>[K]>[0],
    call: GrpcCall,
  ) => ReturnType<ServiceImpl<typeof pb.A2AService>[K]>;
};

type UnaryRun = (request: Message, call: GrpcCall) => Promise<MessageInitShape<DescMessage>>;

interface UnaryMethod {
  input: DescMessage;
  output: DescMessage;
  run: UnaryRun;
}

export interface UnaryFastPathOptions {
  impl: A2AGrpcImpl;
  readMaxBytes: number;
  logger: Logger;
  /** Connect's handler, for every call this path does not take. */
  connect: Http2Handler;
}

const ENVELOPE_PREFIX_BYTES = 5;
const COMPRESSED_FLAG = 0b1;
// setTimeout fires at once beyond this; a longer deadline is as good as none.
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** The service's unary methods by request path, e.g. /lf.a2a.v1.A2AService/GetTask. */
function unaryMethods(impl: A2AGrpcImpl): Map<string, UnaryMethod> {
  // Indexed by each descriptor's local name, one entry per unary method; the
  // implementation was typed from the same descriptors, so the shapes match.
  const byLocalName = impl as unknown as Record<string, UnaryRun>;
  const methods = new Map<string, UnaryMethod>();
  for (const method of pb.A2AService.methods) {
    if (method.methodKind !== "unary") continue;
    methods.set(`/${pb.A2AService.typeName}/${method.name}`, {
      input: method.input,
      output: method.output,
      run: byLocalName[method.localName],
    });
  }
  return methods;
}

const headerOf = (req: Http2ServerRequest, name: string): string | null => {
  const value = req.headers[name];
  return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
};

const invalid = (message: string): ConnectError => new ConnectError(message, Code.InvalidArgument);

/** Connect's handler with plain unary calls answered here first. */
export function withUnaryFastPath(options: UnaryFastPathOptions): Http2Handler {
  const methods = unaryMethods(options.impl);
  return (req, res) => {
    const method = req.method === "POST" ? methods.get(req.url) : undefined;
    const encoding = req.headers["grpc-encoding"];
    if (
      method === undefined ||
      parseContentType(req.headers["content-type"] ?? null)?.binary !== true ||
      (encoding !== undefined && encoding !== "identity")
    ) {
      options.connect(req, res);
      return;
    }
    answerUnary(method, options, req, res);
  };
}

function answerUnary(
  method: UnaryMethod,
  options: UnaryFastPathOptions,
  req: Http2ServerRequest,
  res: Http2ServerResponse,
): void {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let answered = false;
  const answer = (message: Uint8Array | undefined, error: ConnectError | undefined): void => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    if (res.stream.destroyed) return;
    res.writeHead(200, { "content-type": contentTypeProto });
    res.addTrailers(
      error ? Object.fromEntries(setTrailerStatus(new Headers(), error)) : { "grpc-status": "0" },
    );
    if (message) res.end(encodeEnvelope(0, message));
    else res.end();
    // Whatever the client still sends (after a refusal) is read and dropped.
    if (!req.readableEnded) req.resume();
  };
  // A client that cancels or goes away ends the call; the core sees the signal.
  res.once("close", () => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    controller.abort();
  });

  const timeout = parseTimeout(headerOf(req, "grpc-timeout"), Number.MAX_SAFE_INTEGER);
  if (timeout.error) return answer(undefined, timeout.error);
  if (timeout.timeoutMs !== undefined && timeout.timeoutMs <= LONGEST_TIMER_MS) {
    timer = setTimeout(() => {
      answer(undefined, new ConnectError("the operation timed out", Code.DeadlineExceeded));
      controller.abort();
    }, timeout.timeoutMs);
  }

  const chunks: Buffer[] = [];
  let received = 0;
  let declared = -1; // the envelope's message length, once its prefix is in
  req.on("data", (chunk: Buffer) => {
    if (answered) return;
    chunks.push(chunk);
    received += chunk.length;
    if (declared < 0 && received >= ENVELOPE_PREFIX_BYTES) {
      const prefix = chunks.length === 1 ? chunk : Buffer.concat(chunks, received);
      if (prefix[0] & COMPRESSED_FLAG)
        return answer(undefined, invalid("protocol error: compressed message without grpc-encoding"));
      declared = prefix.readUInt32BE(1);
      if (declared > options.readMaxBytes)
        return answer(
          undefined,
          new ConnectError(
            `message size ${declared} is larger than configured readMaxBytes ${options.readMaxBytes}`,
            Code.ResourceExhausted,
          ),
        );
    }
    if (declared >= 0 && received > ENVELOPE_PREFIX_BYTES + declared)
      answer(undefined, invalid("protocol error: received extra input message for unary method"));
  });
  req.once("end", () => {
    if (answered) return;
    if (received === 0)
      return answer(undefined, invalid("protocol error: missing input message for unary method"));
    if (declared < 0 || received < ENVELOPE_PREFIX_BYTES + declared)
      return answer(undefined, invalid("protocol error: incomplete envelope"));
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
    let request: Message;
    try {
      request = fromBinary(method.input, body.subarray(ENVELOPE_PREFIX_BYTES));
    } catch (error) {
      return answer(
        undefined,
        invalid(`parse binary: ${error instanceof Error ? error.message : String(error)}`),
      );
    }
    const call: GrpcCall = {
      requestHeader: { get: (name) => headerOf(req, name) },
      signal: controller.signal,
    };
    void run(method, request, call, options.logger).then(
      (message) => answer(message, undefined),
      (error: ConnectError) => answer(undefined, error),
    );
  });
}

/** The implementation's answer, encoded; its failures are ConnectErrors already, anything else is INTERNAL. */
async function run(
  method: UnaryMethod,
  request: Message,
  call: GrpcCall,
  logger: Logger,
): Promise<Uint8Array> {
  try {
    return encodeBinary(method.output, create(method.output, await method.run(request, call)));
  } catch (error) {
    if (error instanceof ConnectError) throw error;
    logger.error({ err: error, method: method.input.typeName }, "unexpected error in the gRPC unary path");
    throw new ConnectError("Internal error", Code.Internal);
  }
}
