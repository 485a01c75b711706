// The console's other paths, in Chromium against the in-process adapter and A2A
// server of the harness (the fixture runtime): token entry when the adapter has
// an auth token (a wrong token is refused and asked again; the token is never
// stored by the page), a question answered with free text, Cancel during a run.
// Also the `console` setting's resolution and the page of an unbuilt console.
import { expect } from "chai";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import Koa from "koa";
import Router from "@koa/router";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { resolveSettings } from "../../src/agui/config.js";
import { addConsoleRoutes } from "../../src/agui/http/console-route.js";
import { bundleConsole } from "../../scripts/lib/console-bundle.js";
import { CHROMIUM, CHROMIUM_FLAGS } from "./browser.js";
import { startHarness, type Harness } from "./harness.js";

const TOKEN = "console-secret-token-42";
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const ARTIFACTS = path.join(ROOT, "test-artifacts", "console");

describe("AG-UI console: token, question, cancel (Chromium)", function () {
  this.timeout(120_000);
  let h: Harness;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;

  before(async () => {
    // The bundle of the current console sources (the adapter reads dist/console when it starts).
    await bundleConsole(ROOT);
    h = await startHarness({ settings: { console: true, authToken: TOKEN } });
    profile = mkdtempSync(path.join(os.tmpdir(), "chromium-profile-"));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1300, height: 850 },
    });
    page = await browser.newPage();
    page.setDefaultTimeout(30_000);
  });
  after(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await h?.close();
  });

  const lastAssistantText = async () =>
    (await page.locator(".msg.assistant .body").allInnerTexts()).join("\n");

  it("asks for the token, says when it is refused, and works once it is right", async () => {
    const html = await fetch(`${h.url}console`);
    expect(await html.text()).to.include('<meta name="iac-code-auth" content="required" />');
    await page.goto(`${h.url}console`);
    const dialog = page.getByRole("dialog");
    await dialog.getByText("This server requires an access token").waitFor();
    await dialog.getByLabel("Access token").fill("wrong-token");
    await dialog.getByRole("button", { name: "Connect" }).click();
    await page.getByLabel("Message").fill("hello console");
    await page.getByRole("button", { name: "Send" }).click();
    await dialog.getByText("The access token was refused").waitFor();
    expect(await page.locator(".note.error").innerText()).to.include("UNAUTHORIZED");
    await dialog.getByLabel("Access token").fill(TOKEN);
    await dialog.getByRole("button", { name: "Connect" }).click();
    await page.getByLabel("Message").fill("hello again");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".msg.assistant", { hasText: "Echo: hello again" }).waitFor();
    // The page keeps the token in memory only.
    const stored = String(
      await page.evaluate("JSON.stringify(Object.assign({}, localStorage, sessionStorage))"),
    );
    expect(stored).to.include("hello console");
    expect(stored).to.not.include(TOKEN);
  });

  it("answers a question with free text", async () => {
    await page.getByRole("button", { name: "New thread" }).click();
    await page.getByLabel("Message").fill("where? [[question]]");
    await page.getByRole("button", { name: "Send" }).click();
    const card = page.locator(".interrupt.question");
    await card.getByText("Which region?").waitFor();
    expect(await card.getByRole("button").allInnerTexts()).to.deep.equal(["Hangzhou", "Beijing", "Answer"]);
    await card.getByLabel("Your answer").fill("Shanghai please");
    await card.getByRole("button", { name: "Answer" }).click();
    await page.locator(".note.status", { hasText: "Done." }).waitFor();
    expect(await lastAssistantText()).to.include("Region: Shanghai please.");
    expect(await card.locator(".answered").innerText()).to.equal("Answered: Shanghai please");
    await page.screenshot({ path: path.join(ARTIFACTS, "06-question.png"), fullPage: true });
  });

  it("offers only the decisions the permission allows; Deny leaves the file unwritten", async () => {
    await page.getByRole("button", { name: "New thread" }).click();
    await page.getByLabel("Message").fill("write it [[permission]]");
    await page.getByRole("button", { name: "Send" }).click();
    const card = page.locator(".interrupt.permission");
    await card.getByText("Write vpc.yaml. Allow once?").waitFor();
    expect(await card.getByRole("button", { name: "Allow once" }).isEnabled()).to.equal(true);
    // This permission's schema offers allow_once and deny only.
    expect(await card.getByRole("button", { name: "Always allow" }).isDisabled()).to.equal(true);
    // Waiting on an answer: a new message is not what the thread takes.
    expect(await page.getByRole("button", { name: "Send" }).isDisabled()).to.equal(true);
    await card.getByRole("button", { name: "Deny" }).click();
    await page.locator(".msg.assistant", { hasText: "Not written." }).waitFor();
    expect(await card.locator(".answered").innerText()).to.equal("Answered: Deny");
    expect(existsSync(path.join(h.dir, "vpc.yaml"))).to.equal(false);
    expect(await page.locator('.tool[data-tool="write_file"] .tool-result').textContent()).to.include(
      "Permission denied",
    );
  });

  it("cancels a running execution through the cancel extension", async () => {
    await page.getByRole("button", { name: "New thread" }).click();
    await page.getByLabel("Message").fill("take your time [[slow]]");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".msg.assistant", { hasText: "working..." }).waitFor();
    expect(await page.getByRole("button", { name: "Send" }).isDisabled()).to.equal(true);
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.locator(".note.error", { hasText: "CANCELLED" }).waitFor();
    expect(await page.getByRole("button", { name: "Send" }).isEnabled()).to.equal(true);
    expect(await page.getByRole("button", { name: "Cancel" }).isDisabled()).to.equal(true);
    expect(await lastAssistantText()).to.not.include("working... done");
  });
});

