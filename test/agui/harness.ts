// Integration harness: a real A2A server (in-process startA2aServer on a
// loopback port, backed by the fixture runtime) and the AG-UI adapter in front
// of it, over temporary directories; plus HttpAgent and raw-fetch helpers.
// With `tap`, the adapter reaches A2A through a loopback proxy that records
// every request and lets a test answer, hold or rewrite one.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { HttpAgent, type BaseEvent } from "@ag-ui/client";
import { startA2aServer, type RunningA2aServer } from "../../src/a2a/server.js";
import { resolveSettings as resolveA2aSettings } from "../../src/a2a/config/server-settings.js";
import { createLogger } from "../../src/server/logger.js";
import { SseParser, parseSseText, sseFrame } from "../../src/server/sse.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import type { AguiSettings } from "../../src/agui/config.js";
import type { AdapterLogger } from "../../src/agui/logger.js";
import type { WireEvent as AguiEvent } from "./helpers.js";
import { ThreadStore } from "../../src/agui/threads/thread-store.js";
import { ScriptRuntime } from "./fixtures/runtime.js";
import {
  captureWarnings,
  carryThreadVerifiers,
  expectStrictThreadRun,
  expectValidStream,
} from "./helpers.js";

/** One request the adapter made to the A2A server, as the tap saw it. */
export interface TapCall {
  /** The JSON-RPC method, or the HTTP method of a plain request (the pipeline state's GET). */
  method: string;
  /** The JSON-RPC params (undefined for a plain request). */
  params: Record<string, unknown> | undefined;
  /** Path and query. */
  path: string;
}

/** A loopback proxy in front of the A2A server: it records, and a test may answer or rewrite. */
export interface A2aTap {
  readonly url: string;
  readonly calls: TapCall[];
  /** True when the test answered (or dropped, or holds) the request itself: A2A never sees it. */
  intercept?: (call: TapCall, res: ServerResponse) => boolean;
  /** Rewrites each JSON body A2A answers: a unary response, each SSE record, a plain GET's body. */
  rewrite?: (call: TapCall, body: unknown) => unknown;
  close(): Promise<void>;
}

/** Starts a tap in front of `target` (a base URL with a trailing slash). */
export async function startTap(target: string): Promise<A2aTap> {
  const upstream = new URL(target);
  const tap: A2aTap & { server?: ReturnType<typeof createServer> } = {
    url: "",
    calls: [],
    close: () =>
      new Promise<void>((resolve) => {
        tap.server?.closeAllConnections();
        tap.server?.close(() => resolve());
      }),
  };
  const rewritten = (call: TapCall, text: string): string => {
    if (!tap.rewrite) return text;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return text;
    }
    return JSON.stringify(tap.rewrite(call, body));
  };
  tap.server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      let rpc: { method?: unknown; params?: unknown } = {};
      try {
        if (body.length) rpc = JSON.parse(body.toString("utf8")) as typeof rpc;
      } catch {
        // Not JSON: recorded by its HTTP method.
      }
      const call: TapCall = {
        method: typeof rpc.method === "string" ? rpc.method : (req.method ?? "GET"),
        params:
          rpc.params && typeof rpc.params === "object" ? (rpc.params as Record<string, unknown>) : undefined,
        path: req.url ?? "/",
      };
      tap.calls.push(call);
      if (tap.intercept?.(call, res)) return;
      const headers = { ...req.headers, host: upstream.host };
      delete headers["content-length"];
      const out = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
        (up) => {
          const type = String(up.headers["content-type"] ?? "");
          const { "content-length": _length, ...rest } = up.headers;
          res.writeHead(up.statusCode ?? 502, rest);
          if (!type.includes("text/event-stream")) {
            const parts: Buffer[] = [];
            up.on("data", (c: Buffer) => parts.push(c));
            up.on("end", () => res.end(rewritten(call, Buffer.concat(parts).toString("utf8"))));
            return;
          }
          // SSE: each record's data rewritten as it comes; comments (heartbeats) pass as they are.
          const parser = new SseParser((comment) => res.write(`:${comment}\n\n`));
          up.on("data", (chunk: Buffer) => {
            for (const event of parser.push(chunk)) res.write(sseFrame(rewritten(call, event.data)));
          });
          up.on("end", () => res.end());
        },
      );
      out.on("error", () => res.destroy());
      // The adapter hung up (an interrupt ends its stream): so does the tap, upstream.
      res.on("close", () => out.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((r) => tap.server!.listen(0, "127.0.0.1", r));
  (tap as { url: string }).url = `http://127.0.0.1:${(tap.server.address() as AddressInfo).port}/`;
  return tap;
}

export interface Harness {
  dir: string;
  workspace: string;
  stateDir: string;
  a2a: RunningA2aServer;
  /** The proxy between adapter and A2A (startHarness({ tap: true }) only). */
  tap?: A2aTap;
  runtime: ScriptRuntime;
  agui: AguiServer;
  store: ThreadStore;
  url: string;
  /** Starts a fresh adapter on the same state dir and A2A server (the old one must be closed). */
  restartAdapter(overrides?: Partial<AguiSettings>): Promise<void>;
  close(): Promise<void>;
}

