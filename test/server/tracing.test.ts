// Issue 24: OpenTelemetry traces. One AG-UI run with a permission round trip
// (interrupt, then resume with allow_once) through the AG-UI adapter and the
// A2A server in front of the real runtime (scripted provider) yields one
// trace: the caller's traceparent is accepted by the adapter, the adapter's
// A2A calls carry it to the A2A server, and every span (HTTP request, A2A
// method, turn, model call, tool call, store commit) has the caller's trace
// id. Spans are exported by OTLP/HTTP to an in-process receiver, once in
// http/json and once in http/protobuf; without an endpoint nothing is traced.
import { expect } from "chai";
import path from "node:path";
import { mkdirSync } from "node:fs";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { startAguiServer } from "../../src/agui/server.js";
import { stopTracing, tracingOn } from "../../src/server/tracing/index.js";
import { tracingSettings } from "../../src/server/tracing/settings.js";
import { post as aguiPost } from "../agui/harness.js";
import { removeDir, startCli, startE2eServer, adapterSettings } from "../e2e/helpers.js";
import { OtlpReceiver, type ReceivedSpan } from "../fixtures/otlp-receiver.js";
import { startPushReceiver } from "../fixtures/push-receiver.js";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { pb } from "../../src/contract/index.js";
import { cleanup, rpc, startTestServer, userMessage } from "../a2a/helpers.js";
import { removeTempDirs, turn, type AnswerBody } from "../runtime/helpers.js";
import type { InputRequest } from "../../src/runtime/seam.js";
import { pipelineWorld } from "../pipeline/helpers.js";
import { sendWithHooks, startPushServer } from "../a2a-push/harness.js";
import { startTracing } from "../../src/server/tracing/index.js";
import { readdirSync, readFileSync, statSync } from "node:fs";

const TOKEN = "tracing-a2a-token";
const USER_TEXT = "[WRITE] create a VPC template with the secret word zebra-4821";
const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;

interface Traced {
  spans: ReceivedSpan[];
  traceId: string;
  callerSpanIds: string[];
  contentTypes: string[];
}

/** The scenario: run (interrupt) then resume (allow_once), both sent with the caller's traceparent. */
async function permissionRoundTrip(protocol: "http/json" | "http/protobuf"): Promise<Traced> {
  const receiver = new OtlpReceiver();
  const endpoint = await receiver.listen();
  const a2a = await startE2eServer({ script: "e2e-agui.yaml", file: { token: TOKEN } });
  const workspace = path.join(a2a.dir, "workspace-trace");
  mkdirSync(workspace, { recursive: true });
  const traceId = randomBytes(16).toString("hex");
  const callerSpanIds = [randomBytes(8).toString("hex"), randomBytes(8).toString("hex")];
  try {
    const agui = await startAguiServer(
      adapterSettings(a2a, TOKEN),
      // The adapter reads the standard variables; the A2A server in this process shares its exporter.
      {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
          OTEL_SERVICE_NAME: "iac-code-test",
        },
      },
    );
    try {
      expect(tracingOn()).to.equal(true);
      const body = (runId: string, resume?: unknown[]) => ({
        threadId: `trace-${protocol}`,
        runId,
        state: {},
        messages: resume ? [] : [{ id: "u1", role: "user", content: USER_TEXT }],
        tools: [],
        context: [],
        forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: `inv-${protocol}`, cwd: workspace } },
        ...(resume ? { resume } : {}),
      });
      const traceparent = (spanId: string) => ({ traceparent: `00-${traceId}-${spanId}-01` });
      const first = await aguiPost(agui.url, body("run-1"), traceparent(callerSpanIds[0]));
      const outcome = first.events.at(-1)!.outcome as { type: string; interrupts: Array<{ id: string }> };
      expect(outcome.type).to.equal("interrupt");
      const second = await aguiPost(
        agui.url,
        body("run-2", [
          { interruptId: outcome.interrupts[0].id, status: "resolved", payload: { decision: "allow_once" } },
        ]),
        traceparent(callerSpanIds[1]),
      );
      expect(second.events.at(-1)).to.deep.include({ type: "RUN_FINISHED" });
    } finally {
      await agui.close(); // flushes
    }
  } finally {
    await a2a.close(); // flushes the turn and store spans
    await stopTracing();
    removeDir(a2a.dir);
    await receiver.close();
  }
  return { spans: receiver.spans, traceId, callerSpanIds, contentTypes: receiver.contentTypes };
}

