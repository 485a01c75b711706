// The console renders the model's Markdown (issue 32): assistant text and
// reasoning become headings, lists, tables, highlighted code blocks and links
// (http/https only, new tab, rel=noopener), also while the deltas stream in;
// hostile Markdown and HTML (script, onerror, javascript: links, iframes)
// never runs and never becomes markup: it is shown as the text it is. In
// Chromium against the in-process adapter and A2A server of the harness, the
// fixture runtime sending the text a test scripts ([[script:<name>]]).
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { bundleConsole } from "../../scripts/lib/console-bundle.js";
import type { RuntimeEvent } from "../../src/runtime/seam.js";
import { CHROMIUM, CHROMIUM_FLAGS } from "./browser.js";
import { startHarness, type Harness } from "./harness.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

/** What the tests read of a page element (the Node tsconfig has no DOM types). */
interface PageElement {
  textContent: string | null;
  getAttribute(name: string): string | null;
  getAttributeNames(): string[];
}
const ARTIFACTS = path.join(ROOT, "test-artifacts", "console");

/** A text split into deltas of `size` characters (cutting through every Markdown construct). */
function* deltas(messageId: string, text: string, size = 7): Iterable<RuntimeEvent> {
  for (let i = 0; i < text.length; i += size)
    yield { type: "text_delta", messageId, text: text.slice(i, i + size) };
}

const FIRST_HALF = [
  "## Plan for the **VPC**",
  "",
  "Here is *what* I will do, see [the ROS docs](https://www.alibabacloud.com/help/en/ros) and ~~nothing else~~:",
  "",
  "1. create the `vpc.yaml` template",
  "2. deploy it",
  "",
  "- [x] checked",
  "- [ ] unchecked",
  "",
  "| resource | count |",
  "|:--|--:|",
  "| VPC | 1 |",
].join("\n");

const SECOND_HALF = [
  "",
  "| VSwitch | 2 |",
  "",
  "```yaml",
  "Resources:",
  "  Vpc:",
  "    Type: ALIYUN::ECS::VPC",
  "```",
  "",
  "> a quote",
  "",
  "Plain link: https://example.com/path?q=1 and a mail <mailto:ops@example.com>.",
  "A second line of the same paragraph.",
].join("\n");

const HOSTILE = [
  "# Title <script>window.__pwned = 'heading'</script>",
  "",
  "<script>window.__pwned = 'block script'</script>",
  "",
  '<img src="x" onerror="window.__pwned = \'img onerror\'">',
  "",
  "<iframe src=\"javascript:window.__pwned = 'iframe'\"></iframe>",
  "",
  "[click me](javascript:window.__pwned='js-link') and [data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
  "",
  "[spaced](  JaVaScRiPt:window.__pwned='cased'  ) <a href=\"javascript:window.__pwned='a-tag'\">tag</a>",
  "",
  "![pic](https://example.com/tracker.png) ![bad](javascript:window.__pwned='img-md')",
  "",
  '<div onclick="window.__pwned=\'div\'" style="position:fixed;inset:0">overlay</div>',
  "",
  "`<b>code</b>` and <svg onload=\"window.__pwned='svg'\"></svg> &lt;kept&gt;",
].join("\n");