export async function startHarness(
  options: {
    settings?: Partial<AguiSettings>;
    heartbeatMs?: number;
    a2aToken?: string;
    /** Where the adapter logs (default: nowhere). */
    logger?: AdapterLogger;
    /** More keys of the A2A server's config. */
    a2aFile?: Record<string, unknown>;
    /** The adapter reaches A2A through a tap (h.tap). */
    tap?: boolean;
    /** Idle threads the adapter's store keeps in memory. */
    cacheLimit?: number;
  } = {},
): Promise<Harness> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "agui-it-"));
  const workspace = path.join(dir, "workspace");
  mkdirSync(workspace, { recursive: true });
  const runtime = new ScriptRuntime();
  const token = options.a2aToken ?? "a2a-secret-token";
  const a2aSettings = resolveA2aSettings(
    {
      port: 0,
      "persistence-dir": path.join(dir, "a2a"),
      token,
      "thinking-exposure": ["tool-trace", "raw-thinking"],
      ...options.a2aFile,
    },
    {},
    {},
  );
  const a2a = await startA2aServer(a2aSettings, {
    runtime,
    logger: createLogger({ silent: true }),
    cwd: workspace,
    env: { IACCODE_A2A_ALLOWED_CWDS: dir },
  });
  const stateDir = path.join(dir, "agui-state");
  const tap = options.tap ? await startTap(a2a.url) : undefined;
  const base = (): AguiSettings => ({
    host: "127.0.0.1",
    port: 0,
    a2aUrl: tap?.url ?? a2a.url,
    a2aToken: token,
    stateDir,
    idleShutdown: 0,
    interruptTtl: 540,
    allowedCwds: [dir],
    debug: false,
    logStdout: false,
    ...options.settings,
  });
  const h: Harness = {
    dir,
    workspace,
    stateDir,
    a2a,
    tap,
    runtime,
    agui: undefined as unknown as AguiServer,
    store: new ThreadStore({ root: stateDir, cacheLimit: options.cacheLimit }),
    url: "",
    async restartAdapter(overrides = {}) {
      h.store = new ThreadStore({ root: stateDir, cacheLimit: options.cacheLimit });
      h.agui = await startAguiServer(
        { ...base(), ...overrides },
        { store: h.store, heartbeatMs: options.heartbeatMs, logger: options.logger },
      );
      if (h.url) carryThreadVerifiers(h.url, h.agui.url);
      h.url = h.agui.url;
    },
    async close() {
      await h.agui.close();
      await tap?.close();
      await a2a.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await h.restartAdapter();
  return h;
}

export function iacCode(h: Harness, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { schemaVersion: 1, rosInvocationId: "invocation-1", cwd: h.workspace, ...extra };
}

export function runInput(
  h: Harness,
  o: { threadId: string; runId: string; text?: string; iac?: Record<string, unknown>; resume?: unknown[] },
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    threadId: o.threadId,
    runId: o.runId,
    state: {},
    messages: o.text === undefined ? [] : [{ id: `msg-${o.runId}`, role: "user", content: o.text }],
    tools: [],
    context: [],
    forwardedProps: { iacCode: iacCode(h, o.iac) },
  };
  if (o.resume) body.resume = o.resume;
  return body;
}

/** POST / with raw fetch; returns status, headers, and the parsed SSE events (or JSON body). */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  headers: Headers;
  json?: { error: { code: string; message: string } };
  events: AguiEvent[];
  raw: string;
}> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const raw = await res.text();
  if ((res.headers.get("content-type") ?? "").includes("application/json")) {
    return { status: res.status, headers: res.headers, json: JSON.parse(raw) as never, events: [], raw };
  }
  const events = parseSseText(raw).map((event) => JSON.parse(event.data) as AguiEvent);
  const threadId = typeof body === "object" && body ? (body as { threadId?: unknown }).threadId : undefined;
  if (typeof threadId === "string" && events.length) expectStrictThreadRun(url, threadId, events);
  return { status: res.status, headers: res.headers, events, raw };
}

/** One run through the official client; every event also passes our contract and the verifier. */
export async function agentRun(
  agent: HttpAgent,
  params: Parameters<HttpAgent["runAgent"]>[0],
): Promise<{ events: AguiEvent[]; warnings: string[] }> {
  const events: AguiEvent[] = [];
  const { warnings } = await captureWarnings(() =>
    agent.runAgent(params, {
      onEvent: ({ event }: { event: BaseEvent }) => {
        events.push(event as unknown as AguiEvent);
      },
    }),
  );
  await expectValidStream(events);
  expectStrictThreadRun(agent.url, agent.threadId, events);
  return { events, warnings };
}

export function newAgent(
  h: Harness,
  threadId: string,
  text?: string,
  headers: Record<string, string> = {},
): HttpAgent {
  return new HttpAgent({
    url: h.url,
    threadId,
    headers,
    initialMessages: text === undefined ? [] : [{ id: `u-${threadId}`, role: "user", content: text }],
  });
}
