// Raw clients of the custom JSON-RPC transports, written here from the wire
// description and sharing no code with the server or a2a-client: a line
// reader (stdio, unix), `ws`, grpc-js with the envelope proto loaded by
// proto-loader, and plain Redis commands. Each sends a frame's text and hands
// back the replies of that request, matched by id (or correlation_id).
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomUUID } from "node:crypto";
import net from "node:net";
import { resolve } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { Redis } from "ioredis";
import WebSocket from "ws";

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON-RPC replies

export interface Frame {
  /** The JSON-RPC response (for lines: the line without its `final` member). */
  payload: Json;
  final: boolean;
  /** The frame as it travelled (a line, a WebSocket text frame, a Redis entry's fields). */
  raw: string;
  /** Order of arrival (across all requests of all connections). */
  seq?: number;
}

let arrivals = 0;

export interface RawConnection {
  /** Sends one frame; returns the key its replies come under. */
  send(text: string, options?: { stream?: boolean }): string;
  /** The next reply of that request (rejects after `timeoutMs`). */
  next(key: string, timeoutMs?: number): Promise<Frame>;
  /** The replies of that request that arrived and were not taken by next(). */
  waiting(key: string): Frame[];
  close(): Promise<void>;
}

/** Frames by key, waited for one at a time. */
class Inbox {
  private readonly frames = new Map<string, Frame[]>();
  private readonly waiters = new Map<string, () => void>();
  failure: Error | undefined;

  push(key: string, frame: Frame): void {
    frame.seq = ++arrivals;
    const list = this.frames.get(key) ?? [];
    list.push(frame);
    this.frames.set(key, list);
    this.waiters.get(key)?.();
  }

  waiting(key: string): Frame[] {
    return [...(this.frames.get(key) ?? [])];
  }

  fail(error: Error): void {
    this.failure = error;
    for (const wake of this.waiters.values()) wake();
  }

