// The preface-sniffing listener: HTTP/1.1 (Koa) and h2c (gRPC via Connect, and
// plain HTTP/2 requests to Koa) on one plaintext port, the same with TLS/ALPN,
// and close() that returns with keep-alive sockets and idle sessions open.
import http from "node:http";
import https from "node:https";
import http2 from "node:http2";
import net from "node:net";
import { expect } from "chai";
import Koa from "koa";
import Router from "@koa/router";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { pb } from "../../src/contract/index.js";
import { listenOnePort, splitGrpc, type OnePortListener } from "../../src/server/one-port.js";
import { DEFAULT_TIMEOUTS, type ServerTimeouts } from "../../src/server/timeouts.js";
import { stalledRequest, idleKeepAlive } from "../server/stalled.js";
import { a2aGrpcClient, collect, metadata, unary, type A2AGrpcClient } from "./fixtures/grpc-client.js";
import { makeLoopbackCert, type LoopbackCert } from "./fixtures/tls.js";

function koaApp(): Koa {
  const app = new Koa();
  const router = new Router();
  router.get("/ping", (ctx) => {
    ctx.body = { pong: true, httpVersion: ctx.req.httpVersion, remotePort: ctx.req.socket.remotePort };
  });
  router.post("/echo", async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    ctx.body = { echoed: Buffer.concat(chunks).toString("utf8") };
  });
  router.get("/sse", (ctx) => {
    ctx.set("content-type", "text/event-stream");
    ctx.body = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
  });
  router.post("/slow-sse", async (ctx) => {
    // Reads the whole body, then streams for 1.2 s: longer than the test's request timeout.
    for await (const chunk of ctx.req) void chunk;
    ctx.respond = false;
    ctx.res.writeHead(200, { "content-type": "text/event-stream" });
    for (let i = 0; i < 6; i++) {
      ctx.res.write(`data: ${i}\n\n`);
      await new Promise((r) => setTimeout(r, 200));
    }
    ctx.res.end();
  });
  router.get("/hold", (ctx) => {
    // An SSE stream that never ends on its own.
    ctx.set("content-type", "text/event-stream");
    ctx.status = 200;
    ctx.respond = false;
    ctx.res.writeHead(200, { "content-type": "text/event-stream" });
    ctx.res.write("data: open\n\n");
  });
  app.use(router.routes());
  return app;
}

function routes(router: ConnectRouter): void {
  router.service(pb.A2AService, {
    getTask(request) {
      if (request.id === "missing") throw new ConnectError(`Task ${request.id} not found`, Code.NotFound);
      return create(pb.TaskSchema, {
        id: request.id,
        contextId: "ctx",
        status: { state: pb.TaskState.WORKING },
      });
    },
    async *sendStreamingMessage(request) {
      const id = request.message?.messageId ?? "";
      yield create(pb.StreamResponseSchema, {
        payload: { case: "task", value: { id, contextId: "ctx", status: { state: pb.TaskState.SUBMITTED } } },
      });
      await Promise.resolve();
      yield create(pb.StreamResponseSchema, {
        payload: {
          case: "statusUpdate",
          value: { taskId: id, contextId: "ctx", status: { state: pb.TaskState.COMPLETED } },
        },
      });
    },
  });
}

async function start(tls?: LoopbackCert, timeouts?: Partial<ServerTimeouts>): Promise<OnePortListener> {
  const koa = koaApp().callback();
  const grpcHandler = connectNodeAdapter({ routes, grpc: true, grpcWeb: false, connect: false });
  return listenOnePort({
    host: "127.0.0.1",
    port: 0,
    http1: (req, res) => void koa(req, res),
    http2: splitGrpc(grpcHandler, (req, res) => void koa(req, res)),
    tls: tls ? { cert: tls.cert, key: tls.key } : undefined,
    timeouts: { ...DEFAULT_TIMEOUTS, ...timeouts },
  });
}

function h1Get(
  port: number,
  path: string,
  options: { agent?: http.Agent; tls?: boolean; ca?: string } = {},
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = (options.tls ? https : http).get(
      { host: "127.0.0.1", port, path, agent: options.agent, ca: options.ca },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8"),
            headers: response.headers,
          }),
        );
      },
    );
    request.on("error", reject);
  });
}

