// The websocket transport: one WebSocket route (`ws-path`) on host:port, with
// the HTTP auth settings checked at the upgrade (401 otherwise). The client
// sends JSON-RPC requests as text frames; each server frame is
// {"id":<request id>,"payload":<JSON-RPC response>,"final":<bool>}: one final
// frame for a unary call; a stream's events, then {"jsonrpc":"2.0","id":…} as
// the final payload. Requests on one connection are answered concurrently.
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import type { Authenticator, AuthResult } from "../core/request/auth.js";
import { parseExtensions } from "../core/request/service-params.js";
import type { JsonRpcCore } from "../bindings/jsonrpc-core.js";
import type { TlsMaterial } from "../../server/one-port.js";
import { applyHttp1Timeouts, type ServerTimeouts } from "../../server/timeouts.js";
import { replyMessage } from "./frames.js";
import { InFlight, MAX_FRAME_BYTES, replies, transportCaller } from "./replies.js";
import type { RunningTransport } from "./transport.js";

export interface WebSocketOptions {
  core: JsonRpcCore;
  auth: Authenticator;
  logger: Logger;
  host: string;
  port: number;
  wsPath: string;
  tls?: TlsMaterial;
  timeouts: ServerTimeouts;
}

function refuse(socket: Duplex, status: number, reason: string, error: string, challenge?: string): void {
  const body = JSON.stringify({ error });
  const authenticate = challenge ? `WWW-Authenticate: ${challenge}\r\n` : "";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n${authenticate}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

const headerOf = (req: IncomingMessage) => (name: string) => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** One connection: every text (or binary UTF-8) frame is a request, answered as it comes. */
function serve(ws: WebSocket, req: IncomingMessage, caller: AuthResult, options: WebSocketOptions): InFlight {
  const requests = new InFlight();
  const who = transportCaller("websocket", caller, requests.signal, {
    extensions: parseExtensions(req.headers["a2a-extensions"]),
    acceptLanguage: req.headers["accept-language"],
  });
  const answer = async (frame: Buffer): Promise<void> => {
    for await (const reply of replies(options.core, frame, who)) {
      if (ws.readyState !== ws.OPEN) break;
      ws.send(replyMessage(reply));
    }
  };
  ws.on("message", (data: RawData) => {
    // binaryType "nodebuffer": fragments arrive joined as one Buffer.
    requests.track(answer(data as Buffer));
  });
  ws.once("close", () => void requests.abort());
  ws.on("error", (error) => options.logger.debug({ err: error }, "websocket connection failed"));
  return requests;
}

export async function startWebSocketTransport(options: WebSocketOptions): Promise<RunningTransport> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const connections = new Map<WebSocket, InFlight>();
  const onRequest = (_req: IncomingMessage, res: http.ServerResponse): void => {
    res.writeHead(426, { "Content-Type": "application/json", Upgrade: "websocket" });
    res.end(
      JSON.stringify({
        error: `Upgrade Required: this port serves the A2A WebSocket transport at ${options.wsPath}`,
      }),
    );
  };
  const server = options.tls
    ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, onRequest)
    : http.createServer(onRequest);
  applyHttp1Timeouts(server, options.timeouts);
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    const pathname = new URL(req.url ?? "/", "http://localhost").pathname;
    if (pathname !== options.wsPath)
      return refuse(socket, 404, "Not Found", `Not found: the WebSocket route is ${options.wsPath}`);
    void options.auth.check(headerOf(req)).then((checked) => {
      if (socket.destroyed) return;
      if (!checked.ok) return refuse(socket, 401, "Unauthorized", "Unauthorized", checked.challenge);
      wss.handleUpgrade(req, socket, head, (ws) => {
        connections.set(ws, serve(ws, req, checked.caller, options));
        ws.once("close", () => connections.delete(ws));
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const url = `${options.tls ? "wss" : "ws"}://${host}:${port}${options.wsPath}`;
  return {
    interfaces: [{ url, protocolBinding: "websocket" }],
    url,
    tls: Boolean(options.tls),
    host: options.host,
    port,
    async close(graceMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await Promise.all([...connections.values()].map((requests) => requests.drain(graceMs)));
      for (const ws of connections.keys()) ws.close(1001, "server shutting down");
      wss.close();
      // Sockets still open (a client that does not answer the close) go after the grace.
      const late = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, graceMs);
      await closed;
      clearTimeout(late);
    },
  };
}
