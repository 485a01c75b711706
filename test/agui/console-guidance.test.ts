// The console guides a running pipeline (Chromium): the adapter in this
// process serving the console, in front of the A2A server whose model is the
// guidance script (intent_parsing makes a long model call). While the
// pipeline runs, the message box is marked "Guidance" (button, placeholder,
// marker, in English and Chinese); what it sends is a guidance run (the tap
// sees it go to the running task with activeGuidance's own run), the
// conversation shows it as guidance and then the judge's verdict; the
// supplement changes the step's answer; when the run ends the box is a normal
// message box again. A screenshot goes to test-artifacts/console/.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { bundleConsole } from "../../scripts/lib/console-bundle.js";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { adapterSettings } from "../e2e/helpers.js";
import { guidanceWorld, type GuidanceWorld } from "../pipeline/guidance-world.js";
import { removeTempDirs } from "../runtime/helpers.js";
import { CHROMIUM, CHROMIUM_FLAGS } from "./browser.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const ARTIFACTS = path.join(ROOT, "test-artifacts", "console");

describe("AG-UI console: guidance while a pipeline runs (Chromium)", function () {
  this.timeout(120_000);
  let world: GuidanceWorld;
  let agui: AguiServer;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;

  before(async () => {
    await bundleConsole(ROOT);
    mkdirSync(ARTIFACTS, { recursive: true });
    world = await guidanceWorld();
    agui = await startAguiServer({
      ...adapterSettings({ url: world.tap.url, dir: world.dir }, world.token),
      console: true,
    });
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
    await agui?.close();
    await world?.close();
    await removeTempDirs();
  });

  it("sends guidance, marked so, and shows the judge's verdict; the pipeline takes it", async () => {
    await page.goto(`${agui.url}console`);
    const box = page.getByLabel("Message");
    expect(await box.getAttribute("placeholder")).to.equal("Describe the infrastructure you need…");
    await page.getByLabel("Pipeline mode").check();
    await box.fill("Deploy a small web app");
    await page.getByRole("button", { name: "Send", exact: true }).click();
    await page.locator(".msg.assistant", { hasText: "Looking at the workspace first." }).waitFor();

    // The pipeline runs: the box sends guidance, and says so.
    const guide = page.getByRole("button", { name: "Send guidance" });
    await guide.waitFor();
    expect(await guide.isEnabled()).to.equal(true);
    expect(await page.locator(".composer .guidance-marker").isVisible()).to.equal(true);
    expect(await box.getAttribute("placeholder")).to.match(/^Guide the running pipeline/);
    await box.fill("[GUIDE] a static site only");
    await guide.click();

    const mine = page.locator(".msg.user.guidance");
    await mine.waitFor();
    expect(await mine.innerText()).to.contain("Guidance");
    expect(await mine.innerText()).to.contain("[GUIDE] a static site only");
    const verdict = page.locator('.guidance-verdict[data-action="supplement"]');
    await verdict.waitFor();
    expect(await verdict.innerText()).to.contain("Taken: added to the running step intent_parsing.");
    expect(await verdict.innerText()).to.contain("Detail for the running step.");
    await page.locator(".note.guidance-received").waitFor();
    await page.locator(".note.guidance-sent").waitFor();

    // The supplement reached the step's next model call.
    await page.locator(".msg.assistant", { hasText: "Taking your guidance into account." }).waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, "guidance-verdict.png"), fullPage: true });
    await page.locator(".note", { hasText: "Done." }).waitFor();
    expect(await page.locator(".msg.assistant", { hasText: "Nothing to deploy here." }).count()).to.equal(0);
    expect(await page.locator(".note.error").count()).to.equal(0);

    // The guidance went to the running task as its own run; nothing was cancelled.
    const sends = world.tap.calls.filter((c) => c.method === "SendStreamingMessage");
    expect(sends).to.have.length(2);
    const message = (i: number) =>
      sends[i].params!.message as { taskId?: string; metadata: { iac_code: Record<string, unknown> } };
    expect(message(1).taskId).to.be.a("string");
    expect(message(1).metadata.iac_code).to.include({ run_mode: "pipeline" });
    expect(world.tap.calls.map((c) => c.method)).to.not.include("CancelTask");

    // The run is over: the box is a message box again.
    await page.getByRole("button", { name: "Send", exact: true }).waitFor();
    expect(await page.locator(".composer .guidance-marker").isVisible()).to.equal(false);
    expect(await box.getAttribute("placeholder")).to.equal("Describe the infrastructure you need…");
  });

  it("in Chinese: the guidance button, placeholder and verdict", async () => {
    await page.getByRole("button", { name: "New thread" }).click();
    await page.getByLabel("Language").selectOption("zh");
    const box = page.locator("#message");
    await page.locator("#pipeline-mode").check();
    await box.fill("Deploy a small web app");
    await page.getByRole("button", { name: "发送", exact: true }).click();
    await page.locator(".msg.assistant", { hasText: "Looking at the workspace first." }).waitFor();
    const guide = page.getByRole("button", { name: "发送引导" });
    await guide.waitFor();
    expect(await box.getAttribute("placeholder")).to.match(/^引导正在运行的流水线/);
    await box.fill("[IGNORE] skip the rules");
    await guide.click();
    const verdict = page.locator('.guidance-verdict[data-action="ignored"]');
    await verdict.waitFor();
    expect(await verdict.innerText()).to.contain("已忽略：流水线照常继续。");
    expect(await page.locator(".msg.user.guidance").last().innerText()).to.contain("引导");
    await page.locator(".msg.assistant", { hasText: "Nothing to deploy here." }).waitFor();
    await page.getByRole("button", { name: "发送", exact: true }).waitFor();
    await page.getByLabel("语言").selectOption("en");
  });
});
