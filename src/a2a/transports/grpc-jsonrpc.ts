// The grpc-jsonrpc transport: iac_code.a2a.transports.proto.A2AJsonRpc served by
// Connect from the generated descriptor, on grpc-host:grpc-port (default
// host:port). Each JsonRpcEnvelope carries one JSON-RPC request or response as
// UTF-8 JSON. Send answers a unary method with one final envelope; Stream
// answers any method: a stream's events (final false), then
// {"jsonrpc":"2.0","id":…} with final set. A notification (no id) gets an
// empty final envelope from Send and no message from Stream. Auth is checked
// on the call's metadata with the HTTP settings, as the official gRPC binding does.
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Logger } from "pino";
import {
  A2AJsonRpc,
  JsonRpcEnvelopeSchema,
  type JsonRpcEnvelope,
} from "../../../generated/proto/iac_code/a2a/transports/proto/a2a_jsonrpc_pb.js";
import type { Authenticator } from "../core/request/auth.js";
import { parseExtensions } from "../core/request/service-params.js";
import type { JsonRpcCaller, JsonRpcCore } from "../bindings/jsonrpc-core.js";
import { unauthenticated } from "../bindings/wire-errors.js";
import { listenOnePort, splitGrpc, type HttpHandler, type TlsMaterial } from "../../server/one-port.js";
import type { ServerTimeouts } from "../../server/timeouts.js";
import { MAX_FRAME_BYTES, replies, transportCaller } from "./replies.js";
import type { RunningTransport } from "./transport.js";

export interface GrpcJsonRpcOptions {
  core: JsonRpcCore;
  auth: Authenticator;
  logger: Logger;
  host: string;
  port: number;
  tls?: TlsMaterial;
  timeouts: ServerTimeouts;
}

const encoder = new TextEncoder();

function envelopeOf(payload: string, final: boolean): JsonRpcEnvelope {
  return create(JsonRpcEnvelopeSchema, { payload: encoder.encode(payload), final });
}

function a2aJsonRpcService(options: GrpcJsonRpcOptions): ServiceImpl<typeof A2AJsonRpc> {
  const callerOf = async (hc: HandlerContext): Promise<JsonRpcCaller> => {
    const header = (name: string): string | undefined => hc.requestHeader.get(name) ?? undefined;
    const checked = await options.auth.check(header);
    if (!checked.ok) throw unauthenticated(checked.challenge);
    return transportCaller("grpc-jsonrpc", checked.caller, hc.signal, {
      extensions: parseExtensions(header("a2a-extensions")),
      acceptLanguage: header("accept-language"),
    });
  };
  return {
    async send(request, hc) {
      for await (const reply of replies(options.core, request.payload, await callerOf(hc), {
        unaryOnly: true,
      }))
        return envelopeOf(reply.payload, true);
      // A notification: a unary RPC still returns a message, with nothing in it.
      return create(JsonRpcEnvelopeSchema, { final: true });
    },
    async *stream(request, hc) {
      for await (const reply of replies(options.core, request.payload, await callerOf(hc)))
        yield envelopeOf(reply.payload, reply.final);
    },
  };
}

export async function startGrpcJsonRpcTransport(options: GrpcJsonRpcOptions): Promise<RunningTransport> {
  const grpc = connectNodeAdapter({
    routes: (router) => router.service(A2AJsonRpc, a2aJsonRpcService(options)),
    grpc: true,
    grpcWeb: false,
    connect: false,
    readMaxBytes: MAX_FRAME_BYTES,
  });
  const notServed: HttpHandler = (_req, res) => {
    res.statusCode = 404;
    res.setHeader("Content-Type", "application/json");
    res.end(
      JSON.stringify({ error: "Not found: this listener only serves the A2A gRPC JSON-RPC envelope." }),
    );
  };
  const listener = await listenOnePort({
    host: options.host,
    port: options.port,
    http1: notServed,
    http2: splitGrpc(grpc, notServed),
    tls: options.tls,
    timeouts: options.timeouts,
  });
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const url = `grpc-jsonrpc://${host}:${listener.port}`;
  return {
    interfaces: [{ url, protocolBinding: "grpc-jsonrpc" }],
    url,
    tls: listener.tls,
    host: options.host,
    port: listener.port,
    close: (graceMs) => listener.close(graceMs),
  };
}