function h2Request(
  session: http2.ClientHttp2Session,
  path: string,
  method = "GET",
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":path": path, ":method": method });
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve({ status, body: Buffer.concat(chunks).toString("utf8") }));
    stream.on("error", reject);
    stream.end(body);
  });
}

/** Writes `text` one byte per event-loop turn and reads the raw reply until the server closes. */
function sendByteByByte(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.on("error", reject);
    const bytes = Buffer.from(text, "utf8");
    let i = 0;
    const next = (): void => {
      if (i >= bytes.length) return;
      socket.write(bytes.subarray(i, i + 1));
      i += 1;
      setImmediate(next);
    };
    socket.once("connect", next);
  });
}

describe("a2a-bindings: one port, plaintext (preface sniffing)", () => {
  let listener: OnePortListener;
  let grpcClient: A2AGrpcClient;
  let h2: http2.ClientHttp2Session;
  let agent: http.Agent;

  before(async () => {
    listener = await start();
    grpcClient = a2aGrpcClient(`127.0.0.1:${listener.port}`);
    h2 = http2.connect(`http://127.0.0.1:${listener.port}`);
    agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  });

  after(async () => {
    grpcClient.close();
    h2.close();
    agent.destroy();
    await listener.close();
  });

  it("serves HTTP/1.1 JSON and SSE, and keeps a connection alive across requests", async () => {
    const ports = new Set<number>();
    for (let i = 0; i < 3; i += 1) {
      const reply = await h1Get(listener.port, "/ping", { agent });
      expect(reply.status).to.equal(200);
      const body = JSON.parse(reply.body) as { httpVersion: string; remotePort: number };
      expect(body.httpVersion).to.equal("1.1");
      ports.add(body.remotePort);
    }
    expect(ports.size).to.equal(1);
    const sse = await h1Get(listener.port, "/sse", { agent });
    expect(sse.headers["content-type"]).to.match(/^text\/event-stream/);
    expect(sse.body).to.equal("data: 1\n\ndata: 2\n\ndata: 3\n\n");
  });

  it("serves h2c requests to Koa and gRPC (unary, streaming, NOT_FOUND) on the same port", async () => {
    const ping = await h2Request(h2, "/ping");
    expect(ping.status).to.equal(200);
    expect((JSON.parse(ping.body) as { httpVersion: string }).httpVersion).to.equal("2.0");
    const echo = await h2Request(h2, "/echo", "POST", "hello h2c");
    expect(JSON.parse(echo.body)).to.deep.equal({ echoed: "hello h2c" });

    const task = await unary<Record<string, unknown>>((cb) =>
      grpcClient.GetTask({ id: "t-1" }, metadata(), cb),
    );
    expect(task.id).to.equal("t-1");
    expect((task.status as { state: string }).state).to.equal("TASK_STATE_WORKING");
    const events = await collect(
      grpcClient.SendStreamingMessage(
        { message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "x" }] } },
        metadata(),
      ),
    );
    expect(events.map((event) => event.payload)).to.deep.equal(["task", "statusUpdate"]);
    try {
      await unary((cb) => grpcClient.GetTask({ id: "missing" }, metadata(), cb));
      expect.fail("GetTask(missing) must fail");
    } catch (error) {
      expect((error as grpc.ServiceError).code).to.equal(grpc.status.NOT_FOUND);
    }
  });

  it("interleaves HTTP/1.1, h2c and gRPC clients", async () => {
    const rounds = Array.from({ length: 5 }, async (_, i) => {
      const [h1Reply, h2Reply, task, events] = await Promise.all([
        h1Get(listener.port, "/ping"),
        h2Request(h2, "/echo", "POST", `round ${i}`),
        unary<Record<string, unknown>>((cb) => grpcClient.GetTask({ id: `t-${i}` }, metadata(), cb)),
        collect(grpcClient.SendStreamingMessage({ message: { messageId: `m-${i}` } }, metadata())),
      ]);
      expect(h1Reply.status).to.equal(200);
      expect(JSON.parse(h2Reply.body)).to.deep.equal({ echoed: `round ${i}` });
      expect(task.id).to.equal(`t-${i}`);
      expect(events).to.have.length(2);
    });
    await Promise.all(rounds);
  });

  it("recognises HTTP/1.1 written one byte at a time, even when it starts like the preface", async () => {
    const body = '{"a":1}';
    const raw = await sendByteByByte(
      listener.port,
      `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(raw.startsWith("HTTP/1.1 200")).to.equal(true);
    expect(raw).to.contain(JSON.stringify({ echoed: body }));
    const get = await sendByteByByte(
      listener.port,
      "GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    expect(get.startsWith("HTTP/1.1 200")).to.equal(true);
  });

  it("recognises the HTTP/2 preface split across writes", async () => {
    const socket = net.connect(listener.port, "127.0.0.1");
    const firstFrame = new Promise<Buffer>((resolve, reject) => {
      let seen = Buffer.alloc(0);
      socket.on("data", (chunk: Buffer) => {
        seen = Buffer.concat([seen, chunk]);
        if (seen.length >= 9) resolve(seen.subarray(0, 9));
      });
      socket.on("error", reject);
    });
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write("PRI * HTTP/2.0\r\n");
    await new Promise((resolve) => setImmediate(resolve));
    socket.write("\r\nSM\r\n\r\n");
    socket.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])); // empty SETTINGS frame
    const header = await firstFrame;
    expect(header[3], "frame type").to.equal(4); // the server's SETTINGS
    socket.destroy();
  });

  it("drops a connection that closes or stays silent before its first bytes", async () => {
    const early = net.connect(listener.port, "127.0.0.1");
    await new Promise<void>((resolve) => early.once("connect", () => resolve()));
    early.end();
    await new Promise<void>((resolve) => early.once("close", () => resolve()));
    const quiet = await start(undefined, { headersMs: 50 });
    try {
      const silent = net.connect(quiet.port, "127.0.0.1");
      // The server ends the silent connection; the client sees it close.
      await new Promise<void>((resolve) => silent.once("close", () => resolve()));
    } finally {
      await quiet.close();
    }
  });
});

describe("a2a-bindings: one port closes without hanging", () => {
  it("returns from close() with keep-alive sockets, idle h2 sessions and grpc channels open", async () => {
    const listener = await start();
    const agent = new http.Agent({ keepAlive: true });
    const session = http2.connect(`http://127.0.0.1:${listener.port}`);
    const client = a2aGrpcClient(`127.0.0.1:${listener.port}`);
    try {
      await h1Get(listener.port, "/ping", { agent });
      await h2Request(session, "/ping");
      await unary((cb) => client.GetTask({ id: "x" }, metadata(), cb));
      expect(listener.connectionCount).to.be.greaterThan(2);
      await listener.close();
      expect(listener.connectionCount).to.equal(0);
    } finally {
      agent.destroy();
      session.destroy();
      client.close();
    }
  });

  it("ends a stream that never finishes once the grace period is over", async () => {
    const listener = await start();
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      http.get({ host: "127.0.0.1", port: listener.port, path: "/hold" }, resolve).on("error", reject);
    });
    const ended = new Promise<void>((resolve) => {
      response.on("close", () => resolve());
      response.on("error", () => resolve());
      response.resume();
    });
    await listener.close(50);
    await ended;
    expect(listener.connectionCount).to.equal(0);
  });

  it("reports a port that is already taken", async () => {
    const first = await start();
    try {
      const koa = koaApp().callback();
      let failed = false;
      try {
        await listenOnePort({
          host: "127.0.0.1",
          port: first.port,
          http1: (req, res) => void koa(req, res),
          http2: (req, res) => void koa(req, res),
        });
      } catch (error) {
        failed = true;
        expect((error as NodeJS.ErrnoException).code).to.equal("EADDRINUSE");
      }
      expect(failed).to.equal(true);
    } finally {
      await first.close();
    }
  });
});

