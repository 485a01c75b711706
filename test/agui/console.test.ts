// The browser console at /console, driven by headless Chromium (Debian's
// chromium through playwright-core) against a real `iac-code agui` in demo mode
// (nothing configured: a managed A2A child answers with the bundled demo
// script). The demo end to end (prompt, streamed text, "Allow once", the file),
// then a pipeline run to the candidate selection, a choice, the VPC (selector
// form), the confirmation and the deployment's progress. Every request the
// page makes stays on the adapter's origin and no Content-Security-Policy
// violation is reported. Screenshots go to test-artifacts/console/ (CI keeps
// them).
import { expect } from "chai";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { CONSOLE_CSP } from "../../src/agui/http/console-route.js";
import { cleanEnv, removeDir, startCli, tempDir, type CliChild } from "../e2e/helpers.js";
import { bundleConsole } from "../../scripts/lib/console-bundle.js";
import { CHROMIUM, CHROMIUM_FLAGS } from "./browser.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const ARTIFACTS = path.join(ROOT, "test-artifacts", "console");

describe("AG-UI console (iac-code agui, demo mode, Chromium)", function () {
  this.timeout(240_000);
  let dir: string;
  let workspace: string;
  let checkout: string;
  let cli: CliChild;
  let browser: BrowserContext;
  let page: Page;
  const requests: string[] = [];
  const violations: string[] = [];
  const missing: string[] = [];

  before(async () => {
    // The bundle of the current console sources (the adapter reads dist/console when it starts).
    await bundleConsole(ROOT);
    dir = tempDir("iac-console-");
    checkout = path.join(dir, "checkout");
    mkdirSync(checkout, { recursive: true });
    mkdirSync(ARTIFACTS, { recursive: true });
    // The adapter runs in a "checkout"; the console proposes the default workspace under the
    // config dir ($HOME/.iac-code here), created at start-up and allowed, never the checkout.
    workspace = path.join(dir, ".iac-code", "workspace");
    cli = await startCli(["agui", "--port", "0"], cleanEnv(dir), checkout);
    await cli.waitForOutput("AG-UI adapter listening");
    browser = await chromium.launchPersistentContext(path.join(dir, "profile"), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1400, height: 900 },
    });
    page = await browser.newPage();
    page.setDefaultTimeout(90_000);
    page.on("request", (req) => requests.push(req.url()));
    page.on("response", (res) => {
      if (res.status() >= 400) missing.push(`${res.status()} ${res.url()}`);
    });
    page.on("console", (msg) => {
      if (/Content Security Policy/i.test(msg.text())) violations.push(msg.text());
    });
  });
  after(async () => {
    await browser?.close();
    await cli?.stop();
    if (dir) removeDir(dir);
  });

  const shot = (name: string) =>
    page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

  it("serves the page, its script and its stylesheet with their content types and a strict CSP", async () => {
    await cli.waitForOutput(`Browser console: ${cli.url}console\n`);
    const html = await fetch(`${cli.url}console`);
    expect(html.status).to.equal(200);
    expect(html.headers.get("content-type")).to.equal("text/html; charset=utf-8");
    expect(html.headers.get("content-security-policy")).to.equal(CONSOLE_CSP);
    expect(CONSOLE_CSP).to.include("default-src 'none'").and.include("script-src 'self'");
    expect(html.headers.get("x-content-type-options")).to.equal("nosniff");
    const body = await html.text();
    expect(body).to.include('<script type="module" src="console/app.js">');
    expect(body).to.include(`<meta name="iac-code-workspace" content="${workspace}" />`);
    expect(body).to.include('<meta name="iac-code-auth" content="none" />');
    const script = await fetch(`${cli.url}console/app.js`);
    expect(script.headers.get("content-type")).to.equal("text/javascript; charset=utf-8");
    expect(script.headers.get("content-security-policy")).to.equal(CONSOLE_CSP);
    expect(await script.text()).to.include("iac-code.session.v1");
    const style = await fetch(`${cli.url}console/app.css`);
    expect(style.headers.get("content-type")).to.equal("text/css; charset=utf-8");
    expect(body).to.include('<link rel="icon" type="image/svg+xml" href="console/favicon.svg" />');
    const icon = await fetch(`${cli.url}console/favicon.svg`);
    expect(icon.headers.get("content-type")).to.equal("image/svg+xml");
    expect(await icon.text()).to.match(/^<svg /);
    // A browser opening the adapter's address is sent to the console; an API client is not.
    const opened = await fetch(cli.url, {
      headers: { Accept: "text/html,application/xhtml+xml,*/*;q=0.8" },
      redirect: "manual",
    });
    expect(opened.status).to.equal(302);
    expect(opened.headers.get("location")).to.equal("/console");
    expect(
      (await fetch(cli.url, { headers: { Accept: "application/json" }, redirect: "manual" })).status,
    ).to.equal(405);
    expect((await fetch(`${cli.url}console/../package.json`)).status).to.equal(404);
    expect((await fetch(`${cli.url}console/index.ts`)).status).to.equal(404);
  });

  it("runs the demo: streamed text, a permission answered with Allow once, the file shown highlighted", async () => {
    await page.goto(`${cli.url}console`);
    await page.getByLabel("Message").fill("Create a VPC template");
    await page.getByRole("button", { name: "Send" }).click();
    const allow = open(page).getByRole("button", { name: "Allow once" });
    await allow.waitFor();
    const streamed = await page.locator(".msg.assistant .body").allInnerTexts();
    expect(streamed.join("")).to.include("I'm running in demo mode (no model is configured)");
    expect(await page.locator(".reasoning").count()).to.be.greaterThan(0);
    const writeCall = page.locator('.tool[data-tool="write_file"]');
    expect(await writeCall.count()).to.equal(1);
    expect(await open(page).getByRole("button", { name: "Deny" }).isEnabled()).to.equal(true);
    // Proposed before the answer: shown, not written.
    const file = page.locator('.file[data-path="vpc.yaml"]');
    expect(await file.getAttribute("data-state")).to.equal("proposed");
    await shot("01-demo-permission");

    await allow.click();
    await page.locator('.file[data-path="vpc.yaml"][data-state="written"]').waitFor();
    await page.locator(".note.status", { hasText: "Done." }).waitFor();
    expect(await file.locator("code").innerText()).to.include("Type: ALIYUN::ECS::VPC");
    expect(await file.locator(".tok-key", { hasText: "Type" }).count()).to.be.greaterThan(0);
    expect(readFileSync(path.join(workspace, "vpc.yaml"), "utf8")).to.include("ALIYUN::ECS::VPC");
    expect(readdirSync(checkout)).to.deep.equal([]);
    // The tool call shows its arguments and its result.
    await writeCall.locator("summary").click();
    expect(await writeCall.locator(".tool-args").innerText()).to.include('"path": "vpc.yaml"');
    expect(await writeCall.locator(".tool-result").count()).to.equal(1);
    const text = (await page.locator(".msg.assistant .body").allInnerTexts()).join("");
    expect(text).to.include("To talk to a real model, set IAC_CODE_API_KEY");
    await shot("02-demo-done");
  });

  it("runs the pipeline to the candidates, chooses one and shows the deployment's progress", async () => {
    await page.getByRole("button", { name: "New thread" }).click();
    await page.getByLabel("Pipeline mode").check();
    await page.getByLabel("Message").fill("I need a website");
    await page.getByRole("button", { name: "Send" }).click();
    // Template writes ask permission (the first answered "Always allow"), then the selection.
    let decision = "Always allow";
    for (;;) {
      const first = open(page).first();
      await first.waitFor();
      if ((await first.getAttribute("class"))!.includes("question")) break;
      const id = await first.getAttribute("data-interrupt-id");
      const card = page.locator(`.interrupt[data-interrupt-id="${id}"]`);
      await card.getByRole("button", { name: decision }).click();
      expect(await card.locator(".answered").innerText()).to.equal(`Answered: ${decision}`);
      decision = "Allow once";
    }
    const cards = page.locator(".candidate");
    expect(await cards.count()).to.equal(2);
    const single = page.locator('.candidate[data-candidate="candidate-0"]');
    const pair = page.locator('.candidate[data-candidate="candidate-1"]');
    expect(await single.locator(".cost").innerText()).to.match(/Cost: 180 CNY/);
    expect(await pair.locator(".cost").innerText()).to.match(/Cost: 420 CNY/);
    expect(
      await page.locator('.timeline .step[data-step="evaluate_candidates"]').getAttribute("data-state"),
    ).to.equal("done");
    expect(
      await page.locator('.timeline .step[data-step="intent_parsing"]').getAttribute("data-state"),
    ).to.equal("done");
    // Both templates were written and are shown.
    await page.locator('.file[data-path="demo-pipeline/pair/template.yaml"][data-state="written"]').waitFor();
    await shot("03-pipeline-selection");

    await page.getByRole("button", { name: "Choose Load-balanced pair" }).click();
    await pair.locator(".badge", { hasText: "Selected" }).waitFor();
    // The deploying step asks for the VPC (the selector form), then confirms the deployment.
    const selector = open(page).and(page.getByRole("group", { name: "Choose a cloud resource" }));
    await selector.getByRole("radio").first().check();
    await selector.getByRole("button", { name: "Use this resource" }).click();
    const confirmation = open(page).and(page.getByRole("group", { name: "Confirm the deployment" }));
    expect(await confirmation.locator(".deployment-summary").innerText()).to.include("Load-balanced pair");
    await confirmation.getByRole("button", { name: "Deploy", exact: true }).click();
    const deploy = open(page).getByRole("button", { name: "Allow once" });
    await deploy.waitFor();
    expect(await open(page).locator(".prompt").innerText()).to.include("iac-demo-web");
    await deploy.click();
    const bar = page.getByRole("progressbar", { name: "iac-demo-web" });
    await page.locator(".note.status", { hasText: "Done." }).last().waitFor();
    expect(await bar.getAttribute("value")).to.equal("100");
    expect(await page.locator('.stack[data-stack="iac-demo-web"] .stack-status').innerText()).to.include(
      "CREATE_COMPLETE",
    );
    expect(await page.locator('.timeline .step[data-step="deploying"]').getAttribute("data-state")).to.equal(
      "done",
    );
    expect(await single.getAttribute("class")).to.equal("candidate");
    await shot("04-pipeline-deployed");
  });

  it("lists the threads, switches language, and fetched nothing from another origin", async () => {
    const threads = page.locator(".thread-list .thread");
    expect(await threads.count()).to.equal(2);
    expect(await threads.locator(".thread-title").allInnerTexts()).to.include.members([
      "Create a VPC template",
      "I need a website",
    ]);
    await threads.filter({ hasText: "Create a VPC template" }).click();
    await page.locator('.file[data-path="vpc.yaml"]').waitFor();

    await page.getByLabel("Language").selectOption("zh");
    await page.getByRole("button", { name: "发送" }).waitFor();
    expect(await page.getByLabel("消息").count()).to.equal(1);
    expect(await page.locator("html").getAttribute("lang")).to.equal("zh-CN");
    await shot("05-zh");
    await page.getByLabel("语言").selectOption("en");
    await page.getByRole("button", { name: "Send" }).waitFor();

    const origin = new URL(cli.url).origin;
    expect(requests.length).to.be.greaterThan(3);
    expect(requests.filter((url) => new URL(url).origin !== origin)).to.deep.equal([]);
    expect(violations).to.deep.equal([]);
    // Nothing the page asked for was missing (the favicon included).
    expect(missing).to.deep.equal([]);
  });
});

describe("AG-UI console: --no-console", function () {
  this.timeout(120_000);
  let dir: string;
  let cli: CliChild;
  before(async () => {
    dir = tempDir("iac-console-off-");
    cli = await startCli(["agui", "--port", "0", "--no-console"], cleanEnv(dir), dir);
  });
  after(async () => {
    await cli?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("serves no /console (nor its assets); the AG-UI endpoints are unchanged", async () => {
    for (const route of ["console", "console/app.js", "console/app.css", "console/favicon.svg"])
      expect((await fetch(`${cli.url}${route}`)).status, route).to.equal(404);
    expect((await fetch(cli.url, { headers: { Accept: "text/html" }, redirect: "manual" })).status).to.equal(
      405,
    );
    expect((await fetch(`${cli.url}health`)).status).to.equal(200);
    await cli.waitForOutput("AG-UI adapter listening");
    expect(cli.stdout()).to.not.include("Browser console");
  });
});

/** The interrupt cards not answered yet. */
function open(page: Page) {
  return page.locator(".interrupt:not([data-answered])");
}