describe("AG-UI console: Markdown (Chromium)", function () {
  this.timeout(120_000);
  let h: Harness;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];
  let release!: () => void;
  const halfway = new Promise<void>((resolve) => (release = resolve));

  before(async () => {
    await bundleConsole(ROOT);
    h = await startHarness({ settings: { console: true } });
    h.runtime.scripts.set("markdown", async function* () {
      yield { type: "message_start", messageId: "md-1" };
      yield { type: "thinking_delta", messageId: "md-1", text: "Thinking in **bold** with a " };
      yield { type: "thinking_delta", messageId: "md-1", text: "list:\n\n- a\n- b\n" };
      yield* deltas("md-1", FIRST_HALF);
      await halfway;
      yield* deltas("md-1", SECOND_HALF);
      yield {
        type: "message_end",
        messageId: "md-1",
        stopReason: "end_turn",
        text: FIRST_HALF + SECOND_HALF,
      };
    });
    h.runtime.scripts.set("hostile", function* () {
      yield { type: "message_start", messageId: "bad-1" };
      yield {
        type: "thinking_delta",
        messageId: "bad-1",
        text: "<img src=x onerror=\"window.__pwned='reasoning'\"> [r](javascript:window.__pwned='r-link')",
      };
      yield* deltas("bad-1", HOSTILE, 5);
      yield { type: "message_end", messageId: "bad-1", stopReason: "end_turn", text: HOSTILE };
    });
    profile = mkdtempSync(path.join(os.tmpdir(), "chromium-profile-"));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1300, height: 900 },
    });
    page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
  });
  after(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await h?.close();
  });

  it("renders headings, emphasis, lists, tables, highlighted code and safe links, while it streams", async () => {
    await page.goto(`${h.url}console`);
    await page.getByLabel("Message").fill("[[script:markdown]]");
    await page.getByRole("button", { name: "Send" }).click();
    const msg = page.locator(".msg.assistant").last();
    const body = msg.locator(".body");

    // Mid-stream (the turn waits halfway): what arrived is already Markdown.
    await body.locator("table tbody tr").first().waitFor();
    expect(await body.locator("h2").innerText()).to.equal("Plan for the VPC");
    expect(await body.locator("h2 strong").innerText()).to.equal("VPC");
    expect(await body.locator("tbody tr").count()).to.equal(1);
    expect(await body.locator("pre").count()).to.equal(0);
    expect(await page.locator(".note.status", { hasText: "Done." }).count()).to.equal(0);
    release();

    await page.locator(".note.status", { hasText: "Done." }).waitFor();
    expect(await body.locator("em").innerText()).to.equal("what");
    expect(await body.locator("del").innerText()).to.equal("nothing else");
    expect(await body.locator("ol > li").allInnerTexts()).to.deep.equal([
      "create the vpc.yaml template",
      "deploy it",
    ]);
    expect(await body.locator("ol code").innerText()).to.equal("vpc.yaml");
    const boxes = body.locator('ul li.task input[type="checkbox"]');
    expect(await boxes.count()).to.equal(2);
    expect(await boxes.first().isChecked()).to.equal(true);
    expect(await boxes.first().isDisabled()).to.equal(true);
    expect(await boxes.last().isChecked()).to.equal(false);
    expect(await body.locator("thead th").allInnerTexts()).to.deep.equal(["resource", "count"]);
    expect(await body.locator("tbody tr").count()).to.equal(2);
    expect(await body.locator("tbody tr").last().locator("td").allInnerTexts()).to.deep.equal([
      "VSwitch",
      "2",
    ]);
    expect(await body.locator("tbody td").last().getAttribute("class")).to.equal("align-right");
    // The fenced YAML is highlighted like a workspace file.
    const code = body.locator("pre.code.lang-yaml");
    expect(await code.innerText()).to.include("Type: ALIYUN::ECS::VPC");
    expect(await code.locator(".tok-key", { hasText: "Type" }).count()).to.equal(1);
    expect(await body.locator("blockquote").innerText()).to.equal("a quote");

    const links = await body
      .locator("a")
      .evaluateAll((as: PageElement[]) =>
        as.map((a) => [
          a.textContent,
          a.getAttribute("href"),
          a.getAttribute("target"),
          a.getAttribute("rel"),
        ]),
      );
    expect(links).to.deep.equal([
      ["the ROS docs", "https://www.alibabacloud.com/help/en/ros", "_blank", "noopener noreferrer"],
      ["https://example.com/path?q=1", "https://example.com/path?q=1", "_blank", "noopener noreferrer"],
    ]);
    // mailto: is not http(s): its words stay, as text.
    expect(await body.innerText()).to.include("ops@example.com");
    // A single newline is a line break (as models write for chat).
    const last = body.locator("p", { hasText: "A second line" });
    expect(await last.locator("br").count()).to.equal(1);
    expect(await last.innerText()).to.match(/ops@example\.com\.\nA second line/);

    // Reasoning is Markdown too.
    const reasoning = page.locator(".reasoning").last();
    await reasoning.locator("summary").click();
    expect(await reasoning.locator(".body strong").innerText()).to.equal("bold");
    expect(await reasoning.locator(".body li").allInnerTexts()).to.deep.equal(["a", "b"]);
    await page.screenshot({ path: path.join(ARTIFACTS, "markdown.png"), fullPage: true });
  });

  it("never runs or builds markup from hostile Markdown and HTML: it shows it as text", async () => {
    await page.getByRole("button", { name: "New thread" }).click();
    await page.getByLabel("Message").fill("[[script:hostile]]");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".note.status", { hasText: "Done." }).waitFor();
    const msg = page.locator(".msg.assistant").last();
    const reasoning = page.locator(".reasoning").last();
    await reasoning.locator("summary").click();

    // Nothing ran.
    expect(await page.evaluate("window.__pwned")).to.equal(undefined);
    expect(dialogs).to.deep.equal([]);
    // No element the model's HTML names exists in the transcript, no event handler attribute anywhere.
    for (const scope of [msg, reasoning]) {
      expect(
        await scope.locator("script, img, iframe, svg, div[onclick], object, embed, style").count(),
      ).to.equal(0);
      const handlers = await scope
        .locator("*")
        .evaluateAll((els: PageElement[]) =>
          els.flatMap((el) => el.getAttributeNames().filter((n) => /^on|^style$|^src$/i.test(n))),
        );
      expect(handlers).to.deep.equal([]);
    }
    // Links: only the http(s) one; javascript:, data: and the <a> tag are words.
    const hrefs = await page
      .locator(".transcript a")
      .evaluateAll((as: PageElement[]) => as.map((a) => a.getAttribute("href")));
    expect(hrefs).to.deep.equal(["https://example.com/tracker.png"]);
    const text = await msg.locator(".body").innerText();
    for (const shown of [
      "<script>window.__pwned = 'heading'</script>",
      "<script>window.__pwned = 'block script'</script>",
      '<img src="x" onerror="window.__pwned = \'img onerror\'">',
      "<iframe src=\"javascript:window.__pwned = 'iframe'\"></iframe>",
      "click me",
      "<a href=\"javascript:window.__pwned='a-tag'\">",
      "<b>code</b>",
      "<kept>",
    ]) {
      expect(text).to.include(shown);
    }
    expect(await msg.locator("h1").innerText()).to.include("Title <script>");
    expect(await reasoning.locator(".body").innerText()).to.include("<img src=x onerror=");
    // Clicking the words of a javascript: link goes nowhere.
    await msg.getByText("click me").click();
    expect(await page.evaluate("window.__pwned")).to.equal(undefined);
    expect(page.url()).to.equal(`${h.url}console`);
    await page.screenshot({ path: path.join(ARTIFACTS, "markdown-hostile.png"), fullPage: true });
  });
});
