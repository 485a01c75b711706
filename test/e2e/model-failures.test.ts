// Issue 11: a model or runtime failure ends the same way on both protocols.
// The real runtime talks to the local OpenAI-compatible fixture (or to a port
// nobody listens on); the official @ag-ui/client HttpAgent talks to the AG-UI
// adapter and the official @a2a-js/sdk client to the A2A server. Each failure
// closes the open spans, then ends with a specific code whose text carries the
// errorId of the server's log line; that line names the endpoint's host:port,
// the client's text never does; a cancel notice is never assistant text.
import { expect } from "chai";
import { mkdirSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { Writable } from "node:stream";
import { HttpAgent } from "@ag-ui/client";
import { CancelTaskRequest, SendMessageRequest, TaskState, type StreamResponse } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  type Client,
} from "@a2a-js/sdk/client";
import { startA2aServer, type RunningA2aServer } from "../../src/a2a/server.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { createAgentRuntime, type AgentRuntime } from "../../src/runtime/index.js";
import { resolveSettings } from "../../src/a2a/config/server-settings.js";
import { createLogger } from "../../src/server/logger.js";
import { chunk, OpenAiFixture } from "../fixtures/openai-server.js";
import type { WireEvent as AguiEvent } from "../agui/helpers.js";
import { expectValidStream, types } from "../agui/helpers.js";
import { removeDir, tempDir } from "./helpers.js";

type Json = Record<string, unknown>;

interface Stack {
  dir: string;
  workspace: string;
  a2a: RunningA2aServer;
  agui: AguiServer;
  runtime: AgentRuntime;
  client: Client;
  /** Every log line of the runtime, the A2A server and the adapter (JSON). */
  logs: Json[];
  close(): Promise<void>;
}

async function startStack(baseUrl: string, model: string | undefined = "fixture-model"): Promise<Stack> {
  const dir = tempDir("iac-failures-");
  const workspace = path.join(dir, "workspace");
  mkdirSync(workspace, { recursive: true });
  const logs: Json[] = [];
  const sink = new Writable({
    write(data: Buffer, _encoding, done) {
      for (const line of data.toString().split("\n")) if (line) logs.push(JSON.parse(line) as Json);
      done();
    },
  });
  const logger = createLogger({ destination: sink });
  const runtime = await createAgentRuntime({
    configDir: path.join(dir, "config"),
    env: { HOME: dir },
    homeDir: dir,
    provider: "openai_compatible",
    baseUrl,
    model,
    apiKey: "sk-failure-test-key-0123456789",
    retry: { maxRetries: 0 },
    logger,
  });
  const a2a = await startA2aServer(
    resolveSettings({ port: 0, "persistence-dir": path.join(dir, "a2a") }, {}, {}),
    {
      runtime,
      logger,
      cwd: workspace,
      env: { IACCODE_A2A_ALLOWED_CWDS: dir },
    },
  );
  const agui = await startAguiServer(
    {
      host: "127.0.0.1",
      port: 0,
      a2aUrl: a2a.url,
      stateDir: path.join(dir, "agui"),
      idleShutdown: 0,
      interruptTtl: 540,
      allowedCwds: [dir],
      debug: false,
      logStdout: false,
    },
    { logger },
  );
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory()],
    }),
  );
  const client = await factory.createFromUrl(a2a.url);
  return {
    dir,
    workspace,
    a2a,
    agui,
    runtime,
    client,
    logs,
    async close() {
      await agui.close();
      await a2a.close();
      await runtime.close();
      removeDir(dir);
    },
  };
}

/** A loopback port nobody listens on. */
async function refusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let threads = 0;

