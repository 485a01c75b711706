// The console against the real demo (an `iac-code agui` with nothing
// configured: its managed A2A server runs the bundled demo script against the
// simulated ROS endpoint), playing [demo:deploy-fails] in Chromium to the
// second, successful deploy: the tag taken from "Try a failure", the template
// permissions, the fleet chosen, its VPC chosen in the selector form and the
// deployment confirmed in the confirmation form; the stack that ends
// CREATE_FAILED with its resource's reason, the rollback to the selection, the
// failed stack deleted (cleanup_started, progress, cleanup_completed, seen as
// they came), the second selection, the single server deployed. Screenshots
// at the failure, the cleanup and the end go to test-artifacts/console/.
import { expect } from "chai";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { bundleConsole } from "../../scripts/lib/console-bundle.js";
import { cleanEnv, removeDir, startCli, tempDir, type CliChild } from "../e2e/helpers.js";
import { CHROMIUM, CHROMIUM_FLAGS } from "./browser.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const ARTIFACTS = path.join(ROOT, "test-artifacts", "console");

/**
 * Records, in the page, every state and progress value each cleanup entry
 * shows (a MutationObserver), so that states too short to be caught by a
 * locator are still seen in order.
 */
const RECORD_CLEANUP = `
  window.cleanupSeen = [];
  new MutationObserver((changes) => {
    for (const change of changes) {
      const item = change.target.closest && change.target.closest(".cleanup-item");
      if (!item) continue;
      const entry = item.dataset.state + " " + item.querySelector("progress").getAttribute("value");
      const seen = window.cleanupSeen;
      if (seen[seen.length - 1] !== entry) seen.push(entry);
    }
  }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ["data-state", "value"] });
`;

