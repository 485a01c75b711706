// The console when things go wrong, and its forms for the two structured
// interrupts, in Chromium against the harness (real A2A server and adapter,
// the fixture runtime playing console-scripts.ts): a deploy that fails, its
// rollback and cleanup, then a second choice that deploys; a run that fails
// (a failed candidate, a failed cleanup, step_failed, the outcome and "Clean
// up", which sends a cleanupOnly request); the cloud resource selector (an
// option, an id typed by hand, "None of these" with and without options); the
// deployment confirmation (adjust one parameter, then confirm; reselect); a
// pipeline pause; the demo tags. Each checks what the page shows, by role and
// accessible name, and what reached the A2A side. Screenshots go to
// test-artifacts/console/.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { bundleConsole } from "../../scripts/lib/console-bundle.js";
import { CHROMIUM, CHROMIUM_FLAGS } from "./browser.js";
import {
  CANDIDATE_FAILURE,
  CLEANUP_ERROR,
  DEPLOY_FAILURE,
  installConsoleScripts,
  OUTCOME_TEXT,
  ROLLBACK_REASON,
  STEP_FAILURE,
  type ConsoleScripts,
} from "./fixtures/console-scripts.js";
import { startHarness, type Harness } from "./harness.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const ARTIFACTS = path.join(ROOT, "test-artifacts", "console");

type Json = Record<string, unknown>;

