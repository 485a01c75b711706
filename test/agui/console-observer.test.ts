// The console and the observer extension against the real demo (`iac-code
// agui`, nothing configured: the managed A2A server plays the bundled demo
// script), in Chromium: [demo:slow-deploy] sent; the page reloaded while the
// pipeline waits for the candidate selection: the thread opened again from the
// list attaches as an observer, and the conversation (MESSAGES_SNAPSHOT), the
// pipeline panel (ACTIVITY_SNAPSHOT) and the question come back; the selection
// answered from the restored panel; then, while the stack group deploys, a
// second page opens the thread and follows the run to its end, showing the
// deployment and the outcome the first page shows.
import { expect } from "chai";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { bundleConsole } from "../../scripts/lib/console-bundle.js";
import { cleanEnv, removeDir, startCli, tempDir, type CliChild } from "../e2e/helpers.js";
import { CHROMIUM, CHROMIUM_FLAGS } from "./browser.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const REQUEST = "I need a website [demo:slow-deploy]";

describe("AG-UI console: reload and a second page follow a [demo:slow-deploy] pipeline (observer, Chromium)", function () {
  this.timeout(300_000);
  let dir: string;
  let cli: CliChild;
  let browser: BrowserContext;
  let page: Page;

  before(async () => {
    await bundleConsole(ROOT);
    dir = tempDir("iac-console-observe-");
    const workspace = path.join(dir, "workspace");
    mkdirSync(workspace, { recursive: true });
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
  });
  after(async () => {
    await browser?.close();
    await cli?.stop();
    if (dir) removeDir(dir);
  });

  /** The first interrupt card of `p` not answered yet. */
  const waiting = (p: Page) => p.locator(".interrupt:not([data-answered])").first();

  /** Answers permissions (Allow once) until a card of another kind waits, or `until` shows. */
  async function allowUntil(p: Page, until: () => Promise<boolean>): Promise<void> {
    while (!(await until())) {
      const next = waiting(p);
      if (!(await next.isVisible())) {
        await p.waitForTimeout(100);
        continue;
      }
      const kind = (await next.getAttribute("class"))!;
      if (!kind.includes("permission")) return;
      const card = p.locator(
        `.interrupt[data-interrupt-id="${await next.getAttribute("data-interrupt-id")}"]`,
      );
      await card.getByRole("button", { name: "Allow once" }).click();
      await card.locator(".answered").waitFor();
    }
  }

  /** The steps of the pipeline panel, `<name>:<state>` each. */
  const attributes = async (p: Page, selector: string, names: string[]): Promise<string[]> => {
    const out: string[] = [];
    for (const el of await p.locator(selector).all())
      out.push((await Promise.all(names.map((n) => el.getAttribute(n)))).join(":"));
    return out;
  };
  const steps = (p: Page) => attributes(p, ".timeline .step", ["data-step", "data-state"]);

  const openThread = async (p: Page) => {
    await p.goto(`${cli.url}console`);
    await p.locator(".thread-list").getByRole("button", { name: REQUEST }).click();
  };

  it("reload while waiting: conversation, panel and question back; a second page follows the deploy to its end", async () => {
    await page.goto(`${cli.url}console`);
    await page.locator(".side").getByRole("button", { name: "[demo:slow-deploy]" }).click();
    await page.getByRole("button", { name: "Send" }).click();
    const question = async () => ((await waiting(page).getAttribute("class")) ?? "").includes("question");
    await allowUntil(page, () => question().catch(() => false));
    expect(await question()).to.equal(true);
    const stepsBefore = await steps(page);
    const candidatesBefore = await page.locator(".candidate").count();
    expect(stepsBefore.length).to.be.greaterThan(2);
    expect(candidatesBefore).to.be.greaterThan(1);
    const answers = await page.locator(".msg.assistant").count();

    // Reloaded: the thread from the list attaches to its waiting execution.
    await page.reload();
    await page.locator(".thread-list").getByRole("button", { name: REQUEST }).click();
    await page.locator(".msg.user", { hasText: REQUEST }).waitFor();
    await waiting(page).waitFor();
    expect(await question()).to.equal(true);
    expect(await page.locator(".msg.assistant").count()).to.be.at.least(answers);
    expect(await page.locator(".note[data-i18n='earlier']").count()).to.equal(0);
    const stepsAfter = await steps(page);
    expect(stepsAfter.map((s) => s.split(":")[0])).to.deep.equal(stepsBefore.map((s) => s.split(":")[0]));
    expect(stepsAfter.filter((s) => s.endsWith(":done")).length).to.be.greaterThan(0);
    expect(await page.locator(".candidate").count()).to.equal(candidatesBefore);

    // The selection from the restored panel, then the deployment confirmation, up to the deploy.
    await page
      .locator(".candidate")
      .getByRole("button", { name: /^Choose/ })
      .first()
      .click();
    const confirmation = page.getByRole("group", { name: "Confirm the deployment" }).and(waiting(page));
    await confirmation.waitFor();
    await confirmation.getByRole("button", { name: "Deploy", exact: true }).click();
    const deploying = (p: Page) => p.locator(".stacks-wrap .stack.group").first().isVisible();
    await allowUntil(page, () => deploying(page));
    expect(await deploying(page)).to.equal(true);

    // A second page opens the thread while the stack group deploys and follows the run.
    const second = await browser.newPage();
    second.setDefaultTimeout(90_000);
    await openThread(second);
    await second.locator(".msg.user", { hasText: REQUEST }).waitFor();
    await second.locator(".stacks-wrap .stack.group").first().waitFor();
    // Both pages see the run end the same way.
    const ended = (p: Page) =>
      p.locator(".note[data-i18n='finished'], .note[data-i18n='waitingAnswer'], .note.error").last();
    await ended(page).waitFor();
    await ended(second).waitFor();
    expect(await ended(second).getAttribute("data-i18n")).to.equal(
      await ended(page).getAttribute("data-i18n"),
    );
    expect(await second.locator(".note[data-i18n='observing']").count()).to.equal(0);
    const groups = (p: Page) => attributes(p, ".stacks-wrap .stack.group", ["data-stack-group"]);
    expect(await groups(second)).to.deep.equal(await groups(page));
    await second.close();
  });
});
