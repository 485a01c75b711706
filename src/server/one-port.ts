// One listening port for HTTP/1.1 (Koa: JSON-RPC, REST, card) and HTTP/2 (gRPC,
// and h2c HTTP requests). Node's plaintext http2 server ignores allowHTTP1, so
// without TLS each connection's first bytes are compared with the HTTP/2
// connection preface and the socket is handed to an http or an http2 server.
// With TLS, ALPN chooses and http2.createSecureServer({ allowHTTP1 }) serves both.
// Every socket and HTTP/2 session is tracked so close() cannot hang on
// keep-alive connections or idle sessions.
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import http2, { type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from "node:http2";
import net, { type AddressInfo, type Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { applyHttp1Timeouts, checkingIntervalMs, DEFAULT_TIMEOUTS, type ServerTimeouts } from "./timeouts.js";

export type Http1Handler = (req: IncomingMessage, res: ServerResponse) => void;
export type Http2Handler = (req: Http2ServerRequest, res: Http2ServerResponse) => void;
/** A handler for both protocol versions (Koa's callback is one). */
export type HttpHandler = (
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
) => void;

export interface TlsMaterial {
  cert: string | Buffer;
  key: string | Buffer;
}

export interface OnePortOptions {
  host: string;
  port: number;
  /** HTTP/1.1 requests (plaintext, or TLS without h2 in ALPN). */
  http1: Http1Handler;
  /** HTTP/2 requests (h2c prior knowledge, or h2 over TLS). */
  http2: Http2Handler;
  tls?: TlsMaterial;
  /** Headers, whole request and keep-alive limits (the headers limit also bounds the preface sniffing). */
  timeouts?: ServerTimeouts;
}

export interface OnePortListener {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** Open sockets right now (for tests and diagnostics). */
  readonly connectionCount: number;
  /**
   * Stops accepting, lets idle connections go at once and in-flight requests
   * finish for up to `graceMs` (default 1000), then destroys whatever is left.
   */
  close(graceMs?: number): Promise<void>;
}

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** Sends gRPC requests (any application/grpc* content type) one way and the rest another. */
export function splitGrpc(grpc: Http2Handler, other: Http2Handler): Http2Handler {
  return (req, res) => {
    const type = req.headers["content-type"] ?? "";
    if (type.startsWith("application/grpc")) grpc(req, res);
    else other(req, res);
  };
}

export async function listenOnePort(options: OnePortOptions): Promise<OnePortListener> {
  const sockets = new Set<Socket>();
  const sessions = new Set<Http2Session>();
  let onSocketGone: (() => void) | undefined;
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once("close", () => {
      sockets.delete(socket);
      onSocketGone?.();
    });
  };
  const trackSession = (session: Http2Session): void => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  };

  // HTTP/1.1 sockets and their in-flight request counts. http.Server only tracks
  // idle connections for servers it listens itself, so this is done here.
  const h1Busy = new Map<Socket, number>();
  // Connections that have not sent a byte yet (a client's spare connection: undici opens one
  // when a streamed response is aborted, browsers preconnect). Nothing on them to finish.
  const sniffing = new Set<Socket>();
  let shuttingDown = false;
  const serveHttp1: Http1Handler = (req, res) => {
    const socket = req.socket;
    if (!h1Busy.has(socket)) socket.once("close", () => h1Busy.delete(socket));
    h1Busy.set(socket, (h1Busy.get(socket) ?? 0) + 1);
    if (shuttingDown) res.setHeader("connection", "close");
    res.once("close", () => {
      const left = (h1Busy.get(socket) ?? 1) - 1;
      h1Busy.set(socket, left);
      if (shuttingDown && left === 0) socket.end();
    });
    options.http1(req, res);
  };

  const timeouts = options.timeouts ?? DEFAULT_TIMEOUTS;
  const checking = { connectionsCheckingInterval: checkingIntervalMs(timeouts) };
  let front: net.Server;
  if (options.tls) {
    const secure = http2.createSecureServer(
      {
        cert: options.tls.cert,
        key: options.tls.key,
        allowHTTP1: true,
        ALPNProtocols: ["h2", "http/1.1"],
        ...checking,
      },
      // Under allowHTTP1 the same listener receives HTTP/1.1 requests as http objects.
      (req: Http2ServerRequest | IncomingMessage, res: Http2ServerResponse | ServerResponse) => {
        if (req.httpVersionMajor === 2) options.http2(req as Http2ServerRequest, res as Http2ServerResponse);
        else {
          clearTimeout(headersDeadlines.get(req.socket));
          bodyDeadline(req as IncomingMessage, res as ServerResponse, timeouts.requestMs);
          serveHttp1(req as IncomingMessage, res as ServerResponse);
        }
      },
    );
    applyHttp1Timeouts(secure, timeouts);
    // Nor does it enforce headersTimeout: an HTTP/1.1 connection must show its
    // first request in time (later ones are bounded by the keep-alive timeout).
    const headersDeadlines = new WeakMap<Socket, NodeJS.Timeout>();
    secure.on("secureConnection", (socket: TLSSocket) => {
      if (socket.alpnProtocol === "h2" || timeouts.headersMs <= 0) return;
      const timer = setTimeout(() => socket.destroy(), timeouts.headersMs);
      headersDeadlines.set(socket, timer);
      socket.once("close", () => clearTimeout(timer));
    });
    secure.on("connection", track);
    secure.on("session", trackSession);
    // A failed handshake is the client's problem; never let it crash the process.
    secure.on("tlsClientError", (_error: Error, socket: Socket) => {
      socket.destroy();
    });
    front = secure;
  } else {
    const h1 = http.createServer(checking, serveHttp1);
    applyHttp1Timeouts(h1, timeouts);
    // http.Server enforces the headers and request timeouts only once it has
    // emitted 'listening'; this one never listens itself (the front does).
    h1.emit("listening");
    const h2 = http2.createServer(options.http2);
    h2.on("session", trackSession);
    const sniffTimeout = timeouts.headersMs || 30_000;
    // http.createServer disables Nagle on the sockets it accepts; this front accepts them
    // instead, so it must: with Nagle, an SSE body written after its headers waited
    // for the client's delayed ACK (~40 ms per stream).
    front = net.createServer({ noDelay: true }, (socket) => {
      track(socket);
      sniffing.add(socket);
      socket.once("close", () => sniffing.delete(socket));
      sniff(socket, sniffTimeout, (isHttp2) => {
        sniffing.delete(socket);
        (isHttp2 ? h2 : h1).emit("connection", socket);
      });
    });
  }

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    front.once("error", onError);
    front.listen(options.port, options.host, () => {
      front.off("error", onError);
      resolve();
    });
  });
  const address = front.address() as AddressInfo;
  let closing: Promise<void> | undefined;

  return {
    host: options.host,
    port: address.port,
    tls: Boolean(options.tls),
    get connectionCount() {
      return sockets.size;
    },
    close(graceMs = 1000) {
      closing ??= new Promise<void>((resolve) => {
        let listening = true;
        const force = setTimeout(() => {
          for (const session of sessions) session.destroy();
          for (const socket of sockets) socket.destroy();
        }, graceMs);
        // Done when the port is released and every tracked socket is gone.
        onSocketGone = () => {
          if (listening || sockets.size > 0) return;
          clearTimeout(force);
          resolve();
        };
        front.close(() => {
          listening = false;
          onSocketGone?.();
        });
        shuttingDown = true;
        for (const [socket, busy] of h1Busy) if (busy === 0) socket.end();
        // Not ended: a client that keeps such a spare open would hold the stop for the whole grace.
        for (const socket of sniffing) socket.destroy();
        for (const session of sessions) session.close();
      });
      return closing;
    },
  };
}