describe("a2a-bindings: one port with TLS (ALPN)", () => {
  let tls: LoopbackCert;
  let listener: OnePortListener;

  before(async () => {
    tls = makeLoopbackCert();
    listener = await start(tls);
  });
  after(async () => {
    await listener.close(50);
    tls.dispose();
  });

  it("serves HTTP/1.1 over TLS, h2 over TLS and gRPC over TLS", async () => {
    expect(listener.tls).to.equal(true);
    const h1Reply = await h1Get(listener.port, "/ping", { tls: true, ca: tls.cert });
    expect(h1Reply.status).to.equal(200);
    expect((JSON.parse(h1Reply.body) as { httpVersion: string }).httpVersion).to.equal("1.1");

    const session = http2.connect(`https://127.0.0.1:${listener.port}`, { ca: tls.cert });
    try {
      const h2Reply = await h2Request(session, "/ping");
      expect((JSON.parse(h2Reply.body) as { httpVersion: string }).httpVersion).to.equal("2.0");
    } finally {
      session.close();
    }

    // The certificate also names localhost; checking that name avoids TLS SNI with an IP address.
    const client = a2aGrpcClient(
      `127.0.0.1:${listener.port}`,
      grpc.credentials.createSsl(Buffer.from(tls.cert)),
      {
        "grpc.ssl_target_name_override": "localhost",
      },
    );
    try {
      const task = await unary<Record<string, unknown>>((cb) =>
        client.GetTask({ id: "tls" }, metadata(), cb),
      );
      expect(task.id).to.equal("tls");
      const events = await collect(client.SendStreamingMessage({ message: { messageId: "m" } }, metadata()));
      expect(events.map((event) => event.payload)).to.deep.equal(["task", "statusUpdate"]);
    } finally {
      client.close();
    }
  });

  it("rejects clients that do not trust the certificate, and survives them", async () => {
    let failed = false;
    try {
      await h1Get(listener.port, "/ping", { tls: true });
    } catch (error) {
      failed = true;
      expect(String(error)).to.match(/certificate/i);
    }
    expect(failed).to.equal(true);
    const again = await h1Get(listener.port, "/ping", { tls: true, ca: tls.cert });
    expect(again.status).to.equal(200);
  });
});

