// Issue 11: GET /metrics on both servers, in Prometheus text format. Real runs
// through the AG-UI adapter and the A2A server behind it move the numbers:
// requests by method/binding/outcome, turn and first-event histograms, open
// streams, tokens, interrupts waiting, state commits. /metrics follows each server's auth.
import { expect } from "chai";
import { post, runInput, startHarness, type Harness } from "../agui/harness.js";
import { metricValue as value } from "../fixtures/prometheus.js";

const A2A_TOKEN = "metrics-a2a-token";
const AGUI_TOKEN = "metrics-agui-token";

describe("GET /metrics (Prometheus text) on both servers", function () {
  this.timeout(30_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({ a2aToken: A2A_TOKEN, settings: { authToken: AGUI_TOKEN } });
  });
  after(async () => {
    await h?.close();
  });

  const scrape = async (url: string, token?: string) => {
    const res = await fetch(`${url}metrics`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
    return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
  };
  const a2aMetrics = async () => (await scrape(h.a2a.url, A2A_TOKEN)).text;
  const aguiMetrics = async () => (await scrape(h.url, AGUI_TOKEN)).text;
  const auth = { Authorization: `Bearer ${AGUI_TOKEN}` };

  it("follows each server's auth: 401 without the token, text/plain with it", async () => {
    expect((await scrape(h.a2a.url)).status).to.equal(401);
    expect((await scrape(h.url)).status).to.equal(401);
    const a2a = await scrape(h.a2a.url, A2A_TOKEN);
    expect(a2a.status).to.equal(200);
    expect(a2a.type).to.match(/^text\/plain/);
    expect(a2a.text).to.include("# TYPE iac_code_requests_total counter");
    expect(a2a.text).to.include('server="a2a"');
    const agui = await scrape(h.url, AGUI_TOKEN);
    expect(agui.status).to.equal(200);
    expect(agui.text).to.include("# TYPE iac_code_turn_duration_seconds histogram");
    expect(agui.text).to.include('server="agui"');
  });

  it("a finished run moves the request, turn, first-event and token numbers on both servers", async () => {
    const [a2aBefore, aguiBefore] = [await a2aMetrics(), await aguiMetrics()];
    const run = await post(
      h.url,
      runInput(h, { threadId: "metrics-echo", runId: "r1", text: "hello" }),
      auth,
    );
    expect(run.events.at(-1)).to.include({ type: "RUN_FINISHED" });
    const [a2a, agui] = [await a2aMetrics(), await aguiMetrics()];
    const moved = (after: string, before: string, name: string, labels?: Record<string, string>) =>
      value(after, name, labels) - value(before, name, labels);

    const sent = { method: "SendStreamingMessage", binding: "jsonrpc", outcome: "ok" };
    expect(moved(a2a, a2aBefore, "iac_code_requests_total", sent)).to.equal(1);
    expect(moved(a2a, a2aBefore, "iac_code_turn_duration_seconds_count", { outcome: "completed" })).to.equal(
      1,
    );
    expect(moved(a2a, a2aBefore, "iac_code_first_event_seconds_count", { binding: "jsonrpc" })).to.equal(1);
    expect(moved(a2a, a2aBefore, "iac_code_tokens_total", { kind: "input" })).to.equal(11);
    expect(moved(a2a, a2aBefore, "iac_code_tokens_total", { kind: "output" })).to.equal(7);
    expect(value(a2a, "iac_code_open_streams", { binding: "jsonrpc" })).to.equal(0);
    // The run's task state went through the state store's group commits (the AG-UI server has none).
    expect(moved(a2a, a2aBefore, "iac_code_state_commits_total")).to.be.at.least(1);
    expect(agui).to.not.include("iac_code_state_commits_total");

    const ran = { method: "run", binding: "agui", outcome: "success" };
    expect(moved(agui, aguiBefore, "iac_code_requests_total", ran)).to.equal(1);
    expect(moved(agui, aguiBefore, "iac_code_turn_duration_seconds_count", { outcome: "success" })).to.equal(
      1,
    );
    expect(moved(agui, aguiBefore, "iac_code_first_event_seconds_count")).to.equal(1);
    expect(moved(agui, aguiBefore, "iac_code_tokens_total", { kind: "output" })).to.equal(7);
    expect(value(agui, "iac_code_open_streams")).to.equal(0);
  });

  it("counts refusals by their code and the interrupts that wait for an answer", async () => {
    const before = await aguiMetrics();
    const refused = await post(
      h.url,
      runInput(h, { threadId: "metrics-bad", runId: "r1", text: "x", iac: { cwd: "x" } }),
      auth,
    );
    expect(refused.status).to.equal(400);
    const after = await aguiMetrics();
    const labels = { method: "run", binding: "agui", outcome: "INVALID_INPUT" };
    expect(
      value(after, "iac_code_requests_total", labels) - value(before, "iac_code_requests_total", labels),
    ).to.equal(1);

    expect(value(after, "iac_code_interrupts_waiting")).to.equal(0);
    const waiting = await post(
      h.url,
      runInput(h, { threadId: "metrics-wait", runId: "r1", text: "[[permission]]" }),
      auth,
    );
    expect(waiting.events.at(-1)).to.deep.include({ type: "RUN_FINISHED" });
    expect((waiting.events.at(-1)!.outcome as { type: string }).type).to.equal("interrupt");
    expect(value(await aguiMetrics(), "iac_code_interrupts_waiting")).to.equal(1);
    expect(value(await a2aMetrics(), "iac_code_interrupts_waiting")).to.equal(1);
    expect(value(await aguiMetrics(), "iac_code_requests_total", { outcome: "interrupt" })).to.equal(1);
  });
});
