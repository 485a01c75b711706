/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// Per-request model headers (issue 32): AG-UI forwardedProps.iacCode.llmHeaders
// travels as A2A metadata.iac_code.llm_headers to the real runtime, whose
// OpenAI-compatible and Anthropic providers send them with that turn's model
// requests (the local fixture servers record what they receive), never with a
// later turn's, never in place of the provider's own key or content type.
// Unusable headers are refused with 400 / -32602 naming the field, never the
// value. The values are secrets: afterwards none is in any file under the
// run's dirs (config, sessions, A2A state, AG-UI state), any log line (debug)
// or any response body.
import { expect } from "chai";
import { mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { startA2aServer, type RunningA2aServer } from "../../src/a2a/server.js";
import { resolveSettings } from "../../src/a2a/config/server-settings.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { createAgentRuntime, type AgentRuntime } from "../../src/runtime/index.js";
import { createLogger } from "../../src/server/logger.js";
import { AnthropicFixture, ev } from "../fixtures/anthropic-server.js";
import { OpenAiFixture, textReply } from "../fixtures/openai-server.js";
import {
  cleanup,
  makeTempDir,
  openStream,
  resultOf,
  rpc,
  startTestServer,
  userMessage,
  type AnyJson,
} from "../a2a/helpers.js";
import { post } from "../agui/harness.js";
import { removeDir, tempDir } from "./helpers.js";

const MARKERS = { "X-Tenant": "tenant-HDRMARK-0001", "x-trace-id": "trace-HDRMARK-0002" };
const PROVIDER_KEY = "sk-provider-configured-key-0001";

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

const leaks = (text: string): string[] => Object.values(MARKERS).filter((m) => text.includes(m));

interface Stack {
  dir: string;
  workspace: string;
  a2a: RunningA2aServer;
  agui: AguiServer;
  runtime: AgentRuntime;
  close(): Promise<void>;
}

async function startStack(provider: { provider: string; baseUrl: string }, sink: Writable): Promise<Stack> {
  const dir = tempDir("iac-llm-headers-");
  const workspace = path.join(dir, "workspace");
  mkdirSync(workspace, { recursive: true });
  const logger = createLogger({ debug: true, destination: sink });
  const runtime = await createAgentRuntime({
    configDir: path.join(dir, "config"),
    env: { HOME: dir },
    homeDir: dir,
    ...provider,
    model: "fixture-model",
    apiKey: PROVIDER_KEY,
    retry: { maxRetries: 0 },
    logger,
  });
  const a2a = await startA2aServer(
    resolveSettings({ port: 0, "persistence-dir": path.join(dir, "a2a") }, {}, {}),
    { runtime, logger, cwd: workspace, env: { IACCODE_A2A_ALLOWED_CWDS: dir } },
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
      debug: true,
      logStdout: false,
    },
    { logger },
  );
  return {
    dir,
    workspace,
    a2a,
    agui,
    runtime,
    async close() {
      await agui.close();
      await a2a.close();
      await runtime.close();
    },
  };
}

