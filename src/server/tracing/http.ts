// The HTTP server span of every request a server answers (HTTP/1.1 and HTTP/2,
// so JSON-RPC, REST and gRPC alike), child of the caller's W3C `traceparent`
// when it sends one. The path goes on the span without its query string.
import type { EventEmitter } from "node:events";
import type { IncomingHttpHeaders } from "node:http";
import { context, trace } from "@opentelemetry/api";
import { SpanKind, SpanStatusCode, startSpan, tracingOn, extractContext, type Scope } from "./index.js";

interface Request {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  httpVersion: string;
}
interface Response {
  statusCode: number;
  once(event: "close", listener: () => void): unknown;
}

/** `handler` with a server span around each request (as is while tracing is off). */
export function tracedHttp<Req extends Request, Res extends Response>(
  scope: Scope,
  handler: (req: Req, res: Res) => void,
): (req: Req, res: Res) => void {
  return (req, res) => {
    if (!tracingOn()) return handler(req, res);
    const method = req.method ?? "GET";
    const path = (req.url ?? "/").split("?")[0];
    const grpc = String(req.headers["content-type"] ?? "").startsWith("application/grpc");
    const span = startSpan(
      scope,
      grpc ? path.replace(/^\//, "") : method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": method,
          "url.path": path,
          "network.protocol.version": req.httpVersion,
          ...(grpc ? { "rpc.system": "grpc" } : {}),
        },
      },
      extractContext(req.headers),
    );
    res.once("close", () => {
      span?.setAttribute("http.response.status_code", res.statusCode);
      if (res.statusCode >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
      span?.end();
    });
    if (!span) return handler(req, res);
    // The request's and response's listeners (a body read on "data"/"end") run in the span too.
    const active = trace.setSpan(context.active(), span);
    context.bind(active, req as unknown as EventEmitter);
    context.bind(active, res as unknown as EventEmitter);
    context.with(active, () => handler(req, res));
  };
}
