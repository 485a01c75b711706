// Integration harness: a real A2A server (in-process startA2aServer on a
// loopback port, backed by the fixture runtime) and the AG-UI adapter in front
// of it, over temporary directories; plus HttpAgent and raw-fetch helpers.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { HttpAgent, type BaseEvent } from "@ag-ui/client";
import { startA2aServer, type RunningA2aServer } from "../../src/a2a/server.js";
import { resolveSettings as resolveA2aSettings } from "../../src/server/config.js";
import { createLogger } from "../../src/server/logger.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import type { AguiSettings } from "../../src/agui/config.js";
import type { AdapterLogger } from "../../src/agui/adapter-core.js";
import type { WireEvent as AguiEvent } from "./helpers.js";
import { ThreadStore } from "../../src/agui/thread-store.js";
import { ScriptRuntime } from "./fixtures/runtime.js";
import {
  captureWarnings,
  carryThreadVerifiers,
  expectStrictThreadRun,
  expectValidStream,
} from "./helpers.js";

export interface Harness {
  dir: string;
  workspace: string;
  stateDir: string;
  a2a: RunningA2aServer;
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
  const base = (): AguiSettings => ({
    host: "127.0.0.1",
    port: 0,
    a2aUrl: a2a.url,
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
    runtime,
    agui: undefined as unknown as AguiServer,
    store: new ThreadStore({ root: stateDir }),
    url: "",
    async restartAdapter(overrides = {}) {
      h.store = new ThreadStore({ root: stateDir });
      h.agui = await startAguiServer(
        { ...base(), ...overrides },
        { store: h.store, heartbeatMs: options.heartbeatMs, logger: options.logger },
      );
      if (h.url) carryThreadVerifiers(h.url, h.agui.url);
      h.url = h.agui.url;
    },
    async close() {
      await h.agui.close();
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
  const events = raw
    .split("\n\n")
    .map((rec) =>
      rec
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n"),
    )
    .filter(Boolean)
    .map((d) => JSON.parse(d) as AguiEvent);
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
