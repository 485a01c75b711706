// The official A2A gRPC binding: lf.a2a.v1.A2AService served by Connect from
// the generated service descriptor. Each RPC reads the caller from metadata
// (auth, a2a-version, a2a-extensions), calls the core, and returns its
// protobuf-es result; failures become a gRPC status with ErrorInfo details.
import { ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Message } from "@bufbuild/protobuf";
import type { OutgoingHttpHeaders } from "node:http";
import type { Logger } from "pino";
import { pb } from "../../contract/index.js";
import type { Authenticator } from "../core/request/auth.js";
import type { CallContext } from "../core/request/call-context.js";
import { A2A_METHODS, callStream, callUnary } from "../core/methods.js";
import type { A2AService as A2ACore } from "../core/service.js";
import { checkDecodedRequest } from "../core/request/decoded-request.js";
import { checkVersion, parseExtensions } from "../core/request/service-params.js";
import type { Http2Handler } from "../../server/one-port.js";
import { withUnaryFastPath, type A2AGrpcImpl, type GrpcCall } from "./grpc-unary.js";
import { asA2AError, connectErrorOf, unauthenticated } from "./wire-errors.js";

/** Largest gRPC request message accepted by default. */
export const GRPC_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

export interface GrpcBindingOptions {
  core: A2ACore;
  auth: Authenticator;
  logger: Logger;
  /** Largest accepted request message (default 32 MiB). */
  readMaxBytes?: number;
}

/** gRPC metadata → the core's CallContext, with the same auth rules as HTTP. */
async function callContext(options: GrpcBindingOptions, hc: GrpcCall): Promise<CallContext> {
  const header = (name: string): string | undefined => hc.requestHeader.get(name) ?? undefined;
  const checked = await options.auth.check(header);
  if (!checked.ok) throw unauthenticated(checked.challenge);
  const { caller } = checked;
  checkVersion(header("a2a-version"));
  return {
    owner: caller.owner,
    authenticated: caller.authenticated,
    requestedExtensions: parseExtensions(header("a2a-extensions")),
    acceptLanguage: header("accept-language"),
    binding: "grpc",
    signal: hc.signal,
  };
}

export function a2aGrpcService(options: GrpcBindingOptions): A2AGrpcImpl {
  const { core, logger } = options;
  const fail = (error: unknown, where: string): ConnectError =>
    error instanceof ConnectError ? error : connectErrorOf(asA2AError(error, logger, where));

  async function unary<T>(
    where: string,
    hc: GrpcCall,
    request: Message,
    run: (ctx: CallContext) => Promise<T>,
  ): Promise<T> {
    try {
      const ctx = await callContext(options, hc);
      checkDecodedRequest(request);
      return await run(ctx);
    } catch (error) {
      throw fail(error, where);
    }
  }

  // Errors before the first event end the call with a status and no messages.
  async function* streamed(
    where: string,
    hc: GrpcCall,
    request: Message,
    open: (ctx: CallContext) => Promise<AsyncIterable<pb.StreamResponse>>,
  ): AsyncGenerator<pb.StreamResponse> {
    let events: AsyncIterable<pb.StreamResponse>;
    try {
      const ctx = await callContext(options, hc);
      checkDecodedRequest(request);
      events = await open(ctx);
    } catch (error) {
      throw fail(error, where);
    }
    try {
      yield* events;
    } catch (error) {
      throw fail(error, where);
    }
  }

  // One implementation per method of the table; the descriptor typed each one, so the shapes match.
  const impl: Record<string, unknown> = {};
  for (const method of A2A_METHODS) {
    impl[method.localName] = method.streaming
      ? (request: Message, hc: GrpcCall) =>
          streamed(method.name, hc, request, (ctx) => callStream(core, method, request, ctx))
      : (request: Message, hc: GrpcCall) =>
          unary(method.name, hc, request, (ctx) => callUnary(core, method, request, ctx));
  }
  return impl as A2AGrpcImpl;
}

/**
 * A node http2 request handler serving the A2A gRPC service: plain unary calls
 * on the fast path (grpc-unary.ts), everything else through Connect.
 */
export function createA2aGrpcHandler(options: GrpcBindingOptions): Http2Handler {
  const impl = a2aGrpcService(options);
  const readMaxBytes = options.readMaxBytes ?? GRPC_MAX_MESSAGE_BYTES;
  const connect = connectNodeAdapter({
    routes: (router) => {
      router.service(pb.A2AService, impl);
    },
    grpc: true,
    grpcWeb: false,
    connect: false,
    readMaxBytes,
  });
  const viaConnect: Http2Handler = (req, res) => {
    // Connect reports a request message it cannot decode as INTERNAL before any
    // code of ours runs; it is the client's bad input: INVALID_ARGUMENT.
    const addTrailers = res.addTrailers.bind(res);
    res.addTrailers = (trailers: OutgoingHttpHeaders) => {
      if (
        trailers["grpc-status"] === "13" &&
        /^parse(?: |%20)(?:binary|JSON)/.test(String(trailers["grpc-message"]))
      )
        trailers["grpc-status"] = "3";
      addTrailers(trailers);
    };
    connect(req, res);
  };
  return withUnaryFastPath({ impl, readMaxBytes, logger: options.logger, connect: viaConnect });
}