describe("e2e: llmHeaders reach the model provider, and only there", function () {
  this.timeout(60_000);
  let logs = "";
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs += chunk.toString();
      done();
    },
  });
  const bodies: string[] = [];
  let openai: OpenAiFixture;
  let anthropic: AnthropicFixture;
  const stacks: Stack[] = [];

  before(async () => {
    openai = await OpenAiFixture.start();
    anthropic = await AnthropicFixture.start();
  });
  after(async () => {
    for (const s of stacks) {
      await s.close();
      removeDir(s.dir);
    }
    await openai.close();
    await anthropic.close();
  });

  const runBody = (stack: Stack, threadId: string, runId: string, iac: Record<string, unknown> = {}) => ({
    threadId,
    runId,
    state: {},
    messages: [{ id: `u-${runId}`, role: "user", content: "hello" }],
    tools: [],
    context: [],
    forwardedProps: {
      iacCode: { schemaVersion: 1, rosInvocationId: `inv-${threadId}`, cwd: stack.workspace, ...iac },
    },
  });

  it("AG-UI → A2A → OpenAI-compatible provider: that turn's model request carries them; nothing keeps them", async () => {
    const stack = await startStack({ provider: "openai_compatible", baseUrl: openai.url }, sink);
    stacks.push(stack);
    openai.enqueue(textReply("first answer"), textReply("second answer"));
    const first = await post(stack.agui.url, runBody(stack, "thread-h", "run-1", { llmHeaders: MARKERS }));
    bodies.push(first.raw);
    expect(first.events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    const sent = openai.lastRequest.headers;
    expect(sent["x-tenant"]).to.equal(MARKERS["X-Tenant"]);
    expect(sent["x-trace-id"]).to.equal(MARKERS["x-trace-id"]);
    // The provider's own headers are untouched.
    expect(sent.authorization).to.equal(`Bearer ${PROVIDER_KEY}`);
    expect(sent["content-type"]).to.equal("application/json");

    // The next turn of the same thread without llmHeaders sends none: they served one turn.
    const second = await post(stack.agui.url, runBody(stack, "thread-h", "run-2"));
    bodies.push(second.raw);
    expect(second.events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    expect(openai.requests).to.have.length(2);
    expect(openai.lastRequest.headers).not.to.have.property("x-tenant");
    expect(openai.lastRequest.headers).not.to.have.property("x-trace-id");

    // What A2A tells anyone about the turn (history, metadata) holds no header value.
    const contextTasks = await rpc(stack.a2a.url, "ListTasks", { includeArtifacts: true, pageSize: 50 });
    bodies.push(contextTasks.raw);
    expect((contextTasks.body.result as AnyJson).tasks).to.have.length(2);
    await stack.close();
    stacks.splice(stacks.indexOf(stack), 1);
    try {
      const files = filesUnder(stack.dir);
      expect(files.some((f) => f.includes(`${path.sep}agui${path.sep}`))).to.equal(true);
      expect(files.some((f) => f.includes(`${path.sep}a2a${path.sep}`))).to.equal(true);
      expect(files.some((f) => f.includes(`${path.sep}config${path.sep}`))).to.equal(true);
      for (const file of files) expect(leaks(readFileSync(file, "latin1")), file).to.deep.equal([]);
    } finally {
      removeDir(stack.dir);
    }
    expect(logs).to.include("A2A server listening");
    expect(leaks(logs), "log lines").to.deep.equal([]);
    for (const body of bodies) expect(leaks(body), body.slice(0, 300)).to.deep.equal([]);
  });

  it("A2A metadata.iac_code.llm_headers → Anthropic provider, next to its own x-api-key and anthropic-version", async () => {
    const stack = await startStack({ provider: "anthropic", baseUrl: anthropic.url }, sink);
    stacks.push(stack);
    anthropic.enqueue({
      events: [
        ev.messageStart(10),
        ev.blockStart(0, { type: "text", text: "" }),
        ev.delta(0, { type: "text_delta", text: "ok" }),
        ev.blockStop(0),
        ev.messageDelta("end_turn", 2),
        ev.messageStop(),
      ],
    });
    const reply = await rpc(stack.a2a.url, "SendMessage", {
      message: userMessage("hello", {
        metadata: {
          iac_code: { cwd: stack.workspace, llm_headers: { "X-Gateway-Tenant": "gw-HDRMARK-0003" } },
        },
      }),
    });
    expect(reply.raw).not.to.include("gw-HDRMARK-0003");
    expect((reply.body.result as AnyJson).task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    const sent = anthropic.requests.at(-1)!.headers;
    expect(sent["x-gateway-tenant"]).to.equal("gw-HDRMARK-0003");
    expect(sent["x-api-key"]).to.equal(PROVIDER_KEY);
    expect(sent["anthropic-version"]).to.equal("2023-06-01");
  });

  it("unusable headers are refused before any model call: 400 / -32602 naming the field, never the value", async () => {
    const stack = await startStack({ provider: "openai_compatible", baseUrl: openai.url }, sink);
    stacks.push(stack);
    const before = openai.requests.length;
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`X-H${i}`, "v"]));
    const cases: Array<[unknown, string]> = [
      ["tenant-SECRET-VALUE", "forwardedProps.iacCode.llmHeaders must be of type object, null."],
      [["a"], "forwardedProps.iacCode.llmHeaders must be of type object, null."],
      [{ "X-Tenant": 7 }, "forwardedProps.iacCode.llmHeaders.X-Tenant must be of type string."],
      [{ "X-Tenant": null }, "forwardedProps.iacCode.llmHeaders.X-Tenant must be of type string."],
      [
        { "bad name": "SECRET-VALUE" },
        "forwardedProps.iacCode.llmHeaders.bad name is not a valid HTTP header name (a token: letters, digits and !#$%&'*+-.^_`|~, at most 256 characters).",
      ],
      [
        { "X-Evil": "SECRET-VALUE\r\nHost: elsewhere" },
        "forwardedProps.iacCode.llmHeaders.X-Evil must be a valid HTTP header value (visible ASCII, spaces and tabs, at most 8192 characters).",
      ],
      [
        { Authorization: "Bearer SECRET-VALUE" },
        "forwardedProps.iacCode.llmHeaders.Authorization cannot be given: the model provider sets this header itself.",
      ],
      [
        { "CONTENT-TYPE": "text/SECRET-VALUE" },
        "forwardedProps.iacCode.llmHeaders.CONTENT-TYPE cannot be given: the model provider sets this header itself.",
      ],
      [many, "forwardedProps.iacCode.llmHeaders may hold at most 64 headers."],
    ];
    for (const [i, [llmHeaders, message]] of cases.entries()) {
      const res = await post(stack.agui.url, runBody(stack, `thread-bad-${i}`, "run-1", { llmHeaders }));
      expect(res.status, message).to.equal(400);
      expect(res.json?.error, message).to.deep.equal({ code: "INVALID_INPUT", message });
      expect(res.raw).not.to.include("SECRET-VALUE");
    }
    const a2aCases: Array<[unknown, string]> = [
      ["SECRET-VALUE", "metadata.iac_code.llm_headers"],
      [{ "X-A": 5 }, "metadata.iac_code.llm_headers.X-A"],
      [{ "X-A": "SECRET-VALUE\n" }, "metadata.iac_code.llm_headers.X-A"],
      [{ "x-api-key": "SECRET-VALUE" }, "metadata.iac_code.llm_headers.x-api-key"],
      [{ "no good": "SECRET-VALUE" }, "metadata.iac_code.llm_headers"],
    ];
    for (const [llmHeaders, field] of a2aCases) {
      const reply = await rpc(stack.a2a.url, "SendMessage", {
        message: userMessage("hello", {
          metadata: { iac_code: { cwd: stack.workspace, llm_headers: llmHeaders } },
        }),
      });
      const error = reply.body.error as AnyJson;
      expect(error?.code, reply.raw).to.equal(-32602);
      expect(error.message as string).to.match(new RegExp(`^${field.replace(/\./g, "\\.")}\\b`));
      expect(reply.raw).not.to.include("SECRET-VALUE");
    }
    expect(openai.requests.length).to.equal(before);
  });

  it("a turn waiting across a restart: the answer must bring llm_headers again (never kept)", async () => {
    const dir = makeTempDir();
    try {
      const a = await startTestServer({ dir });
      const reply = await a.rpc("SendMessage", {
        message: userMessage("[[permission]] deploy", {
          metadata: { iac_code: { llm_headers: { "X-Tenant": "tenant-RESTART-0004" } } },
        }),
      });
      const task = (reply.body.result as AnyJson).task as AnyJson;
      expect(a.runtime.overridesSeen.at(-1)?.llmHeaders).to.deep.equal({ "X-Tenant": "tenant-RESTART-0004" });
      expect(JSON.stringify(task)).not.to.include("tenant-RESTART-0004");
      const envelope = task.metadata.iac_code.input as AnyJson;
      await a.close();

      const b = await startTestServer({ dir });
      try {
        const answer = (iac: AnyJson) =>
          userMessage("", {
            taskId: task.id,
            contextId: task.contextId,
            metadata: { iac_code: iac },
            parts: [
              {
                mediaType: "application/json",
                data: {
                  schemaVersion: 1,
                  kind: "permission",
                  requestTaskId: task.id as string,
                  inputId: envelope.inputId as string,
                  toolUseId: envelope.toolUseId as string,
                  decision: "allow_once",
                },
              },
            ],
          });
        const refused = await b.rpc("SendMessage", { message: answer({}) });
        expect(refused.body.error).to.deep.include({ code: -32602 });
        expect((refused.body.error as AnyJson).message).to.include("llm_headers");
        const stream = await openStream(b.url, "SendStreamingMessage", {
          message: answer({ llm_headers: { "X-Tenant": "tenant-RESTART-0004" } }),
        });
        const events = await stream.rest();
        expect(resultOf(events[0]).task.id).to.equal(task.id);
        expect(b.runtime.overridesSeen.at(-1)?.llmHeaders).to.deep.equal({
          "X-Tenant": "tenant-RESTART-0004",
        });
        expect(JSON.stringify(events)).not.to.include("tenant-RESTART-0004");
        const stored = await b.rpc("GetTask", { id: task.id as string });
        expect(stored.raw).not.to.include("tenant-RESTART-0004");
      } finally {
        await b.close();
      }
    } finally {
      cleanup(dir);
    }
  });
});
