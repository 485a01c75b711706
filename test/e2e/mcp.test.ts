// MCP end to end: the real A2A server and runtime (scripted model) with an
// mcp.json naming a stdio fixture server, a Streamable HTTP fixture server on
// loopback and a server that cannot start; A2A streams over JSON-RPC, and the
// AG-UI adapter in front of it driven by the official @ag-ui/client.
import { expect } from "chai";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HttpAgent, type Interrupt } from "@ag-ui/client";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { schemaIndex, violations } from "../../src/contract/index.js";
import { agentRun } from "../agui/harness.js";
import type { WireEvent as AguiEvent } from "../agui/helpers.js";
import { startHttpMcpServer, type FixtureHttpServer } from "../fixtures/mcp/http-server.js";
import {
  answer,
  iacOf,
  removeDir,
  sendToEnd,
  sendUntilInput,
  startE2eServer,
  tempDir,
  textOf,
  toolTrace,
  type E2eServer,
  adapterSettings,
} from "./helpers.js";
import { stateOf } from "../a2a/helpers.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const STDIO_SERVER = path.join(ROOT, "test", "fixtures", "mcp", "stdio-server.ts");
const SCRIPT = path.join(ROOT, "test", "fixtures", "scripts", "mcp.yaml");
const STDIO_SECRET = "stdio-env-secret-9876";
const HTTP_SECRET = "http-header-secret-5432";

type Events = Array<Record<string, unknown>>;

/** Every metadata.iac_code of the stream passes the contract schema. */
function expectValidMetadata(events: Events): void {
  const validate = schemaIndex["a2a/iac-code-event-metadata"].validate;
  for (const event of events) {
    const meta = iacOf(event);
    if (meta) expect(validate(meta), JSON.stringify(violations(validate))).to.equal(true);
  }
}

interface ServerRow {
  name: string;
  transport: string;
  status: string;
}
const metadataOf = (events: Events, key: string): Record<string, unknown>[] =>
  events
    .map((e) => iacOf(e)?.[key] as Record<string, unknown> | undefined)
    .filter((m): m is Record<string, unknown> => m !== undefined);
const serversOf = (status: Record<string, unknown>): ServerRow[] => status.servers as ServerRow[];