describe("AG-UI console: the demo's [demo:deploy-fails] to the second deploy (iac-code agui, demo mode, Chromium)", function () {
  this.timeout(300_000);
  let dir: string;
  let cli: CliChild;
  let browser: BrowserContext;
  let page: Page;
  const violations: string[] = [];

  before(async () => {
    await bundleConsole(ROOT);
    dir = tempDir("iac-console-fail-");
    const workspace = path.join(dir, "workspace");
    mkdirSync(workspace, { recursive: true });
    mkdirSync(ARTIFACTS, { recursive: true });
    cli = await startCli(["agui", "--port", "0"], cleanEnv(dir), workspace);
    await cli.waitForOutput("AG-UI adapter listening");
    browser = await chromium.launchPersistentContext(path.join(dir, "profile"), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1400, height: 900 },
    });
    page = await browser.newPage();
    page.setDefaultTimeout(90_000);
    page.on("console", (msg) => {
      if (/Content Security Policy/i.test(msg.text())) violations.push(msg.text());
    });
  });
  after(async () => {
    await browser?.close();
    await cli?.stop();
    if (dir) removeDir(dir);
  });

  /** A screenshot tall enough for the conversation and the pipeline panel (each scrolls on its own). */
  async function shot(name: string): Promise<void> {
    const viewport = page.viewportSize()!;
    const tallest = await page.evaluate(
      'Math.max(...[".log", ".side"].map((s) => document.querySelector(s).scrollHeight))',
    );
    await page.setViewportSize({
      width: viewport.width,
      height: Math.max(viewport.height, Number(tallest) + 260),
    });
    await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
    await page.setViewportSize(viewport);
  }

  const side = () => page.locator(".side");
  /** The first interrupt card not answered yet. */
  const waiting = () => page.locator(".interrupt:not([data-answered])").first();

  /** Answers permissions (`first` the first, Allow once after) until a card of another kind waits. */
  async function allowUntilOther(first = "Allow once"): Promise<string> {
    let decision = first;
    for (;;) {
      const next = waiting();
      await next.waitFor();
      const kind = (await next.getAttribute("class"))!;
      if (!kind.includes("permission")) return kind;
      // The card by its id: once answered it is no longer the first waiting one.
      const card = page.locator(
        `.interrupt[data-interrupt-id="${await next.getAttribute("data-interrupt-id")}"]`,
      );
      await card.getByRole("button", { name: decision }).click();
      await card.locator(".answered").waitFor();
      decision = "Allow once";
    }
  }

  /** The VPC selector (its first VPC), then the confirmation of `candidate`'s deployment (Deploy). */
  async function chooseVpcAndDeploy(candidate: string): Promise<void> {
    const selector = page.getByRole("group", { name: "Choose a cloud resource" }).and(waiting());
    await selector.waitFor();
    const vpcs = selector.getByRole("radio");
    expect(await vpcs.count()).to.be.greaterThan(0);
    await vpcs.first().check();
    await selector.getByRole("button", { name: "Use this resource" }).click();
    const confirmation = page.getByRole("group", { name: "Confirm the deployment" }).and(waiting());
    await confirmation.waitFor();
    expect(await confirmation.locator(".deployment-summary").innerText()).to.include(candidate);
    expect(
      await confirmation.getByRole("table", { name: "Parameters" }).getByRole("row").count(),
    ).to.be.greaterThan(1);
    await confirmation.getByRole("button", { name: "Deploy", exact: true }).click();
  }

  it("fails the fleet's deploy, rolls back, deletes its stack, and deploys the single server", async () => {
    await page.goto(`${cli.url}console`);
    await page.evaluate(RECORD_CLEANUP);
    // The scenario from the pipeline panel's list: it fills the message box in pipeline mode.
    await side().getByRole("button", { name: "[demo:deploy-fails]" }).click();
    expect(await page.getByLabel("Message").inputValue()).to.equal("I need a website [demo:deploy-fails]");
    expect(await page.getByLabel("Pipeline mode").isChecked()).to.equal(true);
    await page.getByRole("button", { name: "Send" }).click();

    // The template writes: the first always allowed.
    expect(await allowUntilOther("Always allow")).to.include("question");
    await side().getByRole("button", { name: "Choose Load-balanced fleet" }).click();
    await chooseVpcAndDeploy("Load-balanced fleet");
    // The deploy permission; then the stack fails, the run goes back to the selection.
    expect(await allowUntilOther()).to.include("question");

    const failed = side().locator('.stack[data-state="failed"]');
    expect(await failed.count()).to.equal(1);
    const failure = await failed.innerText();
    expect(failure).to.include("CREATE_FAILED");
    expect(failure).to.match(/quota/i);
    const rollback = side()
      .getByRole("region", { name: "Notices" })
      .getByRole("listitem")
      .filter({ hasText: "Rolled back from deploying to confirm_and_select" });
    expect(await rollback.innerText()).to.include("CREATE_FAILED");
    await shot("20-demo-deploy-failed");

    // The failed stack was deleted: started, in progress, deleted, in that order.
    const cleanup = side().getByRole("region", { name: "Cleanup" });
    const item = cleanup.locator(".cleanup-item");
    expect(await item.count()).to.equal(1);
    await item.locator(".cleanup-state", { hasText: "deleted" }).waitFor();
    expect(await item.getByRole("progressbar").getAttribute("value")).to.equal("100");
    expect(await item.innerText()).to.include("DELETE_COMPLETE");
    const seen = await page.evaluate<string[]>("window.cleanupSeen");
    expect(seen[0]).to.equal("started 0");
    expect(seen.at(-1)).to.equal("completed 100");
    expect(seen.some((s) => s.startsWith("in_progress "))).to.equal(true, seen.join(", "));
    await shot("21-demo-cleanup");

    // The second selection: the single server deploys.
    await side().getByRole("button", { name: "Choose Single server" }).click();
    await chooseVpcAndDeploy("Single server");
    await waiting().getByRole("button", { name: "Allow once" }).click();
    await page.locator(".note.status", { hasText: "Done." }).last().waitFor();
    const outcome = side().getByRole("status");
    expect(await outcome.innerText()).to.include("The pipeline completed.");
    expect(await outcome.getByRole("button", { name: "Clean up" }).count()).to.equal(0);
    const deployed = side().locator('.stack[data-state="done"]');
    expect(await deployed.count()).to.equal(1);
    expect(await deployed.innerText()).to.include("CREATE_COMPLETE");
    expect(await deployed.getByRole("progressbar").getAttribute("value")).to.equal("100");
    const deploying = side().locator('.timeline .step[data-step="deploying"]');
    expect(await deploying.getAttribute("data-state")).to.equal("done");
    expect(await side().locator('.candidate[data-candidate="candidate-0"] .badge').innerText()).to.equal(
      "Selected",
    );
    expect(await page.locator(".note.error").count()).to.equal(0);
    await shot("22-demo-second-deploy");
    expect(violations).to.deep.equal([]);
  });
});