describe("OpenTelemetry traces across the AG-UI adapter and the A2A server", function () {
  this.timeout(60_000);

  it("npm start's two processes export as iac-code-agui and iac-code-a2a, each with its own service.instance.id, in one trace", async () => {
    const otlp = new OtlpReceiver();
    const endpoint = await otlp.listen();
    const home = path.join(os.tmpdir(), `iac-otel-serve-${randomBytes(4).toString("hex")}`);
    mkdirSync(path.join(home, "ws"), { recursive: true });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      IAC_CODE_CONFIG_DIR: path.join(home, "cfg"),
      IAC_CODE_FROM_SOURCE: process.env.IAC_CODE_FROM_SOURCE,
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    };
    const serve = await startCli(["serve", "--port", "0", "--allowed-cwds", home], env);
    try {
      const res = await fetch(serve.url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify({
          threadId: "otel-thread", runId: "otel-run", state: {}, tools: [], context: [],
          messages: [{ id: "u1", role: "user", content: "hello" }],
          forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "otel", cwd: path.join(home, "ws") } },
        }),
      }); // prettier-ignore
      expect(await res.text()).to.include("RUN_FINISHED");
    } finally {
      await serve.stop();
      removeDir(home);
    }
    const services = new Map<string, Set<string>>();
    for (const span of otlp.spans)
      services.set(span.service, (services.get(span.service) ?? new Set()).add(span.instance));
    expect([...services.keys()].sort()).to.deep.equal(["iac-code-a2a", "iac-code-agui"]);
    const [a2a] = [...services.get("iac-code-a2a")!];
    const [agui] = [...services.get("iac-code-agui")!];
    expect(services.get("iac-code-a2a")!.size).to.equal(1);
    expect(a2a).to.match(/^.+:\d+:[0-9a-f]{8}$/);
    expect(agui).to.not.equal(a2a);
    // The adapter's run and the A2A server's turn are one trace.
    const aguiTraces = new Set(
      otlp.spans.filter((sp) => sp.service === "iac-code-agui").map((sp) => sp.traceId),
    );
    expect(otlp.spans.some((sp) => sp.service === "iac-code-a2a" && aguiTraces.has(sp.traceId))).to.equal(
      true,
    );
    await otlp.close();
  });

  it("reads only the standard variables: off without an endpoint, a bad protocol named", () => {
    expect(tracingSettings({})).to.equal(undefined);
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).to.equal(undefined);
    expect(
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/", OTEL_SDK_DISABLED: "true" }),
    ).to.equal(undefined);
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).to.deep.equal({
      url: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
      serviceName: undefined,
      captureMessageContent: false,
    });
    expect(
      tracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example.com/custom",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "iac-prod",
      }),
    ).to.include({
      url: "https://traces.example.com/custom",
      protocol: "http/json",
      serviceName: "iac-prod",
    });
    expect(() =>
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }),
    ).to.throw(/OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not supported/);
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "collector:4318" })).to.throw(
      /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must be an http/,
    );
    expect(tracingOn()).to.equal(false);
  });

  it("http/json: one trace spans both servers, parent links across the hop, GenAI attributes, no prompt text", async () => {
    const { spans, traceId, callerSpanIds, contentTypes } = await permissionRoundTrip("http/json");
    expect(contentTypes.every((type) => type.startsWith("application/json"))).to.equal(true);
    const traced = spans.filter((s) => s.traceId === traceId);
    // Every span of both runs is in the caller's trace; outside it only the adapter's health
    // probes of the A2A server and the commits of the servers' shutdown, each a root.
    for (const other of spans.filter((s) => s.traceId !== traceId)) {
      expect(other.parentSpanId, other.name).to.equal("");
      expect(
        other.name === "store commit" || (other.name === "GET" && other.attributes["url.path"] === "/health"),
        other.name,
      ).to.equal(true);
    }
    expect(new Set(traced.map((s) => s.scope))).to.deep.equal(
      new Set(["iac-code.agui", "iac-code.a2a", "iac-code.runtime"]),
    );
    expect(new Set(traced.map((s) => s.service))).to.deep.equal(new Set(["iac-code-test"]));
    const byId = new Map(traced.map((s) => [s.spanId, s]));
    const parentOf = (span: ReceivedSpan) => byId.get(span.parentSpanId);

    // The adapter's request spans are children of the caller's spans.
    const aguiRequests = traced.filter((s) => s.scope === "iac-code.agui" && s.kind === SPAN_KIND_SERVER);
    expect(aguiRequests.map((s) => s.parentSpanId).sort()).to.deep.equal([...callerSpanIds].sort());

    // Across the hop: the A2A server's request span is a child of the adapter's client span, itself under the run.
    const a2aStreams = traced.filter(
      (s) => s.name === "A2A SendStreamingMessage" && s.scope === "iac-code.a2a",
    );
    expect(a2aStreams).to.have.length(2);
    for (const method of a2aStreams) {
      expect(method.attributes).to.include({
        "rpc.method": "SendStreamingMessage",
        "iac_code.a2a.binding": "jsonrpc",
      });
      const request = parentOf(method)!;
      expect(request).to.include({ scope: "iac-code.a2a", kind: SPAN_KIND_SERVER });
      const client = parentOf(request)!;
      expect(client).to.include({
        scope: "iac-code.agui",
        kind: SPAN_KIND_CLIENT,
        name: "A2A SendStreamingMessage",
      });
      const run = parentOf(client)!;
      expect(run.name).to.match(/^agui (run|resume)$/);
      expect(aguiRequests).to.include(parentOf(run));
    }

    // One turn: the permission answer resumes the turn the first run started (under its call);
    // the model calls and the tool call are its children, the one after the answer too.
    const turns = traced.filter((s) => s.name === "turn");
    expect(turns).to.have.length(1);
    expect(a2aStreams).to.include(parentOf(turns[0]));
    expect(turns[0].attributes).to.include({
      "iac_code.turn.outcome": "completed",
      "gen_ai.usage.input_tokens": 80,
    });
    const chats = traced.filter((s) => s.attributes["gen_ai.operation.name"] === "chat");
    expect(chats.length).to.be.at.least(2);
    for (const chat of chats) {
      expect(turns).to.include(parentOf(chat));
      expect(chat.attributes).to.include({
        "gen_ai.request.model": "e2e-agui-scripted",
        "gen_ai.provider.name": "scripted",
        "gen_ai.system": "scripted",
        "gen_ai.usage.input_tokens": 40,
        "gen_ai.usage.output_tokens": 8,
      });
    }
    const tools = traced.filter((s) => s.name === "execute_tool write_file");
    expect(tools).to.have.length(1);
    expect(turns).to.include(parentOf(tools[0]));
    expect(tools[0].attributes).to.include({
      "gen_ai.tool.name": "write_file",
      "iac_code.permission.allowed": true,
      "iac_code.permission.decision": "user:allow_once",
      "iac_code.tool.outcome": "ok",
    });
    // The commits of the streamed events are children of spans of the same trace.
    const commits = traced.filter((s) => s.name === "store commit");
    expect(commits.length).to.be.at.least(2);
    expect(commits[0].attributes).to.include({ "db.system.name": "sqlite" });
    for (const commit of commits) expect(parentOf(commit)?.scope).to.equal("iac-code.a2a");

    // No prompt text or token anywhere without the opt-in.
    const values = JSON.stringify(traced.map((s) => s.attributes));
    expect(values).not.to.include("zebra-4821");
    expect(values).not.to.include(TOKEN);
    expect(values).not.to.include("gen_ai.input.messages");
    expect(tracingOn()).to.equal(false);
  });

  it("http/protobuf: the same trace, decoded from protobuf", async () => {
    const { spans, traceId, callerSpanIds, contentTypes } = await permissionRoundTrip("http/protobuf");
    expect(contentTypes.every((type) => type.startsWith("application/x-protobuf"))).to.equal(true);
    expect(spans.length).to.be.greaterThan(0);
    expect(
      spans.filter((s) => s.name.startsWith("execute_tool")).every((s) => s.traceId === traceId),
    ).to.equal(true);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const hop = spans.filter(
      (s) => s.scope === "iac-code.a2a" && s.kind === SPAN_KIND_SERVER && s.traceId === traceId,
    );
    expect(hop.length).to.be.at.least(2);
    for (const request of hop) expect(byId.get(request.parentSpanId)).to.include({ scope: "iac-code.agui" });
    const aguiRequests = spans.filter((s) => s.scope === "iac-code.agui" && s.kind === SPAN_KIND_SERVER);
    expect(aguiRequests.map((s) => s.parentSpanId).sort()).to.deep.equal([...callerSpanIds].sort());
    const tool = spans.find((s) => s.name === "execute_tool write_file");
    expect(tool?.attributes["iac_code.permission.decision"]).to.equal("user:allow_once");
  });

  it("a push delivery is a span of its own, named by task and attempt, without the callback's secrets", async () => {
    const otlp = new OtlpReceiver();
    const endpoint = await otlp.listen();
    const receiver = await startPushReceiver();
    await startTracing(
      { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
      "a2a",
    );
    const h = await startPushServer();
    let taskId = "";
    try {
      ({ taskId } = await sendWithHooks(h, "hello", [
        {
          url: receiver.url,
          token: "push-token-5e1d",
          authentication: { scheme: "Bearer", credentials: "cb-9f2a" },
        },
      ]));
      await receiver.waitFor((r) => r.some((e) => e.state === "TASK_STATE_INPUT_REQUIRED"));
    } finally {
      await h.close();
      await stopTracing();
      await receiver.close();
      await otlp.close();
    }
    const deliveries = otlp.spans.filter((s) => s.name === "push delivery");
    expect(deliveries.length).to.be.at.least(1);
    expect(deliveries[0]).to.include({ kind: SPAN_KIND_CLIENT, parentSpanId: "" });
    expect(deliveries[0].attributes).to.include({ "iac_code.push.attempt": 1 });
    expect(deliveries.every((d) => d.attributes["iac_code.task_id"] === taskId)).to.equal(true);
    const values = JSON.stringify(otlp.spans.map((sp) => sp.attributes));
    expect(values).not.to.include("push-token-5e1d");
    expect(values).not.to.include("cb-9f2a");
  });

  it("the SDK and exporters are imported by src/server/tracing/sdk.ts alone, which is imported dynamically", () => {
    const root = path.resolve(import.meta.dirname, "..", "..", "src");
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const full = path.join(dir, name);
        return statSync(full).isDirectory() ? files(full) : full.endsWith(".ts") ? [full] : [];
      });
    const sdkImport = /from\s+"@opentelemetry\/(?!api")[^"]+"|import\("@opentelemetry\/(?!api")/;
    const importers = files(root).filter((file) => sdkImport.test(readFileSync(file, "utf8")));
    expect(importers.map((file) => path.relative(root, file))).to.deep.equal([
      path.join("server", "tracing", "sdk.ts"),
    ]);
    const index = readFileSync(path.join(root, "server", "tracing", "index.ts"), "utf8");
    expect(index).to.include('await import("./sdk.js")');
    // A type-only import is erased at compile time; a value import would load the SDK with the module.
    expect(index).not.to.match(/^import (?!type )[^;]*from\s+"\.\/sdk\.js"/m);
  });

  it("a caller's traceparent is accepted on JSON-RPC, REST and gRPC alike", async () => {
    const otlp = new OtlpReceiver();
    const endpoint = await otlp.listen();
    await startTracing(
      { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
      "a2a",
    );
    const s = await startTestServer({ file: { token: TOKEN } });
    const traceId = randomBytes(16).toString("hex");
    const sent: Record<string, string> = {};
    const traceparent = (binding: string) => {
      sent[binding] = randomBytes(8).toString("hex");
      return `00-${traceId}-${sent[binding]}-01`;
    };
    const headers = { Authorization: `Bearer ${TOKEN}`, "A2A-Version": "1.0" };
    try {
      await s.rpc("ListTasks", {}, { ...headers, traceparent: traceparent("jsonrpc") });
      await fetch(`${s.server.restUrl}/tasks`, { headers: { ...headers, traceparent: traceparent("rest") } });
      const grpc = createClient(
        pb.A2AService,
        createGrpcTransport({ baseUrl: `http://${s.server.grpcTarget}` }),
      );
      await grpc.listTasks(
        {},
        {
          headers: {
            authorization: headers.Authorization,
            "a2a-version": "1.0",
            traceparent: traceparent("grpc"),
          },
        },
      );
    } finally {
      await s.close();
      await stopTracing();
      cleanup(s.dir);
      await otlp.close();
    }
    const byId = new Map(otlp.spans.map((span) => [span.spanId, span]));
    for (const binding of ["jsonrpc", "rest", "grpc"]) {
      const method = otlp.spans.find(
        (span) => span.name === "A2A ListTasks" && span.attributes["iac_code.a2a.binding"] === binding,
      );
      expect(method, binding).to.not.equal(undefined);
      expect(method!.traceId, binding).to.equal(traceId);
      const request = byId.get(method!.parentSpanId)!;
      expect(request, binding).to.include({ kind: SPAN_KIND_SERVER, parentSpanId: sent[binding] });
    }
  });

  it("a pipeline turn: one span per step, the step's model and tool calls its children", async () => {
    const otlp = new OtlpReceiver();
    const endpoint = await otlp.listen();
    await startTracing(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      },
      "a2a",
    );
    const world = await pipelineWorld();
    try {
      const answer = (request: InputRequest): AnswerBody | undefined => {
        if (request.kind === "permission") return { kind: "permission", decision: "allow_once" };
        if (request.kind === "candidate_selection") return { kind: "candidate_selection", selectedId: "1" };
        if (request.kind === "ask_user_question") return { kind: "ask_user_question", selectedId: "web" };
        return undefined;
      };
      await turn(world.session, "Deploy a small web app", { overrides: { runMode: "pipeline" }, answer });
    } finally {
      await world.close();
      await stopTracing();
      await removeTempDirs();
      await otlp.close();
    }
    const steps = otlp.spans.filter((span) => span.name.startsWith("pipeline step "));
    const ids = new Set(steps.map((span) => span.attributes["iac_code.pipeline.step"]));
    for (const step of ["intent_parsing", "architecture_planning", "deploying"])
      expect(ids.has(step), step).to.equal(true);
    const intent = steps.find((span) => span.attributes["iac_code.pipeline.step"] === "intent_parsing")!;
    expect(intent.attributes).to.include({
      "iac_code.pipeline.name": "selling",
      "iac_code.pipeline.outcome": "conclusion",
    });
    const stepIds = new Set(steps.map((span) => span.spanId));
    const chatsInSteps = otlp.spans.filter(
      (span) => span.name.startsWith("chat ") && stepIds.has(span.parentSpanId),
    );
    expect(chatsInSteps.length).to.be.at.least(steps.length);
    const toolsInSteps = otlp.spans.filter(
      (span) => span.name === "execute_tool complete_step" && stepIds.has(span.parentSpanId),
    );
    expect(toolsInSteps.length).to.be.at.least(1);
  });

  it("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true puts the prompt and the reply on the model call", async () => {
    const otlp = new OtlpReceiver();
    const endpoint = await otlp.listen();
    await startTracing(
      {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
      },
      "a2a",
    );
    const a2a = await startE2eServer({ script: "metrics.yaml", file: { token: TOKEN } });
    try {
      const sent = await rpc(
        a2a.url,
        "SendMessage",
        { message: userMessage("[USAGE] opt-in phrase 7731") },
        {
          Authorization: `Bearer ${TOKEN}`,
        },
      );
      expect(sent.body.error).to.equal(undefined);
    } finally {
      await a2a.close();
      await stopTracing();
      removeDir(a2a.dir);
      await otlp.close();
    }
    const chat = otlp.spans.find((span) => span.attributes["gen_ai.operation.name"] === "chat")!;
    expect(String(chat.attributes["gen_ai.input.messages"])).to.include("opt-in phrase 7731");
    expect(String(chat.attributes["gen_ai.output.messages"])).to.include("Counted.");
    expect(chat.attributes).to.include({
      "gen_ai.request.model": "metrics-scripted",
      "gen_ai.usage.input_tokens": 42,
    });
  });
});
