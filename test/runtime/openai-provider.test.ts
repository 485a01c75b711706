// The OpenAI-compatible provider against a local Chat Completions server:
// streaming text, reasoning, tool calls assembled from deltas, usage,
// errors (401, 429 then success, 5xx, bad bodies, cut and idle streams),
// cancellation, thinking knobs, and a full turn through AgentSession.
import { expect } from "chai";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { ProviderError } from "../../src/runtime/errors.js";
import { createAgentRuntime } from "../../src/runtime/index.js";
import { OpenAIChatProvider } from "../../src/runtime/providers/openai.js";
import type { ProviderEvent, ProviderRequest } from "../../src/runtime/providers/types.js";
import type { Message } from "../../src/runtime/messages.js";
import { chunk, OpenAiFixture, textReply } from "../fixtures/openai-server.js";
import { allowOnce, ofType, removeTempDirs, silentLogger, storedRows, tempDir, turn } from "./helpers.js";

const user = (text: string): Message => ({
  id: "u1",
  role: "user",
  content: [{ type: "text", text }],
  createdAt: "t",
});

function provider(
  fixture: OpenAiFixture,
  overrides: Partial<ConstructorParameters<typeof OpenAIChatProvider>[0]> = {},
) {
  return new OpenAIChatProvider(
    {
      name: "openai_compatible",
      model: "fixture-model",
      baseUrl: fixture.url,
      apiKey: "sk-test-key-123456",
      idleTimeoutMs: 2000,
      retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 },
      thinkingFamily: "generic",
      ...overrides,
    },
    silentLogger(),
  );
}

