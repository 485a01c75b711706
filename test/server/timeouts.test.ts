// Server timeouts: resolution from flag, config file and env on both servers
// (with their precedence and clear errors), and the AG-UI listener dropping
// stalled requests and idle keep-alive connections while a long response
// (SSE with heartbeats) is never cut by the request timeout.
import { expect } from "chai";
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { resolveSettings as resolveAguiSettings } from "../../src/agui/config.js";
import { settingsFromCli } from "../../src/cli/a2a-run.js";
import { listenHttp } from "../../src/server/listener.js";
import { DEFAULT_TIMEOUTS, resolveTimeouts } from "../../src/server/timeouts.js";
import { post, runInput, startHarness } from "../agui/harness.js";
import { idleKeepAlive, stalledRequest } from "./stalled.js";

describe("server timeouts", () => {
  it("defaults: 60 s headers, 300 s request, 75 s keep-alive, 10 s shutdown", () => {
    expect(resolveTimeouts(() => undefined)).to.deep.equal({
      headersMs: 60_000,
      requestMs: 300_000,
      keepAliveMs: 75_000,
      shutdownMs: 10_000,
    });
    expect(resolveTimeouts(() => undefined)).to.deep.equal(DEFAULT_TIMEOUTS);
  });

  it("refuses values that are not seconds >= 0, a headers limit above the request limit, a 0 shutdown", () => {
    const only = (key: string, value: unknown) => () =>
      resolveTimeouts((k) => (k === key ? value : undefined));
    expect(only("request-timeout-seconds", "soon")).to.throw(
      "Invalid request-timeout-seconds 'soon': expected a number of seconds, 0 or more.",
    );
    expect(only("keep-alive-timeout-seconds", -1)).to.throw(/keep-alive-timeout-seconds/);
    expect(only("request-timeout-seconds", 30)).to.throw(
      "headers-timeout-seconds must be at most request-timeout-seconds.",
    );
    expect(only("shutdown-timeout-seconds", 0)).to.throw(/shutdown-timeout-seconds/);
    expect(resolveTimeouts((k) => (k === "request-timeout-seconds" ? "0" : undefined)).requestMs).to.equal(0);
  });

  it("A2A: flag beats config file beats IACCODE_A2A_* env", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "timeouts-"));
    const file = path.join(dir, "a2a.yml");
    writeFileSync(file, "keep_alive_timeout_seconds: 20\nshutdown-timeout-seconds: 3\n");
    const env = { IACCODE_A2A_KEEP_ALIVE_TIMEOUT_SECONDS: "30", IACCODE_A2A_HEADERS_TIMEOUT_SECONDS: "5" };
    const fromFile = settingsFromCli({ config: file }, env).timeouts;
    expect(fromFile).to.deep.include({ keepAliveMs: 20_000, shutdownMs: 3_000, headersMs: 5_000 });
    const fromFlag = settingsFromCli({ config: file, keepAliveTimeoutSeconds: "0.5" }, env).timeouts;
    expect(fromFlag.keepAliveMs).to.equal(500);
    expect(() => settingsFromCli({ requestTimeoutSeconds: "x" }, {})).to.throw(/request-timeout-seconds/);
  });

  it("AG-UI: flag beats config file beats IAC_CODE_AGUI_* env", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "timeouts-"));
    const file = path.join(dir, "agui.yml");
    writeFileSync(file, "request-timeout-seconds: 100\nheaders-timeout-seconds: 7\n");
    const env = {
      IAC_CODE_AGUI_REQUEST_TIMEOUT_SECONDS: "200",
      IAC_CODE_AGUI_KEEP_ALIVE_TIMEOUT_SECONDS: "9",
    };
    expect(resolveAguiSettings({ config: file }, env).timeouts).to.deep.include({
      requestMs: 100_000,
      headersMs: 7_000,
      keepAliveMs: 9_000,
    });
    expect(
      resolveAguiSettings({ config: file, requestTimeoutSeconds: "50" }, env).timeouts?.requestMs,
    ).to.equal(50_000);
    writeFileSync(file, "request-timeout-seconds: soon\n");
    expect(() => resolveAguiSettings({ config: file }, {})).to.throw(/request-timeout-seconds/);
  });

  it("listenHttp: a stalled body gets 408, idle keep-alive closes, a long response is not cut", async () => {
    const listener = await listenHttp(
      (req, res) => {
        req.resume();
        req.on("end", () => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          let n = 0;
          const timer = setInterval(() => {
            res.write(": heartbeat\n\n");
            if (++n === 6) {
              clearInterval(timer);
              res.end("data: done\n\n");
            }
          }, 200);
        });
      },
      "127.0.0.1",
      0,
      { ...DEFAULT_TIMEOUTS, headersMs: 300, requestMs: 500, keepAliveMs: 400 },
    );
    try {
      const stalled = await stalledRequest(listener.port, { stallIn: "body" });
      expect(stalled.reply).to.match(/^HTTP\/1\.1 408/);
      const text = await new Promise<string>((resolve, reject) => {
        http
          .request({ host: "127.0.0.1", port: listener.port, method: "POST" }, (res) => {
            let body = "";
            res.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
            res.on("end", () => resolve(body));
          })
          .on("error", reject)
          .end("x");
      });
      expect(text.endsWith("data: done\n\n")).to.equal(true);
      expect(text.match(/heartbeat/g)).to.have.length(6);
    } finally {
      await listener.close();
    }
  });

  it("the AG-UI server drops a POST / whose body stalls and closes idle keep-alive connections", async () => {
    const h = await startHarness({
      settings: { timeouts: { ...DEFAULT_TIMEOUTS, headersMs: 300, requestMs: 500, keepAliveMs: 400 } },
    });
    try {
      const stalled = await stalledRequest(h.agui.port, { stallIn: "body" });
      expect(stalled.reply).to.match(/^HTTP\/1\.1 408/);
      expect(stalled.closedAfterMs).to.be.within(300, 5000);
      const idle = await idleKeepAlive(h.agui.port, "/health");
      expect(idle.firstReply).to.match(/^HTTP\/1\.1 200/);
      expect(idle.closedAfterIdleMs).to.be.within(300, 5000);
      // A normal run still works.
      const ok = await post(h.url, runInput(h, { threadId: "after-stall", runId: "r1", text: "hi" }));
      expect(ok.status).to.equal(200);
    } finally {
      await h.close();
    }
  });

  it("the A2A server drops a stalled JSON-RPC body", async () => {
    const { startTestServer, cleanup } = await import("../a2a/helpers.js");
    const t = await startTestServer({
      file: {
        "headers-timeout-seconds": 0.3,
        "request-timeout-seconds": 0.5,
        "keep-alive-timeout-seconds": 0.4,
      },
    });
    try {
      const stalled = await stalledRequest(t.server.port, { stallIn: "body" });
      expect(stalled.reply).to.match(/^HTTP\/1\.1 408/);
      const idle = await idleKeepAlive(t.server.port, "/health");
      expect(idle.closedAfterIdleMs).to.be.within(300, 5000);
    } finally {
      await t.close();
      cleanup(t.dir);
    }
  });
});
