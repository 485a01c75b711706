// The settings tables are the one source of the flags, config keys and
// environment variables of `a2a`, `agui` and `serve`: the README lists them
// exactly as `--help` shows them, the config schemas have every key, and one
// value reaches the settings the same way from each of the three sources.
import { expect } from "chai";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AGUI_SETTINGS } from "../../src/agui/settings.js";
import { resolveSettings as resolveAguiSettings } from "../../src/agui/config.js";
import { settingsFromCli } from "../../src/cli/a2a-run.js";
import { buildProgram } from "../../src/cli/program.js";
import { A2A_SETTINGS } from "../../src/a2a/config/settings-table.js";
import { envOf, type SettingsTable } from "../../src/server/settings.js";
import { settingsTables, TABLE_HEADER } from "../../scripts/settings-tables.js";
import { cleanup, makeTempDir } from "../a2a/helpers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The Markdown table under `### \`heading\`` in the README, as trimmed cells. */
function readmeTable(readme: string, heading: string): string[][] {
  const start = readme.indexOf(`### \`${heading}\``);
  expect(start, `README section ${heading}`).to.be.greaterThan(-1);
  const lines = readme.slice(start).split("\n").slice(1);
  const table = lines.slice(lines.findIndex((l) => l.startsWith("|")));
  const rows = table.slice(
    0,
    table.findIndex((l) => !l.startsWith("|")),
  );
  return rows
    .map((line) =>
      line
        .slice(1, -1)
        .split(" | ")
        .map((cell) => cell.trim()),
    )
    .filter((cells) => !cells.every((c) => /^-+$/.test(c)));
}

