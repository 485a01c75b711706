// The Anthropic Messages provider against a local server: text, thinking
// with signature, tool_use with streamed JSON, errors, request shape, and a
// turn through AgentSession (thinking signatures round-trip).
import { expect } from "chai";
import { ProviderError } from "../../src/runtime/errors.js";
import { createAgentRuntime } from "../../src/runtime/index.js";
import { AnthropicProvider, toAnthropicMessages } from "../../src/runtime/providers/anthropic.js";
import type { ProviderEvent, ProviderRequest } from "../../src/runtime/providers/types.js";
import { AnthropicFixture, ev } from "../fixtures/anthropic-server.js";
import { ofType, removeTempDirs, silentLogger, tempDir, turn } from "./helpers.js";

function provider(fixture: AnthropicFixture, thinking?: { enabled?: boolean; budget?: number }) {
  return new AnthropicProvider(
    {
      name: "anthropic",
      model: "claude-test",
      baseUrl: fixture.url,
      apiKey: "sk-ant-test-000000",
      idleTimeoutMs: 2000,
      retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 2 },
      thinkingFamily: "anthropic",
      ...(thinking ? { thinking } : {}),
    },
    silentLogger(),
  );
}

const request = (): ProviderRequest => ({
  system: "sys",
  messages: [{ id: "u", role: "user", content: [{ type: "text", text: "hi" }], createdAt: "t" }],
  tools: [{ name: "glob", description: "find", inputSchema: { type: "object" } }],
  kind: "stream",
  signal: new AbortController().signal,
});