describe("e2e: MCP servers through A2A and AG-UI", function () {
  this.timeout(90_000);
  let a2a: E2eServer;
  let agui: AguiServer;
  let http: FixtureHttpServer;
  let dir: string;

  before(async () => {
    http = await startHttpMcpServer(HTTP_SECRET);
    dir = tempDir("iac-e2e-mcp-");
    mkdirSync(path.join(dir, "config"), { recursive: true });
    const stdio = { command: process.execPath, cwd: ROOT };
    writeFileSync(
      path.join(dir, "config", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          fix: { ...stdio, args: ["--import", "tsx", STDIO_SERVER], env: { FIXTURE_TOKEN: STDIO_SECRET } },
          web: { url: http.url, headers: { Authorization: `Bearer ${HTTP_SECRET}` } },
          broken: { ...stdio, args: ["--import", "tsx", STDIO_SERVER, "fail-start"] },
        },
      }),
    );
    a2a = await startE2eServer({ script: SCRIPT, dir, file: { "thinking-exposure": ["tool-trace"] } });
    agui = await startAguiServer(adapterSettings(a2a));
  });
  after(async () => {
    await agui?.close();
    await a2a?.close();
    await http?.close();
    if (dir) removeDir(dir);
  });

  const a2aUrl = () => a2a.url;

  describe("A2A", () => {
    it("a readOnlyHint tool runs without a permission round; the failed server is a warning; the turn completes", async () => {
      const events = await sendToEnd(a2aUrl(), "[ECHO]");
      expectValidMetadata(events);
      expect(events.some((e) => iacOf(e)?.input !== undefined)).to.equal(false);
      const warnings = metadataOf(events, "mcpWarning");
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.include({ serverName: "broken", code: "start_failed", severity: "fatal" });
      const warningEvent = events.find((e) => iacOf(e)?.mcpWarning)!;
      expect(stateOf(warningEvent)).to.equal("TASK_STATE_WORKING");
      expect(textOf(warningEvent)).to.equal(`MCP warning: ${warnings[0].message as string}`);
      const status = metadataOf(events, "mcpStatus");
      expect(status).to.have.length(1);
      expect(serversOf(status[0]).map((s) => [s.name, s.transport, s.status])).to.deep.equal([
        ["fix", "stdio", "connected"],
        ["web", "http", "connected"],
        ["broken", "stdio", "failed"],
      ]);
      const done = toolTrace(events).find((t) => t.status === "completed")!;
      expect(done).to.include({ name: "mcp__fix__echo", result: "echo: hi" });
      expect(texts(events)).to.include("Result: echo: hi");
      expect(stateOf(events.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
      const wire = JSON.stringify(events);
      expect(wire).not.to.include(STDIO_SECRET);
      expect(wire).not.to.include(HTTP_SECRET);
    });

    it("a tool without readOnlyHint asks permission (input-required), then runs once allowed", async () => {
      const waiting = await sendUntilInput(a2aUrl(), "[NOTE]");
      expect(waiting.envelope).to.include({ kind: "permission", toolName: "mcp__fix__write_note" });
      const rest = await answer(a2aUrl(), waiting, "allow_once");
      expectValidMetadata(rest);
      const done = toolTrace(rest).find((t) => t.status === "completed")!;
      expect(done).to.include({ name: "mcp__fix__write_note", result: "note saved: remember" });
    });

    it("MCP progress becomes tool progress metadata before the result", async () => {
      const events = await sendToEnd(a2aUrl(), "[COUNT]");
      expectValidMetadata(events);
      const trace = toolTrace(events);
      const progress = trace.filter((t) => t.status === "progress");
      expect(progress.map((p) => p.mcp as unknown)).to.deep.equal([
        { serverName: "fix", toolName: "slow_count", progress: 1, total: 2, message: "step 1 of 2" },
        { serverName: "fix", toolName: "slow_count", progress: 2, total: 2, message: "step 2 of 2" },
      ]);
      expect(progress[0]).to.include({ name: "mcp__fix__slow_count" });
      expect(progress[1].mcpProgress).to.include({ progress: 2, total: 2 });
      const statuses = trace.map((t) => t.status as string);
      expect(statuses.lastIndexOf("progress")).to.be.below(statuses.indexOf("completed"));
    });
  });

  describe("AG-UI", () => {
    const agentFor = (threadId: string, text: string): HttpAgent =>
      new HttpAgent({
        url: agui.url,
        threadId,
        initialMessages: [{ id: `u-${threadId}`, role: "user", content: text }],
      });
    const props = (n: number) => ({
      iacCode: { schemaVersion: 1, rosInvocationId: `mcp-inv-${n}`, cwd: a2a.workspace },
    });
    const outcomeOf = (events: AguiEvent[]) => {
      const last = events.at(-1)!;
      expect(last.type).to.equal("RUN_FINISHED");
      return last.outcome as { type: string; interrupts?: Interrupt[] };
    };

    it("MCP progress of an HTTP server's tool arrives as CUSTOM iac-code.tool-progress.v1", async () => {
      const { events, warnings } = await agentRun(agentFor("mcp-progress", "[HTTP-COUNT]"), {
        runId: "run-1",
        forwardedProps: props(1),
      });
      expect(warnings).to.deep.equal([]);
      expect(outcomeOf(events).type).to.equal("success");
      const start = events.find((e) => e.type === "TOOL_CALL_START")!;
      expect(start.toolCallName).to.equal("mcp__web__slow_count");
      const progress = events.filter((e) => e.type === "CUSTOM" && e.name === "iac-code.tool-progress.v1");
      expect(progress.map((e) => (e.value as { mcp: unknown }).mcp)).to.deep.equal([
        { serverName: "web", toolName: "slow_count", progress: 1, total: 2, message: "step 1 of 2" },
        { serverName: "web", toolName: "slow_count", progress: 2, total: 2, message: "step 2 of 2" },
      ]);
      expect(progress[0].value).to.include({
        schemaVersion: 1,
        status: "progress",
        toolUseId: start.toolCallId,
      });
      const result = events.find((e) => e.type === "TOOL_CALL_RESULT")!;
      expect(JSON.parse(String(result.content))).to.deep.equal({ count: 2 });
      expect(events.indexOf(progress[1])).to.be.below(events.indexOf(result));
      expect(JSON.stringify(events)).not.to.include(HTTP_SECRET);
    });

    it("a non-read-only MCP tool is an interrupt; resumed with allow_once it runs", async () => {
      const agent = agentFor("mcp-note", "[HTTP-NOTE]");
      const first = await agentRun(agent, { runId: "run-1", forwardedProps: props(2) });
      expect(first.warnings).to.deep.equal([]);
      const outcome = outcomeOf(first.events);
      expect(outcome.type).to.equal("interrupt");
      const interrupt = outcome.interrupts![0];
      expect(interrupt.metadata).to.include({ toolName: "mcp__web__write_note", isReadOnly: false });
      const second = await agentRun(agent, {
        runId: "run-2",
        forwardedProps: props(2),
        resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }],
      });
      expect(second.warnings).to.deep.equal([]);
      expect(outcomeOf(second.events).type).to.equal("success");
      const result = second.events.find((e) => e.type === "TOOL_CALL_RESULT")!;
      expect(result.content).to.equal("note saved: via agui");
    });
  });

  describe("a server that dies mid-call", () => {
    it("A2A: the call fails, a disconnected warning follows, the turn completes; the next turn reconnects", async () => {
      const events = await sendToEnd(a2aUrl(), "[CRASH]");
      expectValidMetadata(events);
      const failed = toolTrace(events).find((t) => t.status === "failed")!;
      expect(failed).to.include({
        name: "mcp__fix__crash",
        result: "MCP server fix disconnected during the call.",
      });
      const warnings = metadataOf(events, "mcpWarning").map((w) => [w.serverName, w.code]);
      expect(warnings).to.deep.include(["fix", "disconnected"]);
      const fixStates = metadataOf(events, "mcpStatus").map(
        (s) => serversOf(s).find((x) => x.name === "fix")?.status,
      );
      expect(fixStates).to.deep.equal(["connected", "disconnected"]);
      expect(stateOf(events.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
      expect(texts(events)).to.include("Result: MCP server fix disconnected during the call.");

      const next = await sendToEnd(a2aUrl(), "[ECHO]");
      expect(toolTrace(next).find((t) => t.status === "completed")).to.include({ result: "echo: hi" });
    });
  });
});

function texts(events: Events): string[] {
  return events.map(textOf).filter((t): t is string => t !== undefined);
}