describe("AG-UI console: the console setting", () => {
  it("is on by default on a loopback host, off otherwise; the flag, key and variable override it", () => {
    expect(resolveSettings({}, {}).console).to.equal(true);
    expect(resolveSettings({ host: "::1" }, {}).console).to.equal(true);
    expect(resolveSettings({ host: "0.0.0.0" }, {}).console).to.equal(false);
    expect(resolveSettings({ host: "0.0.0.0", console: true }, {}).console).to.equal(true);
    expect(resolveSettings({ console: false }, {}).console).to.equal(false);
    expect(resolveSettings({}, { IAC_CODE_AGUI_CONSOLE: "false" }).console).to.equal(false);
    expect(() => resolveSettings({}, { IAC_CODE_AGUI_CONSOLE: "maybe" })).to.throw(/IAC_CODE_AGUI_CONSOLE/);
  });

  it("answers 503 with how to build it when not built; the page's workspace is escaped", async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), "console-unbuilt-"));
    await bundleConsole(ROOT);
    const router = new Router();
    addConsoleRoutes(router, { authRequired: false, workspace: "/tmp" }, empty);
    const built = new Router();
    // A workspace with markup and a replacement pattern in its name stays text in the attribute.
    addConsoleRoutes(
      built,
      { authRequired: true, workspace: '/srv/a"<b>$&' },
      path.join(ROOT, "dist", "console"),
    );
    const app = new Koa().use(router.routes());
    const builtApp = new Koa().use(built.routes());
    const builtServer = builtApp.listen(0, "127.0.0.1");
    await new Promise((resolve) => builtServer.once("listening", resolve));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/console`);
      expect(res.status).to.equal(503);
      expect(await res.text()).to.include("npm run build");
      expect((await fetch(`http://127.0.0.1:${port}/console/app.js`)).status).to.equal(404);
      const builtPort = (builtServer.address() as AddressInfo).port;
      const page = await (await fetch(`http://127.0.0.1:${builtPort}/console`)).text();
      expect(page).to.include('<meta name="iac-code-workspace" content="/srv/a&quot;&lt;b&gt;$&amp;" />');
      expect(page).to.include('<meta name="iac-code-auth" content="required" />');
    } finally {
      server.close();
      builtServer.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
