// Issue 24: /metrics from one method table. Every A2A method called on each
// of JSON-RPC, REST and gRPC (a real Connect gRPC client) shows in
// iac_code_requests_total with its binding; a scripted turn's tokens show by
// provider and model; AG-UI runs are counted started / finished / errored;
// the push queue depth follows the jobs a held receiver has not taken yet.
// The real runtime (scripted provider) behind the real A2A server, and the
// AG-UI adapter in front of it.
import { expect } from "chai";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { pb } from "../../src/contract/index.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { post as aguiPost } from "../agui/harness.js";
import { rpc, userMessage } from "../a2a/helpers.js";
import { metricValue } from "../fixtures/prometheus.js";
import { removeDir, startE2eServer, type E2eServer, adapterSettings } from "../e2e/helpers.js";

const TOKEN = "metrics-methods-token";
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const METHODS = pb.A2AService.methods.map((m) => m.name);

/** A push receiver that holds every delivery until released, then answers 204. */
class HeldReceiver {
  readonly server = http.createServer((req, res) => this.take(req, res));
  private held: ServerResponse[] = [];
  private released = false;
  private firstCall!: () => void;
  readonly called = new Promise<void>((resolve) => (this.firstCall = resolve));

  private take(req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    this.firstCall();
    if (this.released) res.writeHead(204).end();
    else this.held.push(res);
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  release(): void {
    this.released = true;
    for (const res of this.held.splice(0)) res.writeHead(204).end();
  }

  close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe("GET /metrics: every A2A method on every binding, tokens by model, AG-UI runs, push queue", function () {
  this.timeout(60_000);
  let a2a: E2eServer;
  let agui: AguiServer;
  let receiver: HeldReceiver;
  let hook: string;
  let grpc: Client<typeof pb.A2AService>;

  before(async () => {
    receiver = new HeldReceiver();
    hook = await receiver.listen();
    a2a = await startE2eServer({
      script: "metrics.yaml",
      file: { token: TOKEN, "push-notifications": true, "push-allow-private-hosts": ["127.0.0.1"] },
    });
    agui = await startAguiServer(adapterSettings(a2a, TOKEN));
    grpc = createClient(
      pb.A2AService,
      createGrpcTransport({
        baseUrl: `http://${a2a.server.grpcTarget}`,
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", AUTH.Authorization);
            req.header.set("a2a-version", "1.0");
            return next(req);
          },
        ],
      }),
    );
  });
  after(async () => {
    await agui?.close();
    await a2a?.close();
    await receiver?.close();
    if (a2a) removeDir(a2a.dir);
  });

  const a2aMetrics = async (): Promise<string> =>
    (await fetch(`${a2a.url}metrics`, { headers: AUTH })).text();
  const aguiMetrics = async (): Promise<string> => (await fetch(`${agui.url}metrics`)).text();

  const aguiRun = (threadId: string, text: string) => ({
    threadId,
    runId: "r1",
    state: {},
    messages: [{ id: `u-${threadId}`, role: "user", content: text }],
    tools: [],
    context: [],
    forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: threadId, cwd: a2a.workspace } },
  });

  const rest = async (verb: string, route: string, body?: unknown): Promise<string> => {
    const res = await fetch(`${a2a.server.restUrl}${route}`, {
      method: verb,
      headers: { ...AUTH, "A2A-Version": "1.0", "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.text();
  };
  const restTaskId = (text: string): string => (JSON.parse(text) as { task: { id: string } }).task.id;

  /** Calls every method once on one binding, in an order where each has a task to work on. */
  const callers: Record<string, () => Promise<void>> = {
    async jsonrpc() {
      const call = (method: string, params?: unknown) => rpc(a2a.url, method, params, AUTH);
      const sent = await call("SendMessage", { message: userMessage("hello") });
      const taskId = (sent.body.result as { task: { id: string } }).task.id;
      const streamed = await call("SendStreamingMessage", { message: userMessage("hello again") });
      expect(streamed.raw).to.include("TASK_STATE_INPUT_REQUIRED");
      await call("GetTask", { id: taskId });
      await call("ListTasks", {});
      await call("SubscribeToTask", { id: taskId });
      await call("CreateTaskPushNotificationConfig", { taskId, id: "cfg", url: hook });
      await call("GetTaskPushNotificationConfig", { taskId, id: "cfg" });
      await call("ListTaskPushNotificationConfigs", { taskId });
      await call("DeleteTaskPushNotificationConfig", { taskId, id: "cfg" });
      await call("GetExtendedAgentCard");
      await call("CancelTask", { id: taskId });
    },
    async rest() {
      const taskId = restTaskId(await rest("POST", "/message:send", { message: userMessage("hello") }));
      expect(await rest("POST", "/message:stream", { message: userMessage("hello again") })).to.include(
        "TASK_STATE_INPUT_REQUIRED",
      );
      await rest("GET", `/tasks/${taskId}`);
      await rest("GET", "/tasks");
      await rest("GET", `/tasks/${taskId}:subscribe`);
      await rest("POST", `/tasks/${taskId}/pushNotificationConfigs`, { id: "cfg", url: hook });
      await rest("GET", `/tasks/${taskId}/pushNotificationConfigs/cfg`);
      await rest("GET", `/tasks/${taskId}/pushNotificationConfigs`);
      await rest("DELETE", `/tasks/${taskId}/pushNotificationConfigs/cfg`);
      await rest("GET", "/extendedAgentCard");
      await rest("POST", `/tasks/${taskId}:cancel`, {});
    },
    async grpc() {
      const settle = (p: Promise<unknown>) => p.catch(() => undefined); // refusals are counted too
      const message = (text: string) => ({
        message: {
          messageId: `m-${text.length}-${Date.now()}`,
          role: pb.Role.USER,
          parts: [{ content: { case: "text" as const, value: text } }],
        },
      });
      const sent = await grpc.sendMessage(message("hello"));
      expect(sent.payload.case).to.equal("task");
      const taskId = (sent.payload.value as pb.Task).id;
      const states: pb.TaskState[] = [];
      for await (const event of grpc.sendStreamingMessage(message("hello again")))
        if (event.payload.case === "statusUpdate") states.push(event.payload.value.status!.state);
      expect(states).to.include(pb.TaskState.INPUT_REQUIRED);
      await grpc.getTask({ id: taskId });
      await grpc.listTasks({});
      await settle(
        (async () => {
          for await (const _event of grpc.subscribeToTask({ id: taskId }));
        })(),
      );
      await grpc.createTaskPushNotificationConfig({ taskId, id: "cfg", url: hook });
      await grpc.getTaskPushNotificationConfig({ taskId, id: "cfg" });
      await grpc.listTaskPushNotificationConfigs({ taskId });
      await grpc.deleteTaskPushNotificationConfig({ taskId, id: "cfg" });
      await grpc.getExtendedAgentCard({});
      await settle(grpc.cancelTask({ id: taskId }));
    },
  };

  for (const binding of ["jsonrpc", "rest", "grpc"]) {
    it(`each of the ${METHODS.length} methods called on ${binding} shows with binding="${binding}"`, async () => {
      const before = await a2aMetrics();
      await callers[binding]();
      const after = await a2aMetrics();
      const moved = (labels: Record<string, string>) =>
        metricValue(after, "iac_code_requests_total", labels) -
        metricValue(before, "iac_code_requests_total", labels);
      for (const method of METHODS) expect(moved({ method, binding }), method).to.equal(1);
      // The push-config methods and the card worked; subscribing to a finished task did not.
      for (const method of [
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard",
      ])
        expect(moved({ method, binding, outcome: "ok" }), method).to.equal(1);
      expect(moved({ method: "SubscribeToTask", binding, outcome: "TASK_NOT_FOUND" })).to.equal(1);
    });
  }

  it("a scripted turn's tokens show by provider and model on both servers; AG-UI runs are counted", async () => {
    const [a2aBefore, aguiBefore] = [await a2aMetrics(), await aguiMetrics()];
    const run = await aguiPost(agui.url, aguiRun("metrics-tokens", "[USAGE] please"));
    expect(run.events.at(-1)).to.include({ type: "RUN_FINISHED" });
    const [a2aAfter, aguiAfter] = [await a2aMetrics(), await aguiMetrics()];
    const moved = (after: string, before: string, name: string, labels: Record<string, string>) =>
      metricValue(after, name, labels) - metricValue(before, name, labels);
    const model = { provider: "scripted", model: "metrics-scripted" };
    expect(moved(a2aAfter, a2aBefore, "iac_code_tokens_total", { kind: "input", ...model })).to.equal(42);
    expect(moved(a2aAfter, a2aBefore, "iac_code_tokens_total", { kind: "output", ...model })).to.equal(7);
    // The A2A usage metadata names no model: the adapter counts the same tokens under "unknown".
    const unnamed = { provider: "unknown", model: "unknown" };
    expect(moved(aguiAfter, aguiBefore, "iac_code_tokens_total", { kind: "input", ...unnamed })).to.equal(42);
    expect(moved(aguiAfter, aguiBefore, "iac_code_tokens_total", { kind: "output", ...unnamed })).to.equal(7);
    expect(moved(aguiAfter, aguiBefore, "iac_code_agui_runs_started_total", { kind: "run" })).to.equal(1);
    expect(
      moved(aguiAfter, aguiBefore, "iac_code_agui_runs_finished_total", { outcome: "success" }),
    ).to.equal(1);

    // A run whose model call fails ends with RUN_ERROR, counted by its code.
    const failed = await aguiPost(agui.url, aguiRun("metrics-failed", "[FAIL] now"));
    const last = failed.events.at(-1)!;
    expect(last.type).to.equal("RUN_ERROR");
    const ended = await aguiMetrics();
    expect(metricValue(ended, "iac_code_agui_runs_errored_total", { code: String(last.code) })).to.equal(1);
    expect(metricValue(ended, "iac_code_agui_runs_started_total", { kind: "run" })).to.equal(2);
    expect(
      metricValue(ended, "iac_code_agui_runs_started_total"),
      "started = finished + errored once no run is live",
    ).to.equal(
      metricValue(ended, "iac_code_agui_runs_finished_total") +
        metricValue(ended, "iac_code_agui_runs_errored_total"),
    );
  });

  it("the push queue depth counts the jobs a receiver has not taken, and drops to 0 once it takes them", async () => {
    expect(metricValue(await a2aMetrics(), "iac_code_push_queue_depth")).to.equal(0);
    const sent = await rpc(
      a2a.url,
      "SendMessage",
      { message: userMessage("hello"), configuration: { taskPushNotificationConfig: { url: hook } } },
      AUTH,
    );
    expect(sent.body.error).to.equal(undefined);
    await receiver.called;
    // The receiver holds the first delivery: that job and every later event's job wait.
    const depth = metricValue(await a2aMetrics(), "iac_code_push_queue_depth");
    expect(depth).to.be.at.least(2);
    expect(depth).to.equal(await a2a.state.pushJobs.depth());
    receiver.release();
    let left = depth;
    for (let i = 0; i < 400 && left > 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      left = metricValue(await a2aMetrics(), "iac_code_push_queue_depth");
    }
    expect(left).to.equal(0);
  });
});
