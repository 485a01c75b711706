// CORS on POST / and the cancel extension, checked by a real browser: headless
// Chromium (Debian's chromium, driven by playwright-core) loads a page from
// one loopback origin and calls the adapter on another port (another origin).
// An allowed origin reads the SSE stream; any other origin is blocked by the
// browser itself. The headers are also checked one by one with plain fetch.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { resolveSettings } from "../../src/agui/config.js";
import { parseSseText } from "../../src/server/sse.js";
import { CHROMIUM, CHROMIUM_FLAGS } from "./browser.js";
import { runInput, startHarness, type Harness } from "./harness.js";

/** A page server on a loopback port of its own: its origin is http://127.0.0.1:<port>. */
async function pageServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res
      .writeHead(200, { "Content-Type": "text/html; charset=utf-8" })
      .end("<!doctype html><title>front end</title>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface BrowserReply {
  status?: number;
  contentType?: string | null;
  text?: string;
  error?: string;
}

describe("AG-UI CORS", function () {
  this.timeout(90_000);
  let h: Harness;
  let allowedPage: Awaited<ReturnType<typeof pageServer>>;
  let otherPage: Awaited<ReturnType<typeof pageServer>>;
  let browser: BrowserContext;
  let profile: string;

  before(async () => {
    allowedPage = await pageServer();
    otherPage = await pageServer();
    h = await startHarness({ settings: { corsOrigins: [allowedPage.origin] } });
    profile = mkdtempSync(path.join(os.tmpdir(), "chromium-profile-"));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
    });
  });
  after(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await h?.close();
    await allowedPage?.close();
    await otherPage?.close();
  });

  /** fetch() from a page of `origin`: what the page's script can read, or the browser's refusal. */
  async function fetchFrom(origin: string, url: string, body: unknown): Promise<BrowserReply> {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      return await page.evaluate(
        async ({ url, body }) => {
          try {
            const res = await fetch(url, {
              method: "POST",
              headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
              body: JSON.stringify(body),
            });
            return {
              status: res.status,
              contentType: res.headers.get("content-type"),
              text: await res.text(),
            };
          } catch (error) {
            return { error: String(error) };
          }
        },
        { url, body },
      );
    } finally {
      await page.close();
    }
  }

  it("an allowed origin runs the agent and reads the SSE stream from the browser", async () => {
    const reply = await fetchFrom(
      allowedPage.origin,
      h.url,
      runInput(h, { threadId: "cors-1", runId: "r1", text: "hello" }),
    );
    expect(reply.error).to.equal(undefined);
    expect(reply.status).to.equal(200);
    expect(reply.contentType).to.match(/^text\/event-stream/);
    const types = parseSseText(reply.text!).map((event) => (JSON.parse(event.data) as { type: string }).type);
    expect(types[0]).to.equal("RUN_STARTED");
    expect(types).to.include("TEXT_MESSAGE_CONTENT");
    expect(types.at(-1)).to.equal("RUN_FINISHED");
  });

  it("an allowed origin reaches the cancel extension (its answer is readable)", async () => {
    const reply = await fetchFrom(
      allowedPage.origin,
      `${h.url}extensions/iac-code/v1/executions/none/cancel`,
      {
        threadId: "cors-1",
        rosInvocationId: "inv",
      },
    );
    expect(reply.error).to.equal(undefined);
    expect(reply.status).to.be.within(400, 499);
    expect(JSON.parse(reply.text!)).to.have.nested.property("error.code");
  });

  it("another origin is blocked by the browser, and no run starts", async () => {
    const reply = await fetchFrom(
      otherPage.origin,
      h.url,
      runInput(h, { threadId: "cors-blocked", runId: "r1", text: "hello" }),
    );
    expect(reply.error).to.match(/TypeError/);
    expect(reply.status).to.equal(undefined);
    // The preflight failed, so the POST was never sent.
    expect(await h.store.load("cors-blocked")).to.equal(undefined);
  });

  it("answers preflights with the methods, headers and Vary: Origin; nothing for other origins", async () => {
    const preflight = (origin: string, route = "") =>
      fetch(`${h.url}${route}`, {
        method: "OPTIONS",
        headers: {
          Origin: origin,
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "content-type, authorization",
        },
      });
    const ok = await preflight(allowedPage.origin);
    expect(ok.status).to.equal(204);
    expect(ok.headers.get("access-control-allow-origin")).to.equal(allowedPage.origin);
    expect(ok.headers.get("access-control-allow-methods")).to.equal("POST, OPTIONS");
    expect(ok.headers.get("access-control-allow-headers")).to.equal(
      "Content-Type, Authorization, Accept, Accept-Language",
    );
    expect(ok.headers.get("vary")).to.match(/Origin/);
    const cancel = await preflight(allowedPage.origin, "extensions/iac-code/v1/executions/e-1/cancel");
    expect(cancel.headers.get("access-control-allow-origin")).to.equal(allowedPage.origin);
    const observe = await preflight(allowedPage.origin, "extensions/iac-code/v1/executions/e-1/subscribe");
    expect(observe.headers.get("access-control-allow-origin")).to.equal(allowedPage.origin);
    const denied = await preflight(otherPage.origin);
    expect(denied.headers.get("vary")).to.match(/Origin/);
    expect([...denied.headers.keys()].filter((k) => k.startsWith("access-control-"))).to.deep.equal([]);
    // Other routes get no CORS headers at all.
    const health = await fetch(`${h.url}health`, { headers: { Origin: allowedPage.origin } });
    expect(health.headers.get("access-control-allow-origin")).to.equal(null);
  });

  it("adds no CORS header when no origin is configured (the default)", async () => {
    const plain = await startHarness();
    try {
      const res = await fetch(plain.url, {
        method: "OPTIONS",
        headers: { Origin: allowedPage.origin, "Access-Control-Request-Method": "POST" },
      });
      expect([...res.headers.keys()].filter((k) => k.startsWith("access-control-"))).to.deep.equal([]);
    } finally {
      await plain.close();
    }
  });

  it("reads the origins from --cors-origin (repeatable), cors-origins or IAC_CODE_AGUI_CORS_ORIGINS", () => {
    expect(resolveSettings({}, {}).corsOrigins).to.deep.equal([]);
    expect(
      resolveSettings({ corsOrigin: ["https://App.example.com/", "http://127.0.0.1:3000"] }, {}).corsOrigins,
    ).to.deep.equal(["https://app.example.com", "http://127.0.0.1:3000"]);
    expect(
      resolveSettings({}, { IAC_CODE_AGUI_CORS_ORIGINS: "https://a.example, https://b.example" }).corsOrigins,
    ).to.deep.equal(["https://a.example", "https://b.example"]);
    expect(() => resolveSettings({ corsOrigin: ["https://a.example/app"] }, {})).to.throw(
      "Invalid --cors-origin 'https://a.example/app': must match pattern",
    );
    expect(() => resolveSettings({ corsOrigin: ["*"] }, {})).to.throw(/Invalid --cors-origin/);
  });
});