async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const out: ProviderEvent[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

const thinkingAndTool = [
  ev.messageStart(30),
  ev.blockStart(0, { type: "thinking", thinking: "" }),
  ev.delta(0, { type: "thinking_delta", thinking: "Need files." }),
  ev.delta(0, { type: "signature_delta", signature: "sig-abc" }),
  ev.blockStop(0),
  ev.blockStart(1, { type: "text", text: "" }),
  ev.ping(),
  ev.delta(1, { type: "text_delta", text: "Looking." }),
  ev.blockStop(1),
  ev.blockStart(2, { type: "tool_use", id: "toolu_1", name: "glob", input: {} }),
  ev.delta(2, { type: "input_json_delta", partial_json: '{"pattern":' }),
  ev.delta(2, { type: "input_json_delta", partial_json: '"*.yaml"}' }),
  ev.blockStop(2),
  ev.messageDelta("tool_use", 17),
  ev.messageStop(),
];

describe("runtime: Anthropic provider", () => {
  let fixture: AnthropicFixture;
  beforeEach(async () => {
    fixture = await AnthropicFixture.start();
  });
  afterEach(async () => {
    await fixture.close();
    await removeTempDirs();
  });

  it("streams thinking (with signature), text and a tool call, and sends a Messages request", async () => {
    fixture.enqueue({ events: thinkingAndTool });
    const events = await collect(provider(fixture, { enabled: true, budget: 2000 }).stream(request()));
    expect(events).to.deep.equal([
      { type: "thinking_delta", text: "Need files." },
      { type: "thinking_delta", text: "", signature: "sig-abc" },
      { type: "text_delta", text: "Looking." },
      { type: "tool_use_start", id: "toolu_1", name: "glob" },
      { type: "tool_input_delta", id: "toolu_1", partialJson: '{"pattern":' },
      { type: "tool_input_delta", id: "toolu_1", partialJson: '"*.yaml"}' },
      { type: "tool_use_end", id: "toolu_1", name: "glob", input: { pattern: "*.yaml" } },
      { type: "message_end", stopReason: "tool_use", usage: { inputTokens: 30, outputTokens: 17 } },
    ]);
    const sent = fixture.requests[0];
    expect(sent.path).to.equal("/v1/messages");
    expect(sent.headers["x-api-key"]).to.equal("sk-ant-test-000000");
    expect(sent.headers["anthropic-version"]).to.equal("2023-06-01");
    expect(sent.body).to.deep.include({
      model: "claude-test",
      system: "sys",
      stream: true,
      max_tokens: 8192 + 2000,
      thinking: { type: "enabled", budget_tokens: 2000 },
    });
    expect(sent.body.tools).to.deep.equal([
      { name: "glob", description: "find", input_schema: { type: "object" } },
    ]);
  });

  it("maps errors: 401 authentication, overloaded stream error retryable, cut stream retryable", async () => {
    fixture.enqueue({
      status: 401,
      body: { type: "error", error: { type: "authentication_error", message: "bad key" } },
    });
    let error = await collect(provider(fixture).stream(request())).catch((e: unknown) => e);
    expect((error as ProviderError).kind).to.equal("authentication");

    fixture.enqueue({
      events: [
        ev.messageStart(),
        { event: "error", data: { error: { type: "overloaded_error", message: "Overloaded" } } },
      ],
    });
    error = await collect(provider(fixture).stream(request())).catch((e: unknown) => e);
    expect((error as ProviderError).kind).to.equal("retryable");

    fixture.enqueue({ events: thinkingAndTool, cutAfter: 8 });
    error = await collect(provider(fixture).stream(request())).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ProviderError);
    expect((error as ProviderError).kind).to.equal("retryable");
  });

  it("converts the conversation: merged roles, tool results first, unsigned thinking dropped", () => {
    const out = toAnthropicMessages([
      { id: "1", role: "user", createdAt: "t", content: [{ type: "text", text: "a" }] },
      {
        id: "2",
        role: "user",
        kind: "compaction_summary",
        createdAt: "t",
        content: [{ type: "text", text: "b" }],
      },
      {
        id: "3",
        role: "assistant",
        createdAt: "t",
        content: [
          { type: "thinking", thinking: "unsigned" },
          { type: "thinking", thinking: "signed", signature: "s" },
          { type: "tool_use", id: "t1", name: "glob", input: {} },
        ],
      },
      {
        id: "4",
        role: "user",
        createdAt: "t",
        content: [
          { type: "text", text: "also" },
          { type: "tool_result", toolUseId: "t1", content: "r", isError: false },
        ],
      },
    ]);
    expect(out).to.deep.equal([
      {
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "signed", signature: "s" },
          { type: "tool_use", id: "t1", name: "glob", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "r", is_error: false },
          { type: "text", text: "also" },
        ],
      },
    ]);
  });

  it("runs a turn with tool use and echoes the signed thinking back", async () => {
    const configDir = await tempDir();
    const cwd = await tempDir("iac-ws-");
    const runtime = await createAgentRuntime({
      configDir,
      env: {
        IAC_CODE_PROVIDER: "anthropic",
        IAC_CODE_BASE_URL: fixture.url,
        IAC_CODE_API_KEY: "sk-ant-test-000000",
      },
      logger: silentLogger(),
    });
    try {
      fixture.enqueue(
        { events: thinkingAndTool },
        {
          events: [
            ev.messageStart(50),
            ev.blockStart(0, { type: "text", text: "" }),
            ev.delta(0, { type: "text_delta", text: "No YAML files." }),
            ev.blockStop(0),
            ev.messageDelta("end_turn", 4),
            ev.messageStop(),
          ],
        },
      );
      const session = await runtime.openSession({ contextId: "a", cwd });
      const events = await turn(session, "find templates");
      expect(ofType(events, "thinking_delta").map((e) => e.text)).to.deep.equal(["Need files."]);
      expect(ofType(events, "tool_result")[0]).to.deep.include({
        name: "glob",
        isError: false,
        result: { matches: [], total: 0 },
      });
      expect(ofType(events, "message_end").at(-1)?.text).to.equal("No YAML files.");
      const messages = fixture.requests[1].body.messages as Array<{
        role: string;
        content: Array<Record<string, unknown>>;
      }>;
      expect(messages[1].content[0]).to.deep.equal({
        type: "thinking",
        thinking: "Need files.",
        signature: "sig-abc",
      });
      expect(messages[2].content[0]).to.deep.include({
        type: "tool_result",
        tool_use_id: "toolu_1",
        is_error: false,
      });
    } finally {
      await runtime.close();
    }
  });
});
