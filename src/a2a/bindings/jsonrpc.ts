// JSON-RPC 2.0 over HTTP: read the body (Content-Type, size and shape limits),
// hand it to the transport-independent core (jsonrpc-core.ts), and answer with
// JSON, or SSE whose every `data:` is one JSON-RPC response.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { CONNECTION_CLOSED } from "../core/request/call-context.js";
import { A2AError } from "../core/request/errors.js";
import type { A2AService } from "../core/service.js";
import { writeSse } from "./sse.js";
import { readJsonBody } from "../../server/json-body.js";
import { errorBody, JsonRpcCore, unreadableBody } from "./jsonrpc-core.js";

export const MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface JsonRpcOptions {
  service: A2AService;
  logger: Logger;
}

/** Everything a request carries that the binding needs besides the body. */
export interface JsonRpcCall {
  req: IncomingMessage;
  res: ServerResponse;
  caller: { owner: string; authenticated: boolean };
  requestedExtensions: string[];
}

function sendJson(res: ServerResponse, body: string, status = 200): void {
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

export class JsonRpcBinding {
  private readonly core: JsonRpcCore;

  constructor(options: JsonRpcOptions) {
    this.core = new JsonRpcCore(options.service, options.logger);
  }

  async handle(call: JsonRpcCall): Promise<void> {
    const { req, res } = call;
    const contentType = String(req.headers["content-type"] ?? "application/json").toLowerCase();
    if (!/^application\/(?:[a-z0-9.+-]*\+)?json\b/.test(contentType)) {
      req.resume();
      const refused = new A2AError("ContentTypeNotSupportedError", "Content-Type must be application/json");
      return sendJson(res, errorBody(null, refused));
    }
    const read = await readJsonBody(req, { maxBytes: MAX_BODY_BYTES });
    if (!read.ok || read.value === undefined) return sendJson(res, unreadableBody(read));

    const abort = new AbortController();
    // The client went away before the answer was written in full (after it, nobody is left to tell).
    res.on("close", () => {
      if (!res.writableFinished) abort.abort(CONNECTION_CLOSED);
    });
    const outcome = await this.core.dispatch(read.value, {
      owner: call.caller.owner,
      authenticated: call.caller.authenticated,
      requestedExtensions: call.requestedExtensions,
      acceptLanguage: req.headers["accept-language"],
      binding: "jsonrpc",
      signal: abort.signal,
      version: req.headers["a2a-version"] as string | undefined,
    });
    // A notification gets no JSON-RPC response: 204 once it has run.
    if (outcome.kind === "none") return void res.writeHead(204).end();
    if (outcome.kind === "response") return sendJson(res, outcome.body);
    await writeSse(res, outcome.first, outcome.rest, outcome);
  }
}
