// MCP servers through AgentSession with the scripted provider: a real stdio
// server (a child process) and a real Streamable HTTP server on loopback,
// both written with the SDK's server side (test/fixtures/mcp). Tools,
// permissions by readOnlyHint, progress, resources, a server that fails to
// start or dies mid-call, secrets kept out of events and logs, connections
// reused and closed, and mcp.json errors that name the field.
import { expect } from "chai";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { schemaIndex, violations } from "../../src/contract/index.js";
import { createAgentRuntime, type RuntimeOptions } from "../../src/runtime/index.js";
import { mcpSecrets, parseMcpServers } from "../../src/runtime/mcp/config.js";
import type { AgentRuntime, AgentSession, RuntimeEvent } from "../../src/runtime/seam.js";
import { startHttpMcpServer, type FixtureHttpServer } from "../fixtures/mcp/http-server.js";
import { README_TEXT } from "../fixtures/mcp/tool-server.js";
import {
  allowOnce,
  capturingLogger,
  ofType,
  removeTempDirs,
  SCRIPTS,
  silentLogger,
  tempDir,
  turn,
} from "./helpers.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const STDIO_SERVER = path.join(ROOT, "test", "fixtures", "mcp", "stdio-server.ts");
const MCP_SCRIPT = path.join(SCRIPTS, "mcp.yaml");
const SECRET = "fixture-secret-value-1234";
const HTTP_TOKEN = "http-bearer-token-5678";

/** A stdio entry that runs the fixture server with this Node and tsx. */
function stdioEntry(extraArgs: string[] = [], env: Record<string, string> = {}) {
  return { command: process.execPath, args: ["--import", "tsx", STDIO_SERVER, ...extraArgs], env, cwd: ROOT };
}

interface Env {
  runtime: AgentRuntime;
  session: AgentSession;
  configDir: string;
  logLines: string[];
}

async function setup(mcp: unknown, options: Partial<RuntimeOptions> = {}): Promise<Env> {
  const configDir = await tempDir();
  await writeFile(path.join(configDir, "mcp.json"), JSON.stringify(mcp));
  const { logger, lines } = capturingLogger();
  const runtime = await createAgentRuntime({
    configDir,
    env: { MCP_TEST_TOKEN: HTTP_TOKEN },
    provider: "scripted",
    scriptFile: MCP_SCRIPT,
    logger,
    ...options,
  });
  const session = await runtime.openSession({ contextId: "ctx-mcp", cwd: await tempDir("iac-ws-") });
  return { runtime, session, configDir, logLines: lines };
}

const resultOf = (events: RuntimeEvent[]) => ofType(events, "tool_result")[0];
const finalText = (events: RuntimeEvent[]) => ofType(events, "message_end").at(-1)?.text;

