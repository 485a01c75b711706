/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument -- tests read free-form JSON-RPC replies through `any` */
// Test harness: a real A2A server on 127.0.0.1:0 over temporary directories,
// backed by the fake runtime, plus a small JSON-RPC / SSE client over fetch.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startA2aServer, type RunningA2aServer } from "../../src/a2a/server.js";
import { resolveSettings, type A2aServerSettings } from "../../src/a2a/config/server-settings.js";
import { createLogger, type Logger } from "../../src/server/logger.js";
import { SseParser, parseSseText, sseFrame, type SseEvent } from "../../src/server/sse.js";
import { FakeRuntime } from "./fixtures/fake-runtime.js";

export interface TestServer {
  server: RunningA2aServer;
  runtime: FakeRuntime;
  dir: string;
  workspace: string;
  url: string;
  settings: A2aServerSettings;
  rpc(method: string, params?: unknown, headers?: Record<string, string>): Promise<RpcReply>;
  close(): Promise<void>;
}

export interface RpcReply {
  status: number;
  contentType: string;
  body: Record<string, unknown>;
  raw: string;
}

export const V1 = { "A2A-Version": "1.0" };
let rpcId = 0;

export function makeTempDir(prefix = "iac-a2a-"): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function startTestServer(
  options: {
    file?: Record<string, unknown>;
    dir?: string;
    runtime?: FakeRuntime;
    env?: NodeJS.ProcessEnv;
    /** Where the server logs (default: nowhere). */
    logger?: Logger;
  } = {},
): Promise<TestServer> {
  const dir = options.dir ?? makeTempDir();
  const workspace = path.join(dir, "workspace");
  const { mkdirSync } = await import("node:fs");
  mkdirSync(workspace, { recursive: true });
  const settings = resolveSettings(
    { port: 0, "persistence-dir": path.join(dir, "persist"), ...(options.file ?? {}) },
    {},
    options.env ?? {},
  );
  const runtime = options.runtime ?? new FakeRuntime(path.join(dir, "sessions"));
  const server = await startA2aServer(settings, {
    runtime,
    logger: options.logger ?? createLogger({ silent: true }),
    cwd: workspace,
    env: options.env ?? {},
  });
  const url = server.url;
  return {
    server,
    runtime,
    dir,
    workspace,
    url,
    settings,
    rpc: (method, params, headers) => rpc(url, method, params, headers),
    async close() {
      await server.close();
    },
  };
}

export function cleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export async function rpc(
  url: string,
  method: string,
  params?: unknown,
  headers: Record<string, string> = {},
): Promise<RpcReply> {
  rpcId += 1;
  const body: Record<string, unknown> = { jsonrpc: "2.0", id: rpcId, method };
  if (params !== undefined) body.params = params;
  return post(url, JSON.stringify(body), { ...V1, ...headers });
}

export async function post(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<RpcReply> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
  });
  const raw = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    // SSE or empty bodies are checked by the caller through raw.
  }
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", body: parsed, raw };
}

export function userMessage(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    messageId: `m-${Math.random().toString(16).slice(2)}`,
    role: "ROLE_USER",
    parts: [{ text }],
    ...extra,
  };
}

/** JSON-RPC responses of an SSE body (one per `data:` line). */
export function parseSse(raw: string): Array<Record<string, unknown>> {
  return parseSseText(raw).map((event) => JSON.parse(event.data) as Record<string, unknown>);
}

/** An SSE stream read incrementally; stop() aborts the request. */
export interface LiveStream {
  status: number;
  contentType: string;
  /** Next JSON-RPC response, or undefined when the stream ended. */
  next(): Promise<Record<string, unknown> | undefined>;
  /** Reads until pred matches (inclusive); returns everything read. */
  until(pred: (event: Record<string, unknown>) => boolean): Promise<Array<Record<string, unknown>>>;
  rest(): Promise<Array<Record<string, unknown>>>;
  stop(): void;
  rawFrames: string[];
}

export async function openStream(
  url: string,
  method: string,
  params: unknown,
  headers: Record<string, string> = {},
): Promise<LiveStream> {
  rpcId += 1;
  const controller = new AbortController();
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...V1, ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: rpcId, method, params }),
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  const parser = new SseParser();
  const pending: SseEvent[] = [];
  let ended = false;
  // An error answered before the stream started is one plain JSON response, not SSE.
  const plainJson = !(res.headers.get("content-type") ?? "").includes("text/event-stream");
  let plainBody = "";
  const decoder = new TextDecoder();
  const rawFrames: string[] = [];
  const stream: LiveStream = {
    status: res.status,
    contentType: res.headers.get("content-type") ?? "",
    rawFrames,
    async next() {
      for (;;) {
        const event = pending.shift();
        if (event) {
          rawFrames.push(sseFrame(event.data, event.event));
          return JSON.parse(event.data) as Record<string, unknown>;
        }
        if (ended) return undefined;
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch {
          return undefined;
        }
        if (chunk.done) {
          ended = true;
          if (plainJson) {
            const text = plainBody.trim();
            if (text !== "") pending.push({ data: text });
          } else pending.push(...parser.end());
        } else if (plainJson) plainBody += decoder.decode(chunk.value, { stream: true });
        else pending.push(...parser.push(chunk.value));
      }
    },
    async until(pred) {
      const seen: Array<Record<string, unknown>> = [];
      for (;;) {
        const event = await stream.next();
        if (!event) throw new Error(`stream ended before the expected event; saw ${JSON.stringify(seen)}`);
        seen.push(event);
        if (pred(event)) return seen;
      }
    },
    async rest() {
      const seen: Array<Record<string, unknown>> = [];
      for (;;) {
        const event = await stream.next();
        if (!event) return seen;
        seen.push(event);
      }
    },
    stop() {
      controller.abort();
    },
  };
  return stream;
}

/** Free-form JSON as tests read it (any: replies are checked by assertions, not types). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type AnyJson = Record<string, any>;

/** Typed peeks into JSON-RPC stream results. */
export function resultOf(event: Record<string, unknown>): AnyJson {
  return event.result as AnyJson;
}

export function stateOf(event: Record<string, unknown>): string | undefined {
  const r = resultOf(event);
  return r?.statusUpdate?.status?.state ?? r?.task?.status?.state;
}

export function isFinalState(event: Record<string, unknown>): boolean {
  const s = stateOf(event);
  return s === "TASK_STATE_INPUT_REQUIRED" || s === "TASK_STATE_FAILED" || s === "TASK_STATE_CANCELED";
}
