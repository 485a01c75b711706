// Load generators shared by the A2A benchmarks: the same trivial turn driven
// over JSON-RPC (node:http on kept-alive connections, SSE read incrementally) and over gRPC (@grpc/grpc-js
// with stubs loaded from proto/), plus bounded worker pools and percentiles.
import { randomUUID } from "node:crypto";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { performance } from "node:perf_hooks";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { parseSseText } from "../../src/server/sse.js";

export interface StreamFigures {
  events: number;
  /** Milliseconds from sending the request to the first event. */
  firstMs: number;
}

export interface Driver {
  /** One SendMessage; resolves with its latency in ms. */
  unary(): Promise<number>;
  /** One SendStreamingMessage of `chunks` text chunks (the prompt "stream <chunks>"). */
  stream(): Promise<StreamFigures>;
  close(): void;
}

function userMessage(text: string): { message: object } {
  return { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }] } };
}

/** One POST on a kept-alive connection; resolves with the response once its headers are in. */
function post(agent: http.Agent, url: URL, body: string, accept: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          accept,
          "a2a-version": "1.0",
        },
      },
      resolve,
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** The whole body of a response, and when its first blank line (the end of an SSE event) arrived. */
function readBody(
  response: http.IncomingMessage,
  started: number,
): Promise<{ text: string; firstMs: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let firstMs = -1;
    response.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (firstMs < 0 && Buffer.concat(chunks).includes("\n\n")) firstMs = performance.now() - started;
    });
    response.on("error", reject);
    response.on("end", () => resolve({ text: Buffer.concat(chunks).toString("utf8"), firstMs }));
  });
}

/** One JSON-RPC call on its own kept-alive connection pool; the result (throws on an error reply). */
export async function jsonRpcCall(
  agent: http.Agent,
  endpoint: string,
  method: string,
  params: object,
): Promise<Record<string, unknown>> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
  const response = await post(agent, new URL(endpoint), body, "application/json");
  const reply = JSON.parse((await readBody(response, 0)).text) as {
    result: Record<string, unknown>;
    error?: unknown;
  };
  if (reply.error) throw new Error(JSON.stringify(reply.error));
  return reply.result;
}

// node:http rather than fetch: measured against the raw server, fetch cost the load process
// 545-618 us of CPU per unary request and node:http 93-99 us, on the two cores the servers use.
export function jsonRpcDriver(endpoint: string, chunks: number): Driver {
  const url = new URL(endpoint);
  const agent = new http.Agent({ keepAlive: true });
  let id = 0;
  const body = (method: string, text: string) =>
    JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params: userMessage(text) });
  return {
    async unary() {
      const started = performance.now();
      const response = await post(agent, url, body("SendMessage", "hello"), "application/json");
      const reply = JSON.parse((await readBody(response, started)).text) as {
        result?: { task?: { status?: { state?: string } } };
      };
      if (reply.result?.task?.status?.state !== "TASK_STATE_INPUT_REQUIRED")
        throw new Error(`unexpected unary reply: ${JSON.stringify(reply).slice(0, 300)}`);
      return performance.now() - started;
    },
    async stream() {
      const started = performance.now();
      const response = await post(
        agent,
        url,
        body("SendStreamingMessage", `stream ${chunks}`),
        "text/event-stream",
      );
      const { text, firstMs } = await readBody(response, started);
      return { events: parseSseText(text).length, firstMs };
    },
    close: () => agent.destroy(),
  };
}

// ---- gRPC: one grpc-js client from our proto/ for every server ---------------

const require = createRequire(import.meta.url);
const definition = protoLoader.loadSync("lf/a2a/v1/a2a.proto", {
  includeDirs: [path.resolve("proto"), path.dirname(require.resolve("google-proto-files/package.json"))],
  enums: String,
  oneofs: true,
});
interface GrpcA2AClient extends grpc.Client {
  SendMessage(req: object, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, v?: object) => void): void;
  SendStreamingMessage(req: object, md: grpc.Metadata): grpc.ClientReadableStream<object>;
}
// grpc-js builds clients at run time from the loaded definition.
const GrpcClient = (
  grpc.loadPackageDefinition(definition) as unknown as {
    lf: {
      a2a: { v1: { A2AService: new (target: string, creds: grpc.ChannelCredentials) => GrpcA2AClient } };
    };
  }
).lf.a2a.v1.A2AService;

function grpcMetadata(): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set("a2a-version", "1.0");
  return md;
}

export function grpcDriver(target: string, chunks: number): Driver {
  const client = new GrpcClient(target, grpc.credentials.createInsecure());
  return {
    unary: () =>
      new Promise((resolve, reject) => {
        const started = performance.now();
        client.SendMessage(userMessage("hello"), grpcMetadata(), (error) =>
          error ? reject(error) : resolve(performance.now() - started),
        );
      }),
    stream: () =>
      new Promise((resolve, reject) => {
        const started = performance.now();
        let events = 0;
        let firstMs = -1;
        const call = client.SendStreamingMessage(userMessage(`stream ${chunks}`), grpcMetadata());
        call.on("data", () => {
          if (events === 0) firstMs = performance.now() - started;
          events += 1;
        });
        call.on("error", reject);
        call.on("end", () => resolve({ events, firstMs }));
      }),
    close: () => client.close(),
  };
}

// ---- pools and statistics ------------------------------------------------------

/** Runs `total` jobs on `concurrency` workers; returns the results and the elapsed seconds. */
export async function pool<T>(
  total: number,
  concurrency: number,
  job: () => Promise<T>,
): Promise<{ results: T[]; seconds: number }> {
  const results: T[] = [];
  let started = 0;
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async () => {
      while (started < total) {
        started += 1;
        results.push(await job());
      }
    }),
  );
  return { results, seconds: (performance.now() - begin) / 1000 };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

export const median = (values: number[]): number => percentile(values, 50);