describe("settings tables", () => {
  it("the README lists every flag, config key and environment variable exactly as --help has them", () => {
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    for (const [heading, expected] of Object.entries(settingsTables())) {
      const [header, ...rows] = readmeTable(readme, heading);
      expect(header).to.deep.equal(TABLE_HEADER);
      // The description may put words in backticks; the text is --help's.
      const actual = rows.map(([flag, key, env, what]) => [flag, key, env, what.replace(/`/g, "")]);
      const wanted = expected.map(([flag, key, env, what]) => [flag, key, env, what.replace(/`/g, "")]);
      expect(actual, `${heading} (npx tsx scripts/settings-tables.ts prints the rows)`).to.deep.equal(wanted);
    }
  });

  it("every key is a property of the config schema, with the table's kind", () => {
    for (const [table, schemaFile] of [
      [A2A_SETTINGS, "schemas/config/a2a-server.json"],
      [AGUI_SETTINGS, "schemas/config/agui-server.json"],
    ] as Array<[SettingsTable, string]>) {
      const schema = JSON.parse(readFileSync(path.join(ROOT, schemaFile), "utf8")) as {
        properties: Record<string, { type?: string; anyOf?: unknown[] }>;
      };
      for (const setting of table.settings.filter((s) => !s.noFileKey)) {
        const property = schema.properties[setting.key];
        expect(property, `${setting.key} in ${schemaFile}`).to.not.equal(undefined);
        const type = property.type ?? "list";
        expect(setting.kind === "list" ? "array" : setting.kind, setting.key).to.equal(
          type === "list" ? "array" : type,
        );
      }
    }
  });

  it("has one spelling per setting: no flag, key or variable used twice", () => {
    for (const table of [A2A_SETTINGS, AGUI_SETTINGS]) {
      const names = table.settings.flatMap((s) => [
        `flag ${s.flag ?? s.key}`,
        `env ${envOf(table, s)}`,
        ...(s.aliases?.flags ?? []).map((f) => `flag ${f}`),
        ...(s.aliases?.env ?? []).map((e) => `env ${e}`),
      ]);
      expect(names.length).to.equal(new Set(names).size);
    }
    // Help texts are Markdown-safe (they go into the README tables as they are).
    const program = buildProgram();
    for (const name of ["a2a", "agui", "serve"]) {
      const cmd = program.commands.find((c) => c.name() === name)!;
      for (const option of cmd.options) expect(option.description, option.long).to.not.match(/[<>|]/);
    }
  });

  describe("one value, three sources (command line > file > environment)", () => {
    let dir: string;
    beforeEach(() => {
      dir = makeTempDir();
    });
    afterEach(() => cleanup(dir));

    it("a2a: a flag, a key in a2a-server.yml or IACCODE_A2A_*; the documented old names still work", () => {
      const file = path.join(dir, "a2a.yml");
      writeFileSync(file, "idle_context_seconds: 20\nallowed-cwds: [/srv/a]\n");
      const env = {
        IACCODE_A2A_IDLE_CONTEXT_SECONDS: "30",
        IACCODE_A2A_API_KEY: "k",
        IACCODE_A2A_REQUIRED_EXTENSIONS: "urn:a, urn:b",
        IACCODE_A2A_ALLOWED_CWDS: ["/x", "/y"].join(path.delimiter),
        IACCODE_A2A_CONFIG: file,
      };
      const fromEnv = settingsFromCli({}, { ...env, IACCODE_A2A_CONFIG: "" });
      expect(fromEnv).to.include({ idleContextSeconds: 30, apiKey: "k" });
      expect(fromEnv.requiredExtensions).to.deep.equal(["urn:a", "urn:b"]);
      expect(fromEnv.allowedCwds).to.deep.equal(["/x", "/y"]);
      const fromFile = settingsFromCli({}, env);
      expect(fromFile).to.include({ idleContextSeconds: 20 });
      expect(fromFile.allowedCwds).to.deep.equal(["/srv/a"]);
      const fromCli = settingsFromCli({ idleContextSeconds: "5", allowedCwds: ["/c"], debug: true }, env);
      expect(fromCli).to.include({ idleContextSeconds: 5, debug: true });
      expect(fromCli.allowedCwds).to.deep.equal(["/c"]);
      expect(settingsFromCli({ provider: "scripted", script: "/s.yaml", mode: "pipeline" }, {})).to.include({
        provider: "scripted",
        script: "/s.yaml",
        mode: "pipeline",
      });
      expect(settingsFromCli({ textMimeTypes: ["Text/X-Foo"] }, {}).textMimeTypes).to.deep.equal([
        "text/x-foo",
      ]);
    });

    it("agui / serve: a flag, a key in agui-server.yml or IAC_CODE_AGUI_*; --log-stdout and log-stdout still work", () => {
      const file = path.join(dir, "agui.yml");
      writeFileSync(file, "interrupt_ttl: 60\nlog-stdout: true\n");
      const env = { IAC_CODE_AGUI_INTERRUPT_TTL: "90", IAC_CODE_AGUI_AUTH_TOKEN: "env-tok" };
      expect(resolveAguiSettings({}, env)).to.include({
        interruptTtl: 90,
        authToken: "env-tok",
        logStdout: false,
      });
      expect(resolveAguiSettings({ config: file }, env)).to.include({ interruptTtl: 60, logStdout: true });
      expect(resolveAguiSettings({}, { ...env, IAC_CODE_AGUI_CONFIG: file })).to.include({
        interruptTtl: 60,
      });
      expect(resolveAguiSettings({ config: file, interruptTtl: "30", logStdout: false }, env)).to.include({
        interruptTtl: 30,
        logStdout: false,
      });
      expect(resolveAguiSettings({ logToStdout: true }, {})).to.include({ logStdout: true });
      expect(resolveAguiSettings({}, { IAC_CODE_AGUI_LOG_TO_STDOUT: "yes" })).to.include({ logStdout: true });
      // serve always manages its A2A server; the managed server's own config file is a setting of both.
      expect(
        resolveAguiSettings(
          { a2aConfig: "/etc/a2a.yml" },
          { IAC_CODE_AGUI_A2A_URL: "http://127.0.0.1:1" },
          "serve",
        ),
      ).to.include({ a2aUrl: "", a2aConfig: "/etc/a2a.yml" });
      expect(() =>
        resolveAguiSettings({ a2aUrl: "http://127.0.0.1:1", a2aConfig: "/etc/a2a.yml" }, {}, "agui"),
      ).to.throw(/a2a-config configures the managed A2A server/);
    });

    it("a bad value names where it came from: the flag, the variable or the file's line", () => {
      expect(() => resolveAguiSettings({}, { IAC_CODE_AGUI_PORT: "abc" })).to.throw(
        "Invalid IAC_CODE_AGUI_PORT 'abc': expected an integer.",
      );
      expect(() => resolveAguiSettings({ port: "70000" }, {})).to.throw(
        "Invalid --port 70000: must be <= 65535",
      );
      expect(() => resolveAguiSettings({}, { IAC_CODE_AGUI_IDLE_SHUTDOWN: "-1" })).to.throw(
        "Invalid IAC_CODE_AGUI_IDLE_SHUTDOWN -1: must be >= 0",
      );
      expect(() => settingsFromCli({}, { IACCODE_A2A_SYNC_EVERY_COMMIT: "maybe" })).to.throw(
        "Invalid IACCODE_A2A_SYNC_EVERY_COMMIT 'maybe': expected true or false.",
      );
      expect(() => settingsFromCli({ mode: "fast" }, {})).to.throw(
        "Invalid --mode 'fast': expected one of normal, pipeline.",
      );
      expect(() => settingsFromCli({}, { IACCODE_A2A_TRANSPORT: "carrier-pigeon" })).to.throw(
        /^Invalid IACCODE_A2A_TRANSPORT 'carrier-pigeon': Unsupported transport/,
      );
      const file = path.join(dir, "bad.yml");
      writeFileSync(file, "host: 127.0.0.1\nport: abc\n");
      expect(() => resolveAguiSettings({ config: file }, {})).to.throw(`${file}:2:7: port must be integer`);
    });
  });
});