describe("a2a-bindings: one port timeouts", () => {
  const short = { headersMs: 300, requestMs: 500, keepAliveMs: 400 };

  for (const withTls of [false, true]) {
    describe(withTls ? "with TLS" : "plaintext", () => {
      let tls: LoopbackCert | undefined;
      let listener: OnePortListener;
      before(async () => {
        tls = withTls ? makeLoopbackCert() : undefined;
        listener = await start(tls, short);
      });
      after(async () => {
        await listener.close(50);
        tls?.dispose();
      });

      it("drops a request whose body stalls, and one whose headers stall, with 408", async () => {
        const body = await stalledRequest(listener.port, { tls: withTls, stallIn: "body", path: "/echo" });
        expect(body.reply).to.match(/^HTTP\/1\.1 408/);
        expect(body.closedAfterMs).to.be.within(300, 5000);
        const headers = await stalledRequest(listener.port, { tls: withTls, stallIn: "headers" });
        // Over TLS the connection is closed without a reply (the TLS server has no 408 for it).
        if (!withTls) expect(headers.reply).to.match(/^HTTP\/1\.1 408/);
        expect(headers.closedAfterMs).to.be.below(5000);
      });

      it("closes an idle keep-alive connection after the keep-alive timeout", async () => {
        const idle = await idleKeepAlive(listener.port, "/ping", { tls: withTls });
        expect(idle.firstReply).to.match(/^HTTP\/1\.1 200/);
        expect(idle.closedAfterIdleMs).to.be.within(300, 5000);
      });

      it("a response streamed for longer than the request timeout is not cut", async () => {
        const reply = await new Promise<string>((resolve, reject) => {
          const request = (withTls ? https : http).request(
            { host: "127.0.0.1", port: listener.port, path: "/slow-sse", method: "POST", ca: tls?.cert },
            (response) => {
              let text = "";
              response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
              response.on("end", () => resolve(text));
              response.on("error", reject);
            },
          );
          request.on("error", reject);
          request.end("{}");
        });
        expect(reply).to.equal([0, 1, 2, 3, 4, 5].map((i) => `data: ${i}\n\n`).join(""));
      });
    });
  }
});