/**
 * The request timeout for HTTP/1.1 over TLS: the TLS server does not enforce
 * requestTimeout itself, so a body that has not arrived in time gets a 408
 * and the connection is closed.
 */
function bodyDeadline(req: IncomingMessage, res: ServerResponse, requestMs: number): void {
  if (requestMs <= 0 || req.complete) return;
  const timer = setTimeout(() => {
    if (req.complete) return;
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    res.writeHead(408, { Connection: "close", "Content-Length": 0 });
    res.end(() => req.socket.destroy());
  }, requestMs);
  const clear = (): void => clearTimeout(timer);
  req.once("end", clear);
  res.once("close", clear);
}

/**
 * Reads until the bytes either match the whole HTTP/2 preface or differ from
 * it, then pushes them back and hands the socket over. Works when the client
 * writes one byte at a time.
 */
function sniff(socket: Socket, timeoutMs: number, handOver: (isHttp2: boolean) => void): void {
  let seen = Buffer.alloc(0);
  // Every listener is removed at hand-over: the http/http2 servers own the socket's events from then on.
  const cleanup = (): void => {
    socket.off("readable", onReadable);
    socket.off("end", onGone);
    socket.off("error", onGone);
    socket.off("timeout", onGone);
    socket.setTimeout(0);
  };
  const onGone = (): void => {
    cleanup();
    socket.destroy();
  };
  const onReadable = (): void => {
    let chunk: Buffer | null;
    while ((chunk = socket.read() as Buffer | null) !== null) seen = Buffer.concat([seen, chunk]);
    if (seen.length === 0) return;
    const n = Math.min(seen.length, H2_PREFACE.length);
    const prefixMatches = seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
    if (prefixMatches && n < H2_PREFACE.length) return;
    cleanup();
    socket.unshift(seen);
    handOver(prefixMatches);
  };
  socket.on("readable", onReadable);
  socket.on("end", onGone);
  socket.on("error", onGone);
  socket.on("timeout", onGone);
  socket.setTimeout(timeoutMs);
}