function request(overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return {
    system: "sys",
    messages: [user("hi")],
    tools: [{ name: "read_file", description: "read", inputSchema: { type: "object" } }],
    kind: "stream",
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const out: ProviderEvent[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

async function failure(stream: AsyncIterable<ProviderEvent>): Promise<unknown> {
  try {
    await collect(stream);
  } catch (error) {
    return error;
  }
  throw new Error("expected the stream to fail");
}

describe("runtime: OpenAI-compatible provider", () => {
  let fixture: OpenAiFixture;
  beforeEach(async () => {
    fixture = await OpenAiFixture.start();
  });
  afterEach(async () => {
    await fixture.close();
    await removeTempDirs();
  });

  it("streams plain text with usage and sends a well-formed request", async () => {
    fixture.enqueue({
      chunks: [chunk.text("Hel"), chunk.text("lo"), chunk.finish("stop"), chunk.usage(11, 3, 4)],
    });
    const events = await collect(provider(fixture).stream(request()));
    expect(events).to.deep.equal([
      { type: "text_delta", text: "Hel" },
      { type: "text_delta", text: "lo" },
      {
        type: "message_end",
        stopReason: "end_turn",
        usage: { inputTokens: 11, outputTokens: 3, cachedInputTokens: 4 },
      },
    ]);
    const sent = fixture.lastRequest;
    expect(sent.path).to.equal("/v1/chat/completions");
    expect(sent.headers.authorization).to.equal("Bearer sk-test-key-123456");
    expect(sent.body).to.deep.include({
      model: "fixture-model",
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(sent.body.messages).to.deep.equal([
      { role: "system", content: "sys" },
      { role: "user", content: "hi" },
    ]);
    expect(sent.body.tools).to.deep.equal([
      {
        type: "function",
        function: { name: "read_file", description: "read", parameters: { type: "object" } },
      },
    ]);
  });

  it("turns reasoning_content into thinking and echoes it back on assistant messages", async () => {
    fixture.enqueue({
      chunks: [chunk.reasoning("think "), chunk.reasoning("hard"), chunk.text("ok"), chunk.finish("stop")],
    });
    const events = await collect(provider(fixture).stream(request()));
    expect(events.slice(0, 3)).to.deep.equal([
      { type: "thinking_delta", text: "think " },
      { type: "thinking_delta", text: "hard" },
      { type: "text_delta", text: "ok" },
    ]);
    fixture.enqueue(textReply("again"));
    const history: Message[] = [
      user("hi"),
      {
        id: "a1",
        role: "assistant",
        createdAt: "t",
        content: [
          { type: "thinking", thinking: "think hard" },
          { type: "text", text: "ok" },
          { type: "tool_use", id: "call_1", name: "read_file", input: { path: "a" } },
        ],
      },
      {
        id: "r1",
        role: "user",
        createdAt: "t",
        content: [{ type: "tool_result", toolUseId: "call_1", content: "A", isError: false }],
      },
    ];
    await collect(provider(fixture).stream(request({ messages: history })));
    expect(fixture.lastRequest.body.messages).to.deep.equal([
      { role: "system", content: "sys" },
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: "ok",
        reasoning_content: "think hard",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "A" },
    ]);
  });

  it("assembles a tool call whose arguments arrive before its id, split over chunks", async () => {
    fixture.enqueue({
      chunks: [
        chunk.toolCall({ index: 0, args: '{"pa' }),
        chunk.toolCall({ index: 0, id: "call_9", name: "read_file", args: 'th":' }),
        chunk.toolCall({ index: 0, args: '"a.txt"}' }),
        chunk.finish("tool_calls"),
        chunk.usage(5, 5),
      ],
    });
    const events = await collect(provider(fixture).stream(request()));
    expect(events).to.deep.equal([
      { type: "tool_use_start", id: "call_9", name: "read_file" },
      { type: "tool_input_delta", id: "call_9", partialJson: '{"path":' },
      { type: "tool_input_delta", id: "call_9", partialJson: '"a.txt"}' },
      { type: "tool_use_end", id: "call_9", name: "read_file", input: { path: "a.txt" } },
      { type: "message_end", stopReason: "tool_use", usage: { inputTokens: 5, outputTokens: 5 } },
    ]);
  });

  it("assembles two parallel tool calls by index and flags unparsable arguments", async () => {
    fixture.enqueue({
      chunks: [
        chunk.toolCall({ index: 0, id: "c0", name: "read_file", args: '{"path":' }),
        chunk.toolCall({ index: 1, id: "c1", name: "list_files", args: "{" }),
        chunk.toolCall({ index: 0, args: '"x"}' }),
        chunk.toolCall({ index: 1, args: "}" }),
        chunk.toolCall({ index: 2, id: "c2", name: "glob", args: "{not json" }),
        chunk.finish("tool_calls"),
      ],
    });
    const events = await collect(provider(fixture).stream(request()));
    const ends = events.filter((e) => e.type === "tool_use_end");
    expect(ends).to.deep.equal([
      { type: "tool_use_end", id: "c0", name: "read_file", input: { path: "x" } },
      { type: "tool_use_end", id: "c1", name: "list_files", input: {} },
      {
        type: "tool_use_end",
        id: "c2",
        name: "glob",
        input: {},
        inputError: "The tool arguments are not valid JSON.",
      },
    ]);
    expect(events.at(-1)).to.deep.equal({ type: "message_end", stopReason: "tool_use" });
  });

  it("maps finish reasons", async () => {
    fixture.enqueue({ chunks: [chunk.text("cut"), chunk.finish("length")] });
    const events = await collect(provider(fixture).stream(request()));
    expect(events.at(-1)).to.deep.equal({ type: "message_end", stopReason: "max_tokens" });
  });

  it("gives a 401 as an authentication error without retrying", async () => {
    fixture.enqueue({ status: 401, body: { error: { message: "Incorrect API key provided: sk-test***" } } });
    const error = await failure(provider(fixture).stream(request()));
    expect(error).to.be.instanceOf(ProviderError);
    expect((error as ProviderError).kind).to.equal("authentication");
    expect((error as ProviderError).status).to.equal(401);
    expect(fixture.requests).to.have.length(1);
  });

  it("retries a 429 (honouring Retry-After) and then succeeds", async () => {
    fixture.enqueue(
      { status: 429, headers: { "retry-after": "0" }, body: { error: { message: "slow down" } } },
      textReply("fine"),
    );
    const events = await collect(provider(fixture).stream(request()));
    expect(events[0]).to.deep.equal({ type: "text_delta", text: "fine" });
    expect(fixture.requests).to.have.length(2);
  });

  it("gives up after the retries on 5xx with a retryable error", async () => {
    fixture.enqueue(
      { status: 503, body: { error: { message: "down" } } },
      { status: 502, body: {} },
      { status: 500, body: {} },
    );
    const error = (await failure(provider(fixture).stream(request()))) as ProviderError;
    expect(error.kind).to.equal("retryable");
    expect(fixture.requests).to.have.length(3);
  });

  it("treats a 400 as fatal and keeps the vendor text for the logs only", async () => {
    fixture.enqueue({ status: 400, body: { error: { message: "model not found" } } });
    const error = (await failure(provider(fixture).stream(request()))) as ProviderError;
    expect(error.kind).to.equal("fatal");
    expect(error.detail).to.include("model not found");
  });

  it("reports a stream cut mid-way as a retryable error after the partial events", async () => {
    fixture.enqueue({ chunks: [chunk.text("par"), chunk.text("tial"), chunk.finish("stop")], cutAfter: 2 });
    const seen: ProviderEvent[] = [];
    let error: unknown;
    try {
      for await (const event of provider(fixture).stream(request())) seen.push(event);
    } catch (e) {
      error = e;
    }
    expect(seen).to.deep.equal([
      { type: "text_delta", text: "par" },
      { type: "text_delta", text: "tial" },
    ]);
    expect((error as ProviderError).kind).to.equal("retryable");
  });

  it("rejects bad responses: a non-JSON chunk, an HTML body", async () => {
    fixture.enqueue({ chunks: ["{nope"] });
    expect(((await failure(provider(fixture).stream(request()))) as ProviderError).detail).to.equal(
      "bad response: a stream chunk is not JSON",
    );
    fixture.enqueue({ raw: "<html>proxy error</html>", headers: { "content-type": "application/json" } });
    expect(((await failure(provider(fixture).stream(request()))) as ProviderError).detail).to.equal(
      "bad response: the body is not JSON",
    );
    fixture.enqueue({ chunks: [{ error: { message: "quota", code: "insufficient_quota" } }] });
    expect(((await failure(provider(fixture).stream(request()))) as ProviderError).kind).to.equal("fatal");
  });

  it("accepts a server that answers with one JSON completion", async () => {
    fixture.enqueue({
      body: {
        choices: [
          {
            message: { role: "assistant", content: "whole", reasoning_content: "why" },
            finish_reason: "stop",
          },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 1 },
      },
    });
    const events = await collect(provider(fixture).stream(request()));
    expect(events).to.deep.equal([
      { type: "thinking_delta", text: "why" },
      { type: "text_delta", text: "whole" },
      { type: "message_end", stopReason: "end_turn", usage: { inputTokens: 3, outputTokens: 1 } },
    ]);
  });

  it("abandons a stream that goes idle", async () => {
    fixture.enqueue({ chunks: [chunk.text("a"), chunk.text("b")], hangAfter: 1 });
    const error = (await failure(
      provider(fixture, {
        idleTimeoutMs: 300,
        retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
      }).stream(request()),
    )) as ProviderError;
    expect(error.kind).to.equal("retryable");
    expect(error.detail).to.match(/idle timeout/);
  });

  it("gives up on an endpoint that sends no response headers", async () => {
    fixture.enqueue({ delayMs: 5_000, chunks: [chunk.text("late")] });
    const error = (await failure(
      provider(fixture, {
        idleTimeoutMs: 200,
        retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
      }).stream(request()),
    )) as ProviderError;
    expect(error).to.include({ kind: "retryable", detail: "no response within 200 ms (idle timeout)" });
  });

  it("retries a refused connection, then reports a retryable error", async () => {
    const closed = new OpenAIChatProvider(
      {
        name: "openai_compatible",
        model: "m",
        baseUrl: "http://127.0.0.1:1/v1",
        idleTimeoutMs: 2000,
        retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 },
        thinkingFamily: "generic",
      },
      silentLogger(),
    );
    const error = (await failure(closed.stream(request()))) as ProviderError;
    expect(error.kind).to.equal("retryable");
    expect(error.detail).to.match(/^connection failed: /);
  });

  it("stops a slow stream when the client cancels, closing the connection", async () => {
    fixture.enqueue({ chunks: [chunk.text("a"), chunk.text("b")], hangAfter: 1 });
    const controller = new AbortController();
    const seen: ProviderEvent[] = [];
    let error: unknown;
    try {
      for await (const event of provider(fixture).stream(request({ signal: controller.signal }))) {
        seen.push(event);
        controller.abort();
      }
    } catch (e) {
      error = e;
    }
    expect(seen).to.deep.equal([{ type: "text_delta", text: "a" }]);
    expect((error as Error).name).to.equal("AbortError");
    await fixture.lastRequest.closed;
    expect(fixture.lastRequest.clientAborted).to.equal(true);
  });

  it("maps thinking knobs per model family", async () => {
    const cases: Array<[string, string, Record<string, unknown>, Record<string, unknown>]> = [
      [
        "dashscope",
        "qwen3.8-max",
        { enabled: true, budget: 2048, effort: "high" },
        {
          enable_thinking: true,
          thinking_budget: 2048,
          reasoning_effort: "high",
          max_completion_tokens: 3048,
        },
      ],
      [
        "dashscope",
        "qwen-plus",
        { enabled: false, budget: 2048 },
        { enable_thinking: false, max_completion_tokens: 1000 },
      ],
      ["openai", "gpt-5.1", { enabled: false }, { reasoning_effort: "none", max_completion_tokens: 1000 }],
      ["openai", "o3", { effort: "low" }, { reasoning_effort: "low", max_completion_tokens: 1000 }],
      ["generic", "llama3", { enabled: true }, { max_completion_tokens: 1000 }],
    ];
    for (const [family, model, thinking, expected] of cases) {
      fixture.enqueue(textReply("x"));
      await collect(
        provider(fixture, { thinkingFamily: family, model, thinking, maxTokens: 1000 }).stream(request()),
      );
      const body = fixture.lastRequest.body;
      for (const key of ["enable_thinking", "thinking_budget", "reasoning_effort", "max_completion_tokens"]) {
        expect(body[key], `${family}/${model} ${key}`).to.deep.equal(expected[key]);
      }
    }
  });

  it("runs a whole turn against the fixture: streamed text, permission, file written", async () => {
    const configDir = await tempDir();
    const cwd = await tempDir("iac-ws-");
    const runtime = await createAgentRuntime({
      configDir,
      // Only a key and a base URL: the endpoint's first model is used.
      env: { IAC_CODE_BASE_URL: fixture.url, IAC_CODE_API_KEY: "sk-e2e-key-abcdef" },
      logger: silentLogger(),
      retry: { maxRetries: 0 },
    });
    try {
      fixture.models = ["qwen3-coder", "other"];
      expect(runtime.info()).to.include({ provider: "openai_compatible", model: "auto", demo: false });
      const template =
        "ROSTemplateFormatVersion: '2015-09-01'\nResources:\n  Vpc:\n    Type: ALIYUN::ECS::VPC\n";
      fixture.enqueue(
        {
          chunks: [
            chunk.text("Here is "),
            chunk.text("a VPC template."),
            chunk.toolCall({
              index: 0,
              id: "call_w",
              name: "write_file",
              args: JSON.stringify({ path: "vpc.yaml", content: template }).slice(0, 10),
            }),
            chunk.toolCall({
              index: 0,
              args: JSON.stringify({ path: "vpc.yaml", content: template }).slice(10),
            }),
            chunk.finish("tool_calls"),
            chunk.usage(100, 20),
          ],
        },
        textReply("vpc.yaml is ready.", [150, 5]),
      );
      const session = await runtime.openSession({ contextId: "ctx-e2e", cwd });
      const events = await turn(session, "create a VPC template", { answer: allowOnce });
      expect(
        ofType(events, "text_delta")
          .map((e) => e.text)
          .join(""),
      ).to.equal("Here is a VPC template.vpc.yaml is ready.");
      expect(ofType(events, "input_required")[0].request.title).to.equal("Write vpc.yaml.");
      expect(await readFile(path.join(cwd, "vpc.yaml"), "utf8")).to.equal(template);
      const second = fixture.requests[1].body.messages as Array<Record<string, unknown>>;
      expect(second.at(-1)).to.deep.equal({
        role: "tool",
        tool_call_id: "call_w",
        content: `Created vpc.yaml (${Buffer.byteLength(template)} bytes).`,
      });
      const ends = ofType(events, "message_end");
      expect(ends.map((e) => e.usage?.totalTokens)).to.deep.equal([120, 155]);
      expect(ends[0].usage).to.include({ provider: "openai_compatible", model: "qwen3-coder" });
      expect(fixture.requests.map((r) => r.body.model)).to.deep.equal(["qwen3-coder", "qwen3-coder"]);
      expect(fixture.modelListings).to.equal(1);
      expect(fixture.requests[0].headers.authorization).to.equal("Bearer sk-e2e-key-abcdef");
    } finally {
      await runtime.close();
    }
  });

  it("a configured provider without key gives the sanitised authentication error (not demo)", async () => {
    const configDir = await tempDir();
    const runtime = await createAgentRuntime({
      configDir,
      env: { IAC_CODE_PROVIDER: "dashscope" },
      logger: silentLogger(),
    });
    try {
      expect(runtime.info()).to.include({ provider: "dashscope", demo: false });
      const session = await runtime.openSession({ contextId: "c", cwd: await tempDir("iac-ws-") });
      const events = await turn(session, "hello", { overrides: { language: "es" } });
      expect(events).to.have.length(1);
      expect(events[0]).to.include({
        type: "error",
        kind: "authentication",
        code: "MODEL_AUTHENTICATION_FAILED",
      });
      expect((events[0] as { message: string }).message).to.match(
        /^El proveedor del modelo necesita credenciales válidas: compruebe la clave de API y vuelva a intentarlo \(error err_\w+\)\.$/,
      );
    } finally {
      await runtime.close();
    }
  });

  it("uses a per-turn API key and model for that turn only", async () => {
    const configDir = await tempDir();
    const runtime = await createAgentRuntime({
      configDir,
      env: {
        IAC_CODE_PROVIDER: "openai_compatible",
        IAC_CODE_BASE_URL: fixture.url,
        IAC_CODE_MODEL: "base-model",
      },
      logger: silentLogger(),
    });
    try {
      const session = await runtime.openSession({ contextId: "c", cwd: await tempDir("iac-ws-") });
      fixture.enqueue(textReply("one"), textReply("two"));
      await turn(session, "first", { overrides: { apiKey: "sk-turn-only-999999", model: "turn-model" } });
      await turn(session, "second");
      expect(fixture.requests[0].headers.authorization).to.equal("Bearer sk-turn-only-999999");
      expect(fixture.requests[0].body.model).to.equal("turn-model");
      expect(fixture.requests[1].headers.authorization).to.equal(undefined);
      expect(fixture.requests[1].body.model).to.equal("base-model");
      expect(storedRows(configDir, session.sessionId, "conversation")).to.have.length(4);
    } finally {
      await runtime.close();
    }
    // Nowhere in the config dir (the runtime's database and its WAL included).
    for (const file of await readdir(configDir, { recursive: true })) {
      const full = path.join(configDir, file);
      if ((await stat(full)).isFile())
        expect(await readFile(full, "latin1"), file).to.not.include("sk-turn-only");
    }
  });
});