/** One AG-UI run through HttpAgent; `during` runs once the first assistant text arrived. */
async function aguiRun(
  stack: Stack,
  text: string,
  during?: (session: Json) => Promise<void>,
): Promise<{ events: AguiEvent[]; error?: Error }> {
  const threadId = `failure-${++threads}`;
  const agent = new HttpAgent({
    url: stack.agui.url,
    threadId,
    initialMessages: [{ id: `u-${threadId}`, role: "user", content: text }],
  });
  const events: AguiEvent[] = [];
  let started: Promise<void> | undefined;
  let error: Error | undefined;
  // HttpAgent prints a failed request on console.error; the test reads the error instead.
  const printError = console.error;
  console.error = () => undefined;
  try {
    await agent.runAgent(
      {
        runId: "run-1",
        forwardedProps: {
          iacCode: { schemaVersion: 1, rosInvocationId: `inv-${threadId}`, cwd: stack.workspace },
        },
      },
      {
        onEvent: ({ event }) => {
          events.push(event as unknown as AguiEvent);
          if (during && !started && (event.type as string) === "TEXT_MESSAGE_CONTENT") {
            const session = events.find((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1");
            started = during({ ...(session?.value as Json), threadId });
          }
        },
      },
    );
  } catch (err) {
    error = err as Error;
  } finally {
    console.error = printError;
  }
  await started;
  return { events, error };
}

/** One A2A streaming turn through the SDK client; `during` runs once the first text arrived. */
async function a2aTurn(
  stack: Stack,
  text: string,
  during?: (taskId: string) => Promise<void>,
): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  let started: Promise<void> | undefined;
  for await (const event of stack.client.sendMessageStream(
    SendMessageRequest.fromJSON({
      message: {
        messageId: `m-${++threads}`,
        role: "ROLE_USER",
        parts: [{ text }],
        metadata: { iac_code: { cwd: stack.workspace } },
      },
    }),
  )) {
    out.push(event);
    const payload = event.payload;
    if (during && !started && payload?.$case === "statusUpdate" && payload.value.status?.message) {
      started = during(payload.value.taskId);
    }
  }
  await started;
  return out;
}

function lastStatus(events: StreamResponse[]): { state?: TaskState; text?: string; error?: Json } {
  const last = events.at(-1)!.payload;
  if (last?.$case !== "statusUpdate") throw new Error(`last event is ${String(last?.$case)}`);
  const content = last.value.status?.message?.parts[0]?.content;
  const iac = last.value.metadata?.iac_code as Json | undefined;
  return {
    state: last.value.status?.state,
    text: content?.$case === "text" ? content.value : undefined,
    error: iac?.error as Json | undefined,
  };
}

const ERROR_ID = /\(error ([0-9A-Za-z_-]+)\)\.$/;

/** The runtime's log line of a failure, found by the errorId the client got. */
function failureLine(stack: Stack, text: string): Json {
  const id = ERROR_ID.exec(text)?.[1];
  expect(id, text).to.be.a("string");
  const line = stack.logs.find((l) => l.msg === "turn failed" && l.errorId === id);
  expect(line, `no log line for ${String(id)}`).to.not.equal(undefined);
  return line!;
}

function expectRunError(events: AguiEvent[], code: string): AguiEvent {
  const last = events.at(-1)!;
  expect(last).to.include({ type: "RUN_ERROR", code });
  expect(types(events)).to.not.include("RUN_FINISHED");
  return last;
}

describe("e2e: model and runtime failures end the same way on AG-UI and A2A", function () {
  this.timeout(60_000);
  let fixture: OpenAiFixture;
  let live: Stack;
  let dead: Stack;
  let deadPort: number;

  before(async () => {
    fixture = await OpenAiFixture.start();
    live = await startStack(fixture.url);
    deadPort = await refusedPort();
    dead = await startStack(`http://127.0.0.1:${deadPort}/v1`);
  });
  after(async () => {
    await live?.close();
    await dead?.close();
    await fixture?.close();
  });

  it("unreachable endpoint: MODEL_UNREACHABLE with the errorId; the log names host:port, the client does not", async () => {
    const { events } = await aguiRun(dead, "create a VPC");
    await expectValidStream(events);
    const error = expectRunError(events, "MODEL_UNREACHABLE");
    const message = error.message as string;
    expect(message).to.match(/^The model endpoint cannot be reached: .*\(error [0-9A-Za-z_-]+\)\.$/);
    expect(message).to.not.include(String(deadPort));
    expect(failureLine(dead, message)).to.deep.include({
      code: "MODEL_UNREACHABLE",
      endpoint: `127.0.0.1:${deadPort}`,
    });

    const a2a = lastStatus(await a2aTurn(dead, "create a VPC"));
    expect(a2a.state).to.equal(TaskState.TASK_STATE_FAILED);
    expect(a2a.error).to.deep.include({ code: "MODEL_UNREACHABLE", retryable: true });
    expect(a2a.text).to.include(`(error ${String(a2a.error!.errorId)})`);
    expect(a2a.text).to.not.include(String(deadPort));
    expect(failureLine(dead, a2a.text!).endpoint).to.equal(`127.0.0.1:${deadPort}`);
  });

  it("401: MODEL_AUTHENTICATION_FAILED on both", async () => {
    const refused = {
      status: 401,
      body: { error: { message: "Incorrect API key provided", type: "invalid_request_error" } },
    };
    fixture.enqueue(refused);
    const { events } = await aguiRun(live, "hello");
    await expectValidStream(events);
    const error = expectRunError(events, "MODEL_AUTHENTICATION_FAILED");
    expect(failureLine(live, error.message as string)).to.deep.include({
      status: 401,
      code: "MODEL_AUTHENTICATION_FAILED",
    });

    fixture.enqueue(refused);
    const a2a = lastStatus(await a2aTurn(live, "hello"));
    expect(a2a.state).to.equal(TaskState.TASK_STATE_FAILED);
    expect(a2a.error).to.deep.include({ code: "MODEL_AUTHENTICATION_FAILED", retryable: false });
    expect(a2a.text).to.match(/^The model provider needs valid credentials/);
  });

  it("404: MODEL_NOT_FOUND on both, the text naming the settings to fix; GET /models answering 404 too", async () => {
    const missing = {
      status: 404,
      body: { error: { message: "The model `qwen-maxx` does not exist", type: "invalid_request_error" } },
    };
    fixture.enqueue(missing);
    const { events } = await aguiRun(live, "hello");
    await expectValidStream(events);
    const error = expectRunError(events, "MODEL_NOT_FOUND");
    expect(error.message).to.match(
      /^The model endpoint answered 404: the model name or the base URL is wrong\. Check IAC_CODE_MODEL \(--model\) and IAC_CODE_BASE_URL \(--base-url\)/,
    );
    expect(failureLine(live, error.message as string)).to.deep.include({
      status: 404,
      code: "MODEL_NOT_FOUND",
    });

    fixture.enqueue(missing);
    const a2a = lastStatus(await a2aTurn(live, "hello"));
    expect(a2a.state).to.equal(TaskState.TASK_STATE_FAILED);
    expect(a2a.error).to.deep.include({ code: "MODEL_NOT_FOUND", retryable: false });
    expect(a2a.text).to.include("IAC_CODE_BASE_URL");

    // No model configured: the endpoint's GET /models answers 404 (a base URL missing its /v1, say).
    const nowhere = http.createServer((_req, res) => res.writeHead(404).end("not found"));
    await new Promise<void>((resolve) => nowhere.listen(0, "127.0.0.1", resolve));
    const lost = await startStack(
      `http://127.0.0.1:${(nowhere.address() as net.AddressInfo).port}/v1`,
      undefined,
    );
    try {
      const run = await aguiRun(lost, "hello");
      const listing = expectRunError(run.events, "MODEL_NOT_FOUND");
      expect(listing.message).to.include("IAC_CODE_MODEL");
    } finally {
      await lost.close();
      await new Promise((resolve) => nowhere.close(resolve));
    }
  });

  it("429: MODEL_RATE_LIMITED on both", async () => {
    const limited = { status: 429, body: { error: { message: "Rate limit reached", type: "rate_limit" } } };
    fixture.enqueue(limited);
    const { events } = await aguiRun(live, "hello");
    const error = expectRunError(events, "MODEL_RATE_LIMITED");
    expect(error.message).to.match(/^The model provider is limiting the request rate/);
    expect(failureLine(live, error.message as string).status).to.equal(429);

    fixture.enqueue(limited);
    const a2a = lastStatus(await a2aTurn(live, "hello"));
    expect(a2a.error).to.deep.include({ code: "MODEL_RATE_LIMITED", retryable: true });
  });

  it("a failure mid-message closes the open message before RUN_ERROR", async () => {
    fixture.enqueue({ chunks: [chunk.text("Here is the first part")], cutAfter: 1, done: false });
    const { events } = await aguiRun(live, "write a long answer");
    await expectValidStream(events);
    const kinds = types(events);
    expect(kinds.slice(-2)).to.deep.equal(["TEXT_MESSAGE_END", "RUN_ERROR"]);
    expect(events.at(-1)).to.include({ code: "MODEL_UNAVAILABLE" });
  });

  it("cancel: TEXT_MESSAGE_END then RUN_ERROR CANCELLED; 'Task canceled.' is never assistant text", async () => {
    fixture.enqueue({ chunks: [chunk.text("Working on it")], hangAfter: 1 });
    const { events } = await aguiRun(live, "take your time", async (session) => {
      const res = await fetch(
        `${live.agui.url}extensions/iac-code/v1/executions/${String(session.executionId)}/cancel`,
        {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ threadId: session.threadId, rosInvocationId: session.rosInvocationId }),
        },
      );
      expect(res.status).to.equal(200);
    });
    await expectValidStream(events);
    expect(types(events).slice(-2)).to.deep.equal(["TEXT_MESSAGE_END", "RUN_ERROR"]);
    expect(events.at(-1)).to.include({ code: "CANCELLED", message: "The execution was cancelled." });
    const assistant = events
      .filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
      .map((e) => e.delta as string)
      .join("");
    expect(assistant).to.equal("Working on it");

    fixture.enqueue({ chunks: [chunk.text("Working on it")], hangAfter: 1 });
    const a2a = await a2aTurn(live, "take your time", async (taskId) => {
      await live.client.cancelTask(CancelTaskRequest.fromJSON({ id: taskId }));
    });
    const end = lastStatus(a2a);
    expect(end.state).to.equal(TaskState.TASK_STATE_CANCELED);
    expect(end.text).to.equal("Task canceled.");
  });

  it("an empty user message is refused with a clear error on both", async () => {
    const { events, error } = await aguiRun(live, "  ");
    expect(events).to.deep.equal([]);
    expect(error?.message).to.include("The last user message is empty: send some text or an image.");

    const a2a = lastStatus(await a2aTurn(live, "  "));
    expect(a2a.state).to.equal(TaskState.TASK_STATE_FAILED);
    expect(a2a.text).to.equal(
      "The message has no content: send a non-empty text part, a data part, a file or an image.",
    );
  });
});
