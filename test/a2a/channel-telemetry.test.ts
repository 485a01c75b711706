// The telemetry channel (issue 32, a2a-iaccode.md §6.3): metadata.iac_code.channel
// is bound to the context, persisted with it (SQLite and Redis), replaced by a
// later message that names another, and falls back to IAC_CODE_CHANNEL, then
// "unknown". It labels the turn and token metrics (iac_code_turn_duration_seconds,
// iac_code_tokens_total) and is the turn span's iac_code.channel attribute.
// Through a real A2A server on a SQLite persistence dir, restarted; through the
// AG-UI adapter, whose run metrics carry the run's forwarded channel.
import { expect } from "chai";
import Database from "better-sqlite3";
import path from "node:path";
import { SqliteStateStore, STATE_FILE } from "../../src/a2a/stores/sqlite-state.js";
import { stopTracing } from "../../src/server/tracing/index.js";
import { createLogger } from "../../src/server/logger.js";
import { MAX_CHANNELS, ServerMetrics } from "../../src/server/metrics.js";
import { bothStores } from "../fixtures/both-stores.js";
import { metricValue } from "../fixtures/prometheus.js";
import { OtlpReceiver } from "../fixtures/otlp-receiver.js";
import { post, runInput, startHarness } from "../agui/harness.js";
import {
  cleanup,
  makeTempDir,
  startTestServer,
  userMessage,
  type AnyJson,
  type TestServer,
} from "./helpers.js";
import { FakeRuntime } from "./fixtures/fake-runtime.js";

const logger = createLogger({ silent: true });