describe("AG-UI console: failures and the structured forms (Chromium, fixture runtime)", function () {
  this.timeout(120_000);
  let h: Harness;
  let scripts: ConsoleScripts;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  const requests: string[] = [];
  const violations: string[] = [];

  before(async () => {
    // The bundle of the current console sources (the adapter reads dist/console when it starts).
    await bundleConsole(ROOT);
    mkdirSync(ARTIFACTS, { recursive: true });
    h = await startHarness({ settings: { console: true }, tap: true });
    scripts = installConsoleScripts(h.runtime);
    profile = mkdtempSync(path.join(os.tmpdir(), "chromium-profile-"));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1400, height: 900 },
    });
    page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    page.on("request", (req) => requests.push(req.url()));
    page.on("console", (msg) => {
      if (/Content Security Policy/i.test(msg.text())) violations.push(msg.text());
    });
    await page.goto(`${h.url}console`);
  });
  after(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await h?.close();
  });

  /** A screenshot tall enough for the whole conversation and pipeline panel (each scrolls on its own). */
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

  /** Sends `text` in a new thread (in pipeline mode when asked). */
  async function start(text: string, pipeline = false): Promise<void> {
    await newThread().click();
    if (pipeline) await page.getByLabel("Pipeline mode").check();
    else await page.getByLabel("Pipeline mode").uncheck();
    await page.getByLabel("Message").fill(text);
    await page.getByRole("button", { name: "Send" }).click();
  }

  /** The structured answers the adapter sent A2A (the data parts of its messages), oldest first. */
  function answersSent(kind: string): Json[] {
    const out: Json[] = [];
    for (const call of h.tap!.calls) {
      const message = call.params?.message as { parts?: Array<{ data?: Json }> } | undefined;
      for (const part of message?.parts ?? []) if (part.data?.kind === kind) out.push(part.data);
    }
    return out;
  }

  // The first: an untitled thread in the list is named "New thread" too.
  const newThread = () => page.getByRole("button", { name: "New thread" }).first();
  const side = () => page.locator(".side");
  const step = (name: string) => side().locator(`.timeline .step[data-step="${name}"]`);
  const done = () => page.locator(".note.status", { hasText: "Done." }).last();

  it("a failed deploy: the stack's reason, the rollback, the cleanup's progress, a second choice that deploys", async () => {
    await start("[[script:console-rollback]] a website", true);
    await side().getByRole("button", { name: "Choose Single server" }).click();
    // The deploy failed and was rolled back; the stack is being deleted (held at 50%).
    const cleanup = side().getByRole("region", { name: "Cleanup" });
    const deleting = cleanup.getByRole("progressbar", { name: "Cleanup of iac-demo-web" });
    await deleting.waitFor();
    const stack = side().locator('.stack[data-stack="iac-demo-web"]');
    expect(await stack.getAttribute("data-state")).to.equal("failed");
    expect(
      await side().getByRole("progressbar", { name: "iac-demo-web", exact: true }).getAttribute("value"),
    ).to.equal("100");
    expect(await stack.innerText())
      .to.include("CREATE_FAILED")
      .and.include(DEPLOY_FAILURE);
    const notices = side().getByRole("region", { name: "Notices" });
    const rollback = notices
      .getByRole("listitem")
      .filter({ hasText: "Rolled back from deploying to confirm_and_select" });
    expect(await rollback.innerText())
      .to.include(ROLLBACK_REASON)
      .and.include("Stale fields: selected_plan, deployment_result");
    expect(await step("deploying").getAttribute("data-state")).to.equal("rolledBack");
    expect(await step("deploying").innerText()).to.include("rolled back to confirm_and_select");
    expect(await deleting.getAttribute("value")).to.equal("50");
    const item = cleanup.locator('.cleanup-item[data-resource="stack-0001"]');
    expect(await item.innerText())
      .to.include("deleting")
      .and.include("DELETE_IN_PROGRESS (50%)");
    // The first choice is undone.
    expect(await side().locator(".candidate .badge").count()).to.equal(0);
    await shot("10-fixture-deploy-failed-cleanup");

    scripts.cleanupGate.open();
    await item.locator(".cleanup-state", { hasText: "deleted" }).waitFor();
    expect(await deleting.getAttribute("value")).to.equal("100");
    expect(await item.innerText()).to.include("DELETE_COMPLETE (100%)");
    // Asked again: the other candidate deploys.
    await side().getByRole("button", { name: "Choose Load-balanced pair" }).click();
    await done().waitFor();
    expect(await side().getByRole("progressbar", { name: "iac-demo-web-2" }).getAttribute("value")).to.equal(
      "100",
    );
    expect(await step("deploying").getAttribute("data-state")).to.equal("done");
    expect(await step("deploying").locator(".step-note").count()).to.equal(0);
    const outcome = side().getByRole("status");
    expect(await outcome.innerText()).to.include("The pipeline completed.");
    expect(await outcome.getByRole("button", { name: "Clean up" }).count()).to.equal(0);
    expect(await side().locator('.candidate[data-candidate="candidate-1"] .badge').innerText()).to.equal(
      "Selected",
    );
    await shot("11-fixture-second-deploy");
    const selections = h.runtime.answers.filter((a) => a.kind === "candidate_selection");
    expect(selections.map((a) => a.kind !== "permission" && a.selectedId)).to.deep.equal(["0", "1"]);
  });

  it("a run that fails: the failed candidate, the failed cleanup and step, the outcome; Clean up sends cleanupOnly", async () => {
    await start("[[script:console-failing]] a website", true);
    await page.locator(".note.error", { hasText: "A2A_EXECUTION_FAILED" }).waitFor();
    // The candidate that failed (after a restart), with why.
    const pair = side().getByRole("article", { name: "Load-balanced pair" });
    expect(await pair.getAttribute("data-state")).to.equal("failed");
    // Where it failed on the card, why on its failed step (said once).
    expect(await pair.locator(".candidate-status").innerText()).to.equal("Failed at template_generating");
    const generating = pair.locator('.step[data-step="template_generating"]');
    expect(await generating.getAttribute("data-state")).to.equal("failed");
    expect(await generating.innerText()).to.include(CANDIDATE_FAILURE);
    // The other candidate's diagram and detail.
    const single = side().getByRole("article", { name: "Single server" });
    expect(await single.locator(".diagram").innerText())
      .to.include("Architecture diagram: Single server")
      .and.include("vpc[VPC] --> vsw[VSwitch]");
    expect(await single.locator(".candidate-detail").innerText())
      .to.include("Monthly total: 180 CNY")
      .and.include("ecs.t6-c1m1.large");
    // The failed step with its reason; compaction, warning and rollback as notices.
    expect(await step("deploying").getAttribute("data-state")).to.equal("failed");
    expect(await step("deploying").locator(".step-note").innerText()).to.equal(STEP_FAILURE);
    const notices = await side().getByRole("region", { name: "Notices" }).innerText();
    expect(notices).to.include("Context compacted").and.include("48000 → 6000 tokens");
    expect(notices).to.include("Warning").and.include("The cleanup ledger could not be saved");
    expect(notices).to.include("Rolled back from deploying to confirm_and_select");
    // The stack group's instances and the tool's progress.
    expect(await side().getByRole("progressbar", { name: "iac-demo-group" }).getAttribute("value")).to.equal(
      "50",
    );
    const shanghai = side().locator('.instances tr[data-region="cn-shanghai"]');
    expect(await shanghai.getAttribute("data-state")).to.equal("failed");
    expect(await shanghai.innerText())
      .to.include("FAILED")
      .and.include("QuotaExceeded (demo)");
    const deploy = page.locator('.tool[data-tool-call-id="tool-deploy-1"]');
    expect(
      await deploy.getByRole("progressbar", { name: "Progress of ros_deploy" }).getAttribute("value"),
    ).to.equal("40");
    expect(await deploy.locator(".tool-progress").innerText()).to.include("Creating the stack group");
    // The deletion that failed, with its last error.
    const item = side()
      .getByRole("region", { name: "Cleanup" })
      .locator('.cleanup-item[data-resource="stack-0001"]');
    expect(await item.getAttribute("data-state")).to.equal("failed");
    expect(await item.innerText())
      .to.include("deletion failed")
      .and.include(`Last error: ${CLEANUP_ERROR}`);
    // How the run ended and what to do: in the panel and in the conversation.
    const outcome = side().getByRole("status");
    const said = await outcome.innerText();
    expect(said)
      .to.include("The pipeline failed.")
      .and.include(OUTCOME_TEXT)
      .and.include("1 stack(s) left behind.");
    const told = page.locator(".msg.outcome.failed");
    expect(await told.locator(".who").innerText()).to.equal("The pipeline failed.");
    expect(await told.locator(".body").innerText()).to.equal(OUTCOME_TEXT);
    await shot("12-fixture-run-failed");

    await outcome.getByRole("button", { name: "Clean up" }).click();
    await outcome.getByText("Nothing is left to clean up.").waitFor();
    expect(await item.getAttribute("data-state")).to.equal("completed");
    expect(await item.getByRole("progressbar").getAttribute("value")).to.equal("100");
    expect(await page.locator(".msg.user").last().innerText()).to.include(
      "Delete the stacks this pipeline left behind.",
    );
    // A2A got a cleanupOnly request (no model turn), on the same context.
    const last = h.runtime.turns.at(-1)!;
    expect(last.overrides.cleanupOnly).to.equal(true);
    const sent = h.tap!.calls.filter((c) => c.method === "SendStreamingMessage").at(-1)!;
    const metadata = (sent.params!.message as { metadata: { iac_code: Json } }).metadata.iac_code;
    expect(metadata.cleanupOnly).to.equal(true);
    await shot("13-fixture-cleaned-up");
  });

  it("a cloud resource selector: an option by its label, an id typed by hand, None of these", async () => {
    await start("[[script:console-selector]] which vpc?");
    let card = page.getByRole("group", { name: "Choose a cloud resource" }).last();
    await card.getByText("Which VPC should the stack use?").waitFor();
    expect(await card.innerText()).to.include("VpcId · ALIYUN::ECS::VPC · vpc DescribeVpcs cn-hangzhou");
    expect(await card.getByRole("radio").count()).to.equal(2);
    // Nothing chosen yet: the form says so and sends nothing.
    await card.getByRole("button", { name: "Use this resource" }).click();
    await card.getByRole("alert").getByText("Choose a resource or type its id.").waitFor();
    await card.getByRole("radio", { name: "staging-vpc (10.0.0.0/16)" }).check();
    await shot("14-fixture-selector");
    await card.getByRole("button", { name: "Use this resource" }).click();
    await page.locator(".msg.assistant", { hasText: "Selector: vpc-bp1demo0002." }).waitFor();
    expect(await card.locator(".answered").innerText()).to.equal("Answered: staging-vpc (10.0.0.0/16)");
    expect(answersSent("cloud_resource_selection").at(-1)).to.deep.include({
      status: "selected",
      selectorId: "vpc.vpc",
      value: "vpc-bp1demo0002",
      label: "staging-vpc (10.0.0.0/16)",
    });

    await start("[[script:console-selector]] which vpc?");
    card = page.getByRole("group", { name: "Choose a cloud resource" }).last();
    // An id that is no VPC id: the adapter refuses it, nothing is taken, the form is offered again.
    const sentBefore = answersSent("cloud_resource_selection").length;
    await card.getByLabel("Or type a VPC id").fill("subnet-12345");
    await card.getByRole("button", { name: "Use this resource" }).click();
    await page.locator(".note.error", { hasText: "RESUME_PAYLOAD_INVALID" }).waitFor();
    expect(answersSent("cloud_resource_selection")).to.have.length(sentBefore);
    card = page
      .locator(".interrupt:not([data-answered])")
      .and(page.getByRole("group", { name: "Choose a cloud resource" }));
    await card.waitFor();
    await card.getByRole("radio", { name: "demo-vpc (192.168.0.0/16)" }).check();
    // Typing an id replaces the choice.
    await card.getByLabel("Or type a VPC id").fill("vpc-bp1typed0003");
    expect(await card.getByRole("radio", { name: "demo-vpc (192.168.0.0/16)" }).isChecked()).to.equal(false);
    await card.getByRole("button", { name: "Use this resource" }).click();
    await page.locator(".msg.assistant", { hasText: "Selector: vpc-bp1typed0003." }).waitFor();
    expect(answersSent("cloud_resource_selection").at(-1)).to.deep.include({
      status: "selected",
      value: "vpc-bp1typed0003",
      label: "vpc-bp1typed0003",
    });

    await start("[[script:console-selector]] which vpc?");
    card = page.getByRole("group", { name: "Choose a cloud resource" }).last();
    await card.getByRole("button", { name: "None of these" }).click();
    await page.locator(".msg.assistant", { hasText: "Selector: cancelled." }).waitFor();
    const declined = answersSent("cloud_resource_selection").at(-1)!;
    expect(declined.status).to.equal("canceled");
    expect(declined).to.not.have.property("optionsEmpty");

    await start("[[script:console-selector]] [[empty]] which vpc?");
    card = page.getByRole("group", { name: "Choose a cloud resource" }).last();
    await card.getByText("No resource of this kind was found.").waitFor();
    expect(await card.getByRole("radio").count()).to.equal(0);
    await card.getByRole("button", { name: "None of these" }).click();
    await page.locator(".msg.assistant", { hasText: "Selector: cancelled (nothing to choose)." }).waitFor();
    expect(answersSent("cloud_resource_selection").at(-1)).to.deep.include({
      status: "canceled",
      optionsEmpty: true,
    });
  });

  it("a deployment confirmation: summary and parameters; adjust one (only it is sent), then Deploy; reselect", async () => {
    await start("[[script:console-confirm]] deploy it");
    let card = page.getByRole("group", { name: "Confirm the deployment" }).last();
    await card.getByText("Create the stack iac-demo-web in cn-hangzhou from Single server?").waitFor();
    const summary = await card.locator(".deployment-summary").innerText();
    for (const text of [
      "Candidate",
      "Single server",
      "Operation",
      "create",
      "Region",
      "cn-hangzhou",
      "Stack",
      "iac-demo-web",
      "Monthly cost",
      "180",
    ])
      expect(summary).to.include(text);
    const table = card.getByRole("table", { name: "Parameters" });
    expect(await table.getByRole("row").count()).to.equal(4);
    expect(await card.getByLabel("Zone").inputValue()).to.equal("cn-hangzhou-h");
    expect(await card.getByLabel("Instance type").isEditable()).to.equal(false);
    for (const name of ["Deploy", "Change parameters", "Choose another candidate", "Do not deploy"])
      expect(await card.getByRole("button", { name, exact: true }).isEnabled()).to.equal(true);
    expect(await card.getByRole("button", { name: "Send changes" }).isVisible()).to.equal(false);

    await card.getByRole("button", { name: "Change parameters" }).click();
    expect(await card.getByLabel("Instance type").isEditable()).to.equal(true);
    await card.getByLabel("Instance type").fill("ecs.g7.large");
    await shot("15-fixture-confirmation-adjust");
    await card.getByRole("button", { name: "Send changes" }).click();
    // Asked again with the new value; then deployed as it is.
    card = page.getByRole("group", { name: "Confirm the deployment" }).last();
    await card.getByLabel("Instance type").and(page.locator('[value="ecs.g7.large"]')).waitFor();
    await card.getByRole("button", { name: "Deploy", exact: true }).click();
    await page
      .locator(".msg.assistant", {
        hasText: 'Confirmation: adjust {"InstanceType":"ecs.g7.large"}; confirm.',
      })
      .waitFor();
    const [adjusted, confirmed] = answersSent("deployment_confirmation").slice(-2);
    expect(adjusted).to.deep.include({
      action: "adjust",
      parameter_overrides: { InstanceType: "ecs.g7.large" },
    });
    expect(confirmed).to.deep.include({ action: "confirm", parameter_overrides: {} });

    await start("[[script:console-confirm]] deploy it");
    card = page.getByRole("group", { name: "Confirm the deployment" }).last();
    await card.getByRole("button", { name: "Choose another candidate" }).click();
    await page.locator(".msg.assistant", { hasText: "Confirmation: reselect." }).waitFor();
    expect(answersSent("deployment_confirmation").at(-1)).to.deep.include({
      action: "reselect",
      parameter_overrides: {},
    });
    expect(await card.locator(".answered").innerText()).to.equal("Answered: Choose another candidate");
  });

  it("a deploy that fails after its confirmation: the answered card is not asked again; the thread takes a new message", async () => {
    await start("[[script:console-confirm-fails]] deploy it", true);
    const card = page.getByRole("group", { name: "Confirm the deployment" }).last();
    await card.getByRole("button", { name: "Deploy", exact: true }).click();
    await page.locator(".note.error", { hasText: "A2A_EXECUTION_FAILED" }).last().waitFor();
    expect(await card.locator(".answered").innerText()).to.equal("Answered: Deploy");
    expect(await page.locator(".interrupt:not([data-answered])").count()).to.equal(0);
    expect(await step("deploying").locator(".step-note").innerText()).to.equal(DEPLOY_FAILURE);
    expect(await side().getByRole("status").innerText()).to.include("The pipeline failed.");
    expect(await page.getByRole("button", { name: "Cancel" }).isDisabled()).to.equal(true);
    // The thread goes on with a new message.
    await page.getByLabel("Pipeline mode").uncheck();
    await page.getByLabel("Message").fill("what is left?");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".msg.assistant", { hasText: "Echo: what is left?" }).waitFor();
  });

  it("a pipeline pause: its prompt and Continue", async () => {
    await start("[[script:console-pause]] go on");
    const card = page.getByRole("group", { name: "Pipeline paused" }).last();
    await card.getByText("The pipeline is paused: your message could not be judged.").waitFor();
    await card.getByRole("button", { name: "Continue" }).click();
    await page.locator(".msg.assistant", { hasText: "Pause: continue." }).waitFor();
    expect(answersSent("pipeline_pause_confirmation").at(-1)).to.deep.include({ selectedId: "continue" });
  });

  it("lists the demo tags; one fills the message box in pipeline mode; in Chinese too", async () => {
    await newThread().click();
    await page.getByLabel("Pipeline mode").uncheck();
    const tags = side().locator(".demo-tags");
    expect(await tags.getByRole("heading", { name: "Try a failure" }).count()).to.equal(1);
    const names = await tags.getByRole("button").allInnerTexts();
    expect(names).to.deep.equal([
      "[demo:deploy-fails]",
      "[demo:cleanup-fails]",
      "[demo:candidate-fails]",
      "[demo:slow-deploy]",
      "[demo:long-context]",
      "[demo:compaction-fails]",
    ]);
    expect(await tags.getByRole("listitem").first().innerText()).to.include(
      "rollback, cleanup, choose again",
    );
    await tags.getByRole("button", { name: "[demo:cleanup-fails]" }).click();
    expect(await page.getByLabel("Message").inputValue()).to.equal("I need a website [demo:cleanup-fails]");
    expect(await page.getByLabel("Pipeline mode").isChecked()).to.equal(true);
    await page.getByLabel("Language").selectOption("zh");
    await tags.getByRole("heading", { name: "试试失败场景" }).waitFor();
    expect(await tags.getByRole("listitem").first().innerText()).to.include("回滚");
    await tags.getByRole("button", { name: "[demo:long-context]" }).click();
    expect(await page.getByLabel("消息").inputValue()).to.equal("我需要一个网站 [demo:long-context]");
    await page.getByLabel("消息").fill("");
    // The failed run's thread, in Chinese: the panel's own texts are translated, the run's are kept.
    await page.locator(".thread-list .thread", { hasText: "[[script:console-failing]]" }).click();
    const outcome = side().getByRole("status");
    expect(await outcome.innerText())
      .to.include("流水线失败。")
      .and.include(OUTCOME_TEXT);
    expect(await outcome.getByRole("button", { name: "清理" }).count()).to.equal(0);
    const cleanup = side().getByRole("region", { name: "清理" });
    expect(await cleanup.getByRole("progressbar", { name: "清理 iac-demo-web" }).count()).to.equal(1);
    expect(await cleanup.innerText()).to.include("已删除");
    expect(await step("deploying").innerText()).to.include("失败");
    await shot("16-fixture-zh");
    await page.getByLabel("语言").selectOption("en");

    const origin = new URL(h.url).origin;
    expect(requests.filter((url) => new URL(url).origin !== origin)).to.deep.equal([]);
    expect(violations).to.deep.equal([]);
  });
});
