// Issue 11: logs a person can follow. --log-format pretty|json (config key
// log-format, env IACCODE_A2A_LOG_FORMAT / IAC_CODE_AGUI_LOG_FORMAT): JSON lines,
// or one readable line per entry; a bad value is refused naming where it came from.
import { expect } from "chai";
import { Writable } from "node:stream";
import { resolveSettings as resolveAguiSettings } from "../../src/agui/config.js";
import { resolveSettings } from "../../src/a2a/config/server-settings.js";
import { createLogger, prettyLine } from "../../src/server/logger.js";

function capture(): { sink: Writable; text: () => string } {
  let text = "";
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { sink, text: () => text };
}

describe("log format", () => {
  it("pretty: time, level, message and key=value fields on one line, secrets still redacted", async () => {
    const { sink, text } = capture();
    const logger = createLogger({ destination: sink, format: "pretty" });
    logger.info(
      { taskId: "task-1", durationMs: 12, outcome: "completed", token: "sk-secret-0123456789" },
      "turn ended",
    );
    await new Promise((r) => setImmediate(r));
    expect(text()).to.match(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}turn ended taskId=task-1 durationMs=12 outcome=completed token=\[REDACTED\]\n$/,
    );
  });

  it("json: one JSON object per line", async () => {
    const { sink, text } = capture();
    const logger = createLogger({ destination: sink, format: "json" });
    logger.warn({ threadId: "t" }, "run ended");
    await new Promise((r) => setImmediate(r));
    const line = JSON.parse(text()) as Record<string, unknown>;
    expect(line).to.include({ level: 40, msg: "run ended", threadId: "t" });
  });

  it("prettyLine quotes values with spaces and shows an error's message", () => {
    const line = prettyLine(
      JSON.stringify({
        level: 50,
        time: 0,
        msg: "turn failed",
        detail: "HTTP 401: bad key",
        err: { type: "Error", message: "boom", stack: "…" },
      }),
    );
    expect(line).to.equal('00:00:00.000 ERROR turn failed detail="HTTP 401: bad key" err="boom"\n');
  });

  it("A2A: command line beats file beats IACCODE_A2A_LOG_FORMAT; a bad value names its source", () => {
    expect(resolveSettings({}, {}, { IACCODE_A2A_LOG_FORMAT: "json" }).logFormat).to.equal("json");
    expect(
      resolveSettings({ "log-format": "pretty" }, {}, { IACCODE_A2A_LOG_FORMAT: "json" }).logFormat,
    ).to.equal("pretty");
    expect(resolveSettings({ "log-format": "pretty" }, { "log-format": "json" }, {}).logFormat).to.equal(
      "json",
    );
    expect(resolveSettings({}, {}, {}).logFormat).to.equal(undefined);
    expect(() => resolveSettings({}, { "log-format": "xml" }, {})).to.throw(
      "Invalid --log-format 'xml': expected one of pretty, json.",
    );
    expect(() => resolveSettings({}, {}, { IACCODE_A2A_LOG_FORMAT: "yaml" })).to.throw(
      /IACCODE_A2A_LOG_FORMAT/,
    );
  });

  it("AG-UI: --log-format, then IAC_CODE_AGUI_LOG_FORMAT", () => {
    expect(resolveAguiSettings({}, { IAC_CODE_AGUI_LOG_FORMAT: "pretty" }).logFormat).to.equal("pretty");
    expect(
      resolveAguiSettings({ logFormat: "json" }, { IAC_CODE_AGUI_LOG_FORMAT: "pretty" }).logFormat,
    ).to.equal("json");
    expect(() => resolveAguiSettings({}, { IAC_CODE_AGUI_LOG_FORMAT: "loud" })).to.throw(
      /IAC_CODE_AGUI_LOG_FORMAT/,
    );
  });
});