  async next(key: string, timeoutMs = 15_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = this.frames.get(key)?.shift();
      if (frame) return frame;
      if (this.failure) throw this.failure;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no reply for ${key} within ${timeoutMs} ms`);
      await new Promise<void>((done) => {
        const timer = setTimeout(done, left);
        this.waiters.set(key, () => {
          clearTimeout(timer);
          done();
        });
      });
      this.waiters.delete(key);
    }
  }
}

/** The id a request text names ("null" when it names none or is not JSON). */
export function idOf(text: string): string {
  try {
    const id = (JSON.parse(text) as Json | null)?.id as unknown;
    return id === undefined ? "null" : JSON.stringify(id);
  } catch {
    return "null";
  }
}

/** Newline JSON on a pair of streams (a unix socket, a child's stdin/stdout). */
function lineConnection(
  write: (text: string) => void,
  input: NodeJS.ReadableStream,
  end: () => Promise<void>,
): RawConnection & { lines: string[] } {
  const inbox = new Inbox();
  const lines: string[] = [];
  let pending = "";
  input.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      lines.push(line);
      const parsed = JSON.parse(line) as Json;
      const { final, ...payload } = parsed;
      inbox.push(JSON.stringify(parsed.id ?? null), { payload, final: final === true, raw: line });
    }
  });
  input.on("end", () => inbox.fail(new Error("the connection ended")));
  return {
    lines,
    send(text) {
      write(`${text}\n`);
      return idOf(text);
    },
    next: (key, timeoutMs) => inbox.next(key, timeoutMs),
    waiting: (key) => inbox.waiting(key),
    close: end,
  };
}

export async function unixConnection(socketPath: string): Promise<RawConnection & { lines: string[] }> {
  const socket = net.connect(socketPath);
  await new Promise<void>((done, fail) => {
    socket.once("connect", done);
    socket.once("error", fail);
  });
  return lineConnection(
    (text) => socket.write(text),
    socket,
    () =>
      new Promise<void>((done) => {
        socket.once("close", () => done());
        socket.end();
      }),
  );
}

export interface StdioServer extends RawConnection {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  stderr(): string;
  exit: Promise<number | null>;
}

/** `iac-code <args>` (the built CLI) with JSON-RPC lines on its stdin/stdout. */
export function stdioServer(bin: string, args: string[], env: NodeJS.ProcessEnv): StdioServer {
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<number | null>((done) => child.once("close", (code) => done(code)));
  const connection = lineConnection(
    (text) => child.stdin.write(text),
    child.stdout,
    async () => {
      child.stdin.end();
      await exit;
    },
  );
  return { ...connection, child, stderr: () => stderr, exit };
}

export interface WsConnection extends RawConnection {
  socket: WebSocket;
}

export async function wsConnection(url: string, headers: Record<string, string> = {}): Promise<WsConnection> {
  const socket = new WebSocket(url, { headers });
  await new Promise<void>((done, fail) => {
    socket.once("open", () => done());
    socket.once("unexpected-response", (_req, res) => fail(new Error(`HTTP ${res.statusCode}`)));
    socket.once("error", fail);
  });
  const inbox = new Inbox();
  socket.on("message", (data: Buffer) => {
    const raw = data.toString("utf8");
    const frame = JSON.parse(raw) as Json;
    inbox.push(JSON.stringify(frame.id ?? null), {
      payload: frame.payload as Json,
      final: frame.final === true,
      raw,
    });
  });
  socket.once("close", () => inbox.fail(new Error("the WebSocket closed")));
  return {
    socket,
    send(text) {
      socket.send(text);
      return idOf(text);
    },
    next: (key, timeoutMs) => inbox.next(key, timeoutMs),
    waiting: (key) => inbox.waiting(key),
    close: () =>
      new Promise<void>((done) => {
        if (socket.readyState === WebSocket.CLOSED) return done();
        socket.once("close", () => done());
        socket.close();
      }),
  };
}

/** The upgrade's HTTP status when the server refuses it. */
export function wsRefusal(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((done, fail) => {
    const socket = new WebSocket(url, { headers });
    socket.once("open", () => fail(new Error("the upgrade was accepted")));
    socket.once("unexpected-response", (_req, res) => {
      done(res.statusCode ?? 0);
      socket.terminate();
    });
    socket.once("error", () => undefined);
  });
}

const envelopeDefinition = protoLoader.loadSync("iac_code/a2a/transports/proto/a2a_jsonrpc.proto", {
  includeDirs: [resolve("proto")],
});
interface EnvelopeClient extends grpc.Client {
  Send(
    request: { payload: Buffer },
    metadata: grpc.Metadata,
    callback: (error: grpc.ServiceError | null, reply?: { payload: Buffer; final: boolean }) => void,
  ): void;
  Stream(
    request: { payload: Buffer },
    metadata: grpc.Metadata,
  ): grpc.ClientReadableStream<{ payload: Buffer; final: boolean }>;
}
const EnvelopeService = (
  grpc.loadPackageDefinition(envelopeDefinition) as unknown as {
    iac_code: {
      a2a: {
        transports: { proto: { A2AJsonRpc: new (a: string, c: grpc.ChannelCredentials) => EnvelopeClient } };
      };
    };
  }
).iac_code.a2a.transports.proto.A2AJsonRpc;

export interface GrpcEnvelopeConnection extends RawConnection {
  /** gRPC failures by key (UNAUTHENTICATED...). */
  errors: Map<string, grpc.ServiceError>;
  /** The keys whose Stream call ended with status OK. */
  ended: Set<string>;
}

/** grpc-js on the envelope service; `send(text, {stream})` calls Stream, else Send. */
export function grpcEnvelopeConnection(
  target: string,
  headers: Record<string, string> = {},
): GrpcEnvelopeConnection {
  const client = new EnvelopeService(target, grpc.credentials.createInsecure());
  const inbox = new Inbox();
  const errors = new Map<string, grpc.ServiceError>();
  const ended = new Set<string>();
  let calls = 0;
  const md = (): grpc.Metadata => {
    const m = new grpc.Metadata();
    for (const [k, v] of Object.entries(headers)) m.set(k, v);
    return m;
  };
  const take = (key: string, reply: { payload?: Buffer; final?: boolean }): void => {
    // proto-loader leaves out fields at their default (an empty payload, final false).
    const raw = reply.payload?.toString("utf8") ?? "";
    // Send answers a notification with an empty envelope (a unary RPC returns a message).
    inbox.push(key, {
      payload: raw === "" ? {} : (JSON.parse(raw) as Json),
      final: reply.final === true,
      raw,
    });
  };
  return {
    errors,
    ended,
    send(text, options = {}) {
      const key = `call-${++calls}`;
      const request = { payload: Buffer.from(text, "utf8") };
      if (options.stream) {
        const stream = client.Stream(request, md());
        stream.on("data", (reply: { payload: Buffer; final: boolean }) => take(key, reply));
        stream.on("error", (error: grpc.ServiceError) => errors.set(key, error));
        stream.on("status", (status: grpc.StatusObject) => {
          if (status.code === grpc.status.OK) ended.add(key);
        });
      } else {
        client.Send(request, md(), (error, reply) => (error ? errors.set(key, error) : take(key, reply!)));
      }
      return key;
    },
    next: (key, timeoutMs) => inbox.next(key, timeoutMs),
    waiting: (key) => inbox.waiting(key),
    close() {
      client.close();
      return Promise.resolve();
    },
  };
}

/** Plain Redis commands: XADD requests, XREAD the reply stream from where it was at the start. */
export async function redisConnection(
  url: string,
  streams: { request: string; reply: string },
): Promise<RawConnection & { redis: Redis; correlationIds: string[] }> {
  const redis = new Redis(url);
  const reader = new Redis(url);
  const inbox = new Inbox();
  const correlationIds: string[] = [];
  const last = (await redis.xrevrange(streams.reply, "+", "-", "COUNT", 1))[0]?.[0] ?? "0-0";
  let closed = false;
  const reading = (async () => {
    let from = last;
    while (!closed) {
      const result = await reader.xread("BLOCK", 200, "STREAMS", streams.reply, from).catch(() => null);
      for (const [, entries] of result ?? []) {
        for (const [id, fields] of entries) {
          from = id;
          const f: Record<string, string> = {};
          for (let i = 0; i < fields.length; i += 2) f[fields[i]] = fields[i + 1];
          inbox.push(f.correlation_id, {
            payload: JSON.parse(f.payload) as Json,
            final: f.final === "true",
            raw: JSON.stringify(f),
          });
        }
      }
    }
  })();
  return {
    redis,
    correlationIds,
    send(text) {
      const key = randomUUID();
      correlationIds.push(key);
      void redis.xadd(
        streams.request,
        "*",
        "correlation_id",
        key,
        "reply_stream",
        streams.reply,
        "payload",
        text,
      );
      return key;
    },
    next: (key, timeoutMs) => inbox.next(key, timeoutMs),
    waiting: (key) => inbox.waiting(key),
    async close() {
      closed = true;
      await reading;
      reader.disconnect();
      redis.disconnect();
    },
  };
}

/** Every reply of a request up to its final one. */
export async function untilFinal(
  connection: RawConnection,
  key: string,
  timeoutMs?: number,
): Promise<Frame[]> {
  const frames: Frame[] = [];
  for (;;) {
    const frame = await connection.next(key, timeoutMs);
    frames.push(frame);
    if (frame.final) return frames;
  }
}

let counter = 0;
export function request(method: string, params?: unknown, id: string | number = `r-${++counter}`): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
}

export function message(text: string, extra: Json = {}): Json {
  return { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }] }, ...extra };
}