describe("telemetry channel: bound to the context, persisted, on the metrics and the turn span", function () {
  this.timeout(30_000);

  describe("the context record keeps it", () => {
    const s = bothStores("iac-channel-");

    it("both stores: saved with the context, replaced by a later one, absent when never given", async () => {
      for (const [name, open] of s.stores) {
        let store = open();
        store.contexts.save({
          contextId: "c-1",
          sessionId: "s-1",
          cwd: "/w",
          owner: "",
          updatedAt: 1,
          channel: "web",
        });
        store.contexts.save({ contextId: "c-2", sessionId: "s-2", cwd: "/w", owner: "", updatedAt: 1 });
        await store.commit();
        await store.close();
        store = open();
        expect(await store.contexts.get("c-1"), name).to.include({ sessionId: "s-1", channel: "web" });
        expect(await store.contexts.get("c-2"), name).not.to.have.property("channel");
        store.contexts.save({
          contextId: "c-1",
          sessionId: "s-1",
          cwd: "/w",
          owner: "",
          updatedAt: 2,
          channel: "slack",
        });
        await store.commit();
        await store.close();
        store = open();
        expect((await store.contexts.get("c-1"))?.channel, name).to.equal("slack");
        await store.close();
      }
    });

    it("SQLite: a database of an earlier version (no channel column) gets it; its contexts have none", async () => {
      const dir = makeTempDir("iac-channel-legacy-");
      try {
        const first = SqliteStateStore.open({ dir, syncEveryCommit: false, logger });
        await first.close();
        const db = new Database(path.join(dir, STATE_FILE));
        db.exec("ALTER TABLE contexts DROP COLUMN telemetry_channel");
        db.prepare(
          "INSERT INTO contexts (id, owner, session_id, cwd, updated_ms) VALUES (?, ?, ?, ?, ?)",
        ).run("old", "", "s-old", "/w", 5);
        db.close();
        const store = SqliteStateStore.open({ dir, syncEveryCommit: false, logger });
        try {
          const legacy = await store.contexts.get("old");
          expect(legacy).to.include({ sessionId: "s-old", cwd: "/w" });
          expect(legacy).not.to.have.property("channel");
          store.contexts.save({ ...legacy!, channel: "cli" });
          await store.commit();
          expect((await store.contexts.get("old"))?.channel).to.equal("cli");
        } finally {
          await store.close();
        }
      } finally {
        cleanup(dir);
      }
    });
  });

  it("a real server: label and span attribute follow the bound channel, the env fallback, unknown, and a restart", async () => {
    const receiver = new OtlpReceiver();
    const endpoint = await receiver.listen();
    const dir = makeTempDir("iac-channel-server-");
    const runtime = new FakeRuntime(path.join(dir, "sessions"));
    let server: TestServer | undefined;
    try {
      server = await startTestServer({
        dir,
        runtime,
        env: {
          IAC_CODE_CHANNEL: "  env-channel  ",
          OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        },
      });
      const send = async (contextId: string, channel?: string) => {
        const iac: AnyJson = { cwd: server!.workspace };
        if (channel !== undefined) iac.channel = channel;
        const reply = await server!.rpc("SendMessage", {
          message: userMessage("hello", { contextId, metadata: { iac_code: iac } }),
        });
        expect(reply.body.error, reply.raw).to.equal(undefined);
      };
      const scrape = async () => (await fetch(`${server!.url.replace(/\/$/, "")}/metrics`)).text();
      const turns = (text: string, channel: string) =>
        metricValue(text, "iac_code_turn_duration_seconds_count", { channel });
      const tokens = (text: string, channel: string) =>
        metricValue(text, "iac_code_tokens_total", { channel, kind: "input" });

      await send("ctx-web", "web-console");
      await send("ctx-web"); // no channel: the bound one
      let text = await scrape();
      expect(turns(text, "web-console")).to.equal(2);
      expect(tokens(text, "web-console")).to.equal(22);
      await send("ctx-web", "  slack  "); // another: replaces it (trimmed)
      await send("ctx-web");
      await send("ctx-env"); // never named: IAC_CODE_CHANNEL
      text = await scrape();
      expect(turns(text, "web-console")).to.equal(2);
      expect(turns(text, "slack")).to.equal(2);
      expect(tokens(text, "slack")).to.equal(22);
      expect(turns(text, "env-channel")).to.equal(1);
      expect(turns(text, "unknown")).to.equal(0);
      await server.close();
      server = undefined;
      await stopTracing(); // flushes the turn spans
      const spans = receiver.spans.filter((span) => span.name === "turn");
      expect(spans.map((span) => span.attributes["iac_code.channel"])).to.deep.equal([
        "web-console",
        "web-console",
        "slack",
        "slack",
        "env-channel",
      ]);

      // Restarted without IAC_CODE_CHANNEL: the context's channel was persisted; a new context is "unknown".
      server = await startTestServer({ dir, runtime: new FakeRuntime(path.join(dir, "sessions")), env: {} });
      await send("ctx-web");
      await send("ctx-new");
      text = await scrape();
      expect(turns(text, "slack")).to.equal(1);
      expect(turns(text, "unknown")).to.equal(1);
      expect(turns(text, "env-channel")).to.equal(0);
    } finally {
      await server?.close();
      await stopTracing();
      await receiver.close();
      cleanup(dir);
    }
  });

  it("AG-UI: the run's forwarded channel labels both servers' metrics, none is unknown on the adapter", async () => {
    const h = await startHarness();
    try {
      const scrape = async (url: string) => (await fetch(`${url}metrics`)).text();
      const a2aToken = { Authorization: "Bearer a2a-secret-token" };
      const run = await post(
        h.url,
        runInput(h, { threadId: "t-channel", runId: "r1", text: "hi", iac: { channel: "agui-web" } }),
      );
      expect(run.events.at(-1)).to.include({ type: "RUN_FINISHED" });
      const again = await post(h.url, runInput(h, { threadId: "t-channel", runId: "r2", text: "hi again" }));
      expect(again.events.at(-1)).to.include({ type: "RUN_FINISHED" });
      const agui = await scrape(h.url);
      expect(metricValue(agui, "iac_code_turn_duration_seconds_count", { channel: "agui-web" })).to.equal(1);
      expect(metricValue(agui, "iac_code_tokens_total", { channel: "agui-web", kind: "output" })).to.equal(7);
      expect(metricValue(agui, "iac_code_turn_duration_seconds_count", { channel: "unknown" })).to.equal(1);
      // The A2A server bound the first run's channel to the thread's context: both turns carry it.
      const a2a = await (
        await fetch(`${h.a2a.url.replace(/\/$/, "")}/metrics`, { headers: a2aToken })
      ).text();
      expect(metricValue(a2a, "iac_code_turn_duration_seconds_count", { channel: "agui-web" })).to.equal(2);
    } finally {
      await h.close();
    }
  });

  it("the channel label keeps a bounded number of values: later ones count as other", () => {
    const metrics = new ServerMetrics({ server: "a2a" });
    for (let i = 0; i < MAX_CHANNELS + 5; i++) metrics.observeTurn("completed", `ch-${i}`, 0.01);
    metrics.observeTurn("completed", "ch-0", 0.01);
    return metrics.scrape().then(({ body }) => {
      expect(metricValue(body, "iac_code_turn_duration_seconds_count", { channel: "ch-0" })).to.equal(2);
      expect(metricValue(body, "iac_code_turn_duration_seconds_count", { channel: "other" })).to.equal(5);
      expect(
        metricValue(body, "iac_code_turn_duration_seconds_count", { channel: `ch-${MAX_CHANNELS}` }),
      ).to.equal(0);
    });
  });
});
