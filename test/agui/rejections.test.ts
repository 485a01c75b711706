// Issue 11: a refused RunAgentInput names the field and the reason, in the
// request's language on the wire and in English in the log (with the ids the
// client sent); a workspace that does not exist is refused, never created.
import { expect } from "chai";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { LANGUAGES } from "../../src/i18n/index.js";
import { post, runInput, startHarness, type Harness } from "./harness.js";

interface LogEntry {
  obj: Record<string, unknown>;
  msg?: string;
}

describe("agui rejections name the field and the reason", function () {
  this.timeout(20_000);
  let h: Harness;
  const logs: LogEntry[] = [];
  const record = (obj: unknown, msg?: string) => logs.push({ obj: obj as Record<string, unknown>, msg });

  before(async () => {
    h = await startHarness({ logger: { info: record, warn: record, error: record } });
  });
  after(async () => {
    await h?.close();
  });

  const withoutProps = (runId: string) => {
    const body = runInput(h, { threadId: `t-${runId}`, runId, text: "hello" });
    delete body.forwardedProps;
    return body;
  };
  const withIac = (runId: string, iac: Record<string, unknown>, drop?: string) => {
    const body = runInput(h, { threadId: `t-${runId}`, runId, text: "hello", iac });
    if (drop) delete (body.forwardedProps as { iacCode: Record<string, unknown> }).iacCode[drop];
    return body;
  };

  it("each refused case gets 400 INVALID_INPUT with its own message and one English log line", async () => {
    const file = path.join(h.workspace, "a-file.txt");
    writeFileSync(file, "not a directory");
    const missing = path.join(h.workspace, "not-there");
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [
        "outside",
        withIac("outside", { cwd: "/etc" }),
        "forwardedProps.iacCode.cwd is outside the allowed workspace roots (the server's --allowed-cwds setting).",
      ],
      [
        "relative",
        withIac("relative", { cwd: "projects/demo" }),
        "forwardedProps.iacCode.cwd must be an absolute path.",
      ],
      [
        "missing-dir",
        withIac("missing-dir", { cwd: missing }),
        "forwardedProps.iacCode.cwd does not exist: create the directory first.",
      ],
      ["file", withIac("file", { cwd: file }), "forwardedProps.iacCode.cwd is not a directory."],
      ["no-cwd", withIac("no-cwd", {}, "cwd"), "forwardedProps.iacCode.cwd is required."],
      [
        "no-version",
        withIac("no-version", {}, "schemaVersion"),
        "forwardedProps.iacCode.schemaVersion is required.",
      ],
      [
        "version-2",
        withIac("version-2", { schemaVersion: 2 }),
        "forwardedProps.iacCode.schemaVersion must be 1.",
      ],
      ["no-props", withoutProps("no-props"), "forwardedProps is required."],
      [
        "run-mode",
        withIac("run-mode", { runMode: "batch" }),
        'forwardedProps.iacCode.runMode must be one of: "normal", "pipeline", null.',
      ],
      [
        "long-invocation",
        withIac("long-invocation", { rosInvocationId: "x".repeat(257) }),
        "forwardedProps.iacCode.rosInvocationId must be at most 256 characters long.",
      ],
      [
        "model-type",
        withIac("model-type", { model: 7 }),
        "forwardedProps.iacCode.model must be of type string, null.",
      ],
      [
        "empty-text",
        { ...runInput(h, { threadId: "t-empty-text", runId: "empty-text", text: "   " }) },
        "The last user message is empty: send some text or an image.",
      ],
    ];
    for (const [runId, body, message] of cases) {
      logs.length = 0;
      const res = await post(h.url, body);
      expect(res.status, runId).to.equal(400);
      expect(res.json?.error, runId).to.deep.equal({ code: "INVALID_INPUT", message });
      const refused = logs.filter((l) => l.msg === "AG-UI request refused");
      expect(refused, runId).to.have.length(1);
      expect(refused[0].obj, runId).to.include({
        runId,
        code: "INVALID_INPUT",
        reason: message,
        status: 400,
      });
    }
    // Refused, never created.
    expect(existsSync(missing)).to.equal(false);
  });

  it("the message is localised in all seven languages (preferredLanguage), the log stays English", async () => {
    const texts = new Set<string>();
    for (const lang of LANGUAGES) {
      logs.length = 0;
      const res = await post(h.url, withIac(`lang-${lang}`, { cwd: "relative", preferredLanguage: lang }));
      expect(res.status).to.equal(400);
      const message = res.json!.error.message;
      expect(message, lang).to.include("forwardedProps.iacCode.cwd");
      texts.add(message);
      expect(logs.find((l) => l.msg === "AG-UI request refused")?.obj.reason).to.equal(
        "forwardedProps.iacCode.cwd must be an absolute path.",
      );
    }
    expect(texts.size).to.equal(LANGUAGES.length);
    const ja = await post(h.url, withoutProps("accept-ja"), { "Accept-Language": "ja" });
    expect(ja.json?.error.message).to.equal("forwardedProps は必須です。");
  });
});