describe("runtime: MCP servers", function () {
  this.timeout(60_000);
  let env: Env | undefined;
  let http: FixtureHttpServer | undefined;
  afterEach(async () => {
    await env?.runtime.close();
    env = undefined;
    await http?.close();
    http = undefined;
    await removeTempDirs();
  });

  it("runs a readOnlyHint tool of a stdio server without asking, and announces the servers once", async () => {
    env = await setup({ mcpServers: { fix: stdioEntry() } });
    const events = await turn(env.session, "[ECHO]");
    expect(ofType(events, "input_required")).to.have.length(0);
    const decided = ofType(events, "permission_decided")[0];
    expect(decided).to.include({ toolName: "mcp__fix__echo", allowed: true, reason: "read_only" });
    expect(resultOf(events)).to.include({ name: "mcp__fix__echo", isError: false, result: "echo: hi" });
    expect(finalText(events)).to.equal("Result: echo: hi");
    const status = ofType(events, "mcp_status");
    expect(status).to.have.length(1);
    expect(status[0].status).to.deep.equal({
      servers: [{ name: "fix", transport: "stdio", status: "connected", toolCount: 5, resources: true }],
      warnings: [],
    });
    expect(ofType(events, "mcp_warning")).to.have.length(0);
  });

  it("safe mode starts no MCP server: no status, its tools are unknown to the model", async () => {
    env = await setup({ mcpServers: { fix: stdioEntry() } }, { safeMode: true });
    const events = await turn(env.session, "[ECHO]");
    expect(ofType(events, "mcp_status")).to.have.length(0);
    expect(resultOf(events)).to.include({ name: "mcp__fix__echo", isError: true });
    expect(String(resultOf(events).result)).to.include("Unknown tool mcp__fix__echo");
  });

  it("asks permission for a tool without readOnlyHint, and runs it once allowed", async () => {
    env = await setup({ mcpServers: { fix: stdioEntry() } });
    const events = await turn(env.session, "[NOTE]", { answer: allowOnce });
    const asked = ofType(events, "input_required");
    expect(asked).to.have.length(1);
    expect(asked[0].request).to.include({
      kind: "permission",
      toolName: "mcp__fix__write_note",
      isReadOnly: false,
    });
    expect(resultOf(events)).to.include({ isError: false, result: "note saved: remember" });
  });

  it("publishes the server's progress notifications as tool progress before the result", async () => {
    env = await setup({ mcpServers: { fix: stdioEntry() } });
    const events = await turn(env.session, "[COUNT]");
    const progress = ofType(events, "tool_progress");
    expect(progress.map((p) => p.mcp)).to.deep.equal([
      { serverName: "fix", toolName: "slow_count", progress: 1, total: 2, message: "step 1 of 2" },
      { serverName: "fix", toolName: "slow_count", progress: 2, total: 2, message: "step 2 of 2" },
    ]);
    expect(progress[0].progress).to.include({ progress: 1, total: 2 });
    expect(progress[0].progress).to.have.property("progressToken");
    const order = events.map((e) => e.type);
    expect(order.lastIndexOf("tool_progress")).to.be.below(order.indexOf("tool_result"));
    // The structured result goes to clients; the text to the model.
    expect(resultOf(events).result).to.deep.equal({ count: 2 });
  });

  it("lists and reads resources", async () => {
    env = await setup({ mcpServers: { fix: stdioEntry() } });
    const events = await turn(env.session, "[RESOURCES]");
    const results = ofType(events, "tool_result");
    expect(results.map((r) => r.name)).to.deep.equal(["list_mcp_resources", "read_mcp_resource"]);
    expect(results[0].result).to.deep.equal([
      { server: "fix", uri: "note://readme", name: "readme", mimeType: "text/plain" },
    ]);
    expect(ofType(events, "input_required")).to.have.length(0);
    expect(finalText(events)).to.equal(`Resource: ${README_TEXT}`);
  });

  it("passes env to the server, keeps the connection across turns, and never shows the env value", async () => {
    env = await setup({ mcpServers: { fix: stdioEntry([], { FIXTURE_TOKEN: SECRET }) } });
    const first = await turn(env.session, "[PROBE]");
    const second = await turn(env.session, "[PROBE]");
    const text1 = resultOf(first).result as string;
    expect(text1).to.match(/^token set, pid \d+$/);
    expect(resultOf(second).result).to.equal(text1);
    const pid = Number(/pid (\d+)/.exec(text1)![1]);
    expect(JSON.stringify([...first, ...second])).not.to.include(SECRET);
    expect(env.logLines.join("\n")).not.to.include(SECRET);
    await env.runtime.close();
    env = undefined;
    // Closing the runtime ended the server process.
    expect(() => process.kill(pid, 0))
      .to.throw()
      .with.property("code", "ESRCH");
  });

  it("a server that dies mid-call: the call fails, a warning follows, the turn completes; the next turn reconnects", async () => {
    env = await setup({ mcpServers: { fix: stdioEntry() } });
    const events = await turn(env.session, "[CRASH]");
    expect(resultOf(events)).to.include({
      isError: true,
      result: "MCP server fix disconnected during the call.",
    });
    const warnings = ofType(events, "mcp_warning");
    expect(warnings).to.have.length(1);
    expect(warnings[0].warning).to.include({ serverName: "fix", code: "disconnected", severity: "fatal" });
    const statuses = ofType(events, "mcp_status").map((s) => s.status.servers[0].status);
    expect(statuses).to.deep.equal(["connected", "disconnected"]);
    expect(ofType(events, "error")).to.have.length(0);
    expect(finalText(events)).to.equal("Result: MCP server fix disconnected during the call.");

    const next = await turn(env.session, "[ECHO]");
    expect(ofType(next, "mcp_status")[0].status.servers[0].status).to.equal("connected");
    expect(ofType(next, "mcp_warning")).to.have.length(0);
    expect(resultOf(next)).to.include({ isError: false, result: "echo: hi" });
  });

  it("a server that fails to start: a warning, its tools are absent, the other server works", async () => {
    env = await setup({
      mcpServers: {
        broken: stdioEntry(["fail-start"], { FIXTURE_TOKEN: SECRET }),
        fix: stdioEntry(),
        missing: { command: "/nonexistent/mcp-server-binary", env: { API_KEY: SECRET } },
      },
    });
    const events = await turn(env.session, "[ECHO]");
    const warnings = ofType(events, "mcp_warning").map((w) => w.warning);
    expect(warnings.map((w) => [w.serverName, w.code])).to.have.deep.members([
      ["broken", "start_failed"],
      ["missing", "start_failed"],
    ]);
    const missing = warnings.find((w) => w.serverName === "missing")!;
    expect(missing.message).to.equal(
      "MCP server missing could not start: the command was not found (ENOENT)",
    );
    expect(missing).to.include({ source: "mcp-config", sourcePath: "mcp.json" });
    for (const w of warnings) expect(w.message).not.to.include("/nonexistent");
    const status = ofType(events, "mcp_status")[0].status;
    expect(status.servers.map((s) => [s.name, s.status])).to.deep.equal([
      ["broken", "failed"],
      ["fix", "connected"],
      ["missing", "failed"],
    ]);
    expect(status.warnings).to.have.length(2);
    expect(resultOf(events)).to.include({ isError: false, result: "echo: hi" });
    expect(JSON.stringify(events)).not.to.include(SECRET);
    expect(env.logLines.join("\n")).not.to.include(SECRET);
  });

  it("an unknown MCP tool name (server down) gets an error result, not a failed turn", async () => {
    env = await setup({ mcpServers: { fix: stdioEntry(["fail-start"]) } });
    const events = await turn(env.session, "[ECHO]");
    expect(resultOf(events).isError).to.equal(true);
    expect(resultOf(events).result).to.match(/^Unknown tool mcp__fix__echo\./);
    expect(ofType(events, "error")).to.have.length(0);
  });

  it("talks to a Streamable HTTP server with headers from the environment; a wrong token warns without showing it", async () => {
    http = await startHttpMcpServer(HTTP_TOKEN);
    env = await setup({
      mcpServers: {
        web: { url: http.url, headers: { Authorization: "Bearer ${MCP_TEST_TOKEN}" } },
        denied: { type: "http", url: http.url, headers: { Authorization: "Bearer wrong-token-value" } },
      },
    });
    const events = await turn(env.session, "[HTTP-ECHO]");
    expect(resultOf(events)).to.include({
      name: "mcp__web__echo",
      isError: false,
      result: "echo: over http",
    });
    expect(http.authorizations).to.include(`Bearer ${HTTP_TOKEN}`);
    const warning = ofType(events, "mcp_warning")[0].warning;
    expect(warning).to.include({ serverName: "denied", code: "start_failed" });
    expect(warning.message).to.match(/^MCP server denied could not start: /);
    const wire = JSON.stringify(events);
    expect(wire).not.to.include("wrong-token-value");
    expect(wire).not.to.include(HTTP_TOKEN);
    expect(wire).not.to.include(http.url);
    expect(env.logLines.join("\n")).not.to.include("wrong-token-value");

    const count = await turn(env.session, "[HTTP-COUNT]");
    expect(ofType(count, "tool_progress").map((p) => p.mcp?.progress)).to.deep.equal([1, 2]);
  });

  it("a pipeline run announces the servers with an mcp_status event after pipeline_started", async () => {
    env = await setup({ mcpServers: { fix: stdioEntry(), broken: stdioEntry(["fail-start"]) } });
    const stop = new AbortController();
    const events = await turn(env.session, "plan a VPC", {
      overrides: { runMode: "pipeline" },
      signal: stop.signal,
      // Only the run's start matters here: the steps are not scripted.
      onEvent: (e) => {
        if (e.type === "pipeline" && e.envelopes.some((x) => x.eventType === "mcp_status")) stop.abort();
      },
    });
    const envelopes = ofType(events, "pipeline").flatMap((e) => e.envelopes);
    expect(envelopes.slice(0, 2).map((e) => e.eventType)).to.deep.equal(["pipeline_started", "mcp_status"]);
    const data = envelopes[1].data as {
      kind: string;
      mcpStatus: { servers: Array<{ name: string; status: string }> };
    };
    expect(data.kind).to.equal("mcp_status");
    const validate = schemaIndex["a2a/pipeline-envelope"].validate;
    expect(validate(envelopes[1]), JSON.stringify(violations(validate))).to.equal(true);
    expect(data.mcpStatus.servers.map((s) => [s.name, s.status])).to.deep.equal([
      ["fix", "connected"],
      ["broken", "failed"],
    ]);
  });

  describe("mcp.json errors name the field, never a value", () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ["not an object", [], /^mcp\.json must be a JSON object with an mcpServers object\.$/],
      ["mcpServers not an object", { mcpServers: [] }, /^mcp\.json: mcpServers must be an object/],
      [
        "no command nor url",
        { mcpServers: { a: { args: [] } } },
        /^mcp\.json: mcpServers\.a needs command .* or url/,
      ],
      [
        "args not strings",
        { mcpServers: { a: { command: "x", args: [1] } } },
        /mcpServers\.a\.args must be an array of strings\.$/,
      ],
      [
        "env value not a string",
        { mcpServers: { a: { command: "x", env: { TOKEN: 12345678 } } } },
        /^mcp\.json: mcpServers\.a\.env\.TOKEN must be a string\.$/,
      ],
      [
        "header value not a string",
        { mcpServers: { a: { url: "http://127.0.0.1:1/mcp", headers: { Authorization: ["x"] } } } },
        /mcpServers\.a\.headers\.Authorization must be a string\.$/,
      ],
      [
        "url not http",
        { mcpServers: { a: { url: "ftp://example.com/mcp" } } },
        /mcpServers\.a\.url must be an http/,
      ],
      [
        "both command and url",
        { mcpServers: { a: { command: "x", url: "http://h/" } } },
        /has both command and url/,
      ],
      [
        "sse",
        { mcpServers: { a: { type: "sse", url: "http://h/" } } },
        /mcpServers\.a\.type: the legacy SSE transport/,
      ],
      ["bad server name", { mcpServers: { "a b": { command: "x" } } }, /the server name "a b" must be/],
      [
        "unset variable",
        { mcpServers: { a: { command: "x", env: { TOKEN: "${NOT_SET_ANYWHERE}" } } } },
        /mcpServers\.a\.env\.TOKEN refers to \$\{NOT_SET_ANYWHERE\}, which is not set/,
      ],
    ];
    for (const [title, doc, pattern] of cases) {
      it(title, async () => {
        const configDir = await tempDir();
        await writeFile(path.join(configDir, "mcp.json"), JSON.stringify(doc));
        const failure = await createAgentRuntime({
          configDir,
          env: {},
          provider: "scripted",
          scriptFile: MCP_SCRIPT,
          logger: silentLogger(),
        }).then(
          () => undefined,
          (error: Error) => error,
        );
        expect(failure?.name).to.equal("ConfigError");
        expect(failure?.message).to.match(pattern);
        expect(failure?.message).not.to.include("12345678");
      });
    }

    it("accepts the other hosts' shapes: type, disabled, ${VAR:-default}; lists every secret", () => {
      const servers = parseMcpServers(
        {
          mcpServers: {
            off: { command: "x", disabled: true },
            local: { type: "stdio", command: "srv", args: ["--token=${TOK}"], env: { KEY: "${TOK}" } },
            remote: {
              type: "streamable-http",
              url: "https://u:pass-word@mcp.example.com/mcp?key=${MISSING:-query-secret}",
              headers: { Authorization: "Bearer ${TOK}" },
            },
          },
        },
        "mcp.json",
        { TOK: "tok-value-123" },
      );
      expect(servers.map((s) => s.name)).to.deep.equal(["local", "remote"]);
      expect(servers[0]).to.deep.include({ transport: "stdio", args: ["--token=tok-value-123"] });
      expect(servers[1]).to.deep.include({
        transport: "http",
        headers: { Authorization: "Bearer tok-value-123" },
      });
      expect(mcpSecrets(servers)).to.have.members([
        "tok-value-123",
        "Bearer tok-value-123",
        "pass-word",
        "query-secret",
      ]);
    });

    it("invalid JSON names the file", async () => {
      const configDir = await tempDir();
      await writeFile(path.join(configDir, "mcp.json"), "{ mcpServers: ");
      const error = await createAgentRuntime({
        configDir,
        env: {},
        scriptFile: MCP_SCRIPT,
        logger: silentLogger(),
      }).catch((e: Error) => e);
      expect((error as Error).message).to.match(/^mcp\.json is not valid JSON: /);
    });

    it("a named mcp-config file must exist; IAC_CODE_MCP_CONFIG names one too", async () => {
      const configDir = await tempDir();
      const error = await createAgentRuntime({
        configDir,
        env: {},
        scriptFile: MCP_SCRIPT,
        mcpConfig: path.join(configDir, "elsewhere.json"),
        logger: silentLogger(),
      }).catch((e: Error) => e);
      expect((error as Error).message).to.equal(
        "MCP config elsewhere.json does not exist (mcp-config / IAC_CODE_MCP_CONFIG).",
      );
      const other = path.join(configDir, "other");
      await mkdir(other);
      await writeFile(path.join(other, "servers.json"), JSON.stringify({ mcpServers: { a: { url: 3 } } }));
      const fromEnv = await createAgentRuntime({
        configDir,
        env: { IAC_CODE_MCP_CONFIG: path.join(other, "servers.json") },
        scriptFile: MCP_SCRIPT,
        logger: silentLogger(),
      }).catch((e: Error) => e);
      expect((fromEnv as Error).message).to.equal(
        "MCP config servers.json: mcpServers.a.url must be a non-empty string.",
      );
    });

    it("no mcp.json: no MCP tools, no MCP events", async () => {
      const configDir = await tempDir();
      const runtime = await createAgentRuntime({
        configDir,
        env: {},
        scriptFile: MCP_SCRIPT,
        logger: silentLogger(),
      });
      try {
        const session = await runtime.openSession({ contextId: "c", cwd: await tempDir("iac-ws-") });
        const events = await turn(session, "[RESOURCES]");
        expect(resultOf(events).result).to.match(/^Unknown tool list_mcp_resources\./);
        expect(events.some((e) => e.type === "mcp_status" || e.type === "mcp_warning")).to.equal(false);
      } finally {
        await runtime.close();
      }
    });
  });
});
