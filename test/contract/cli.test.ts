// `iac-code contract ...` as a user's CI would call it.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "bin/iac-code.mjs");

function cli(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: "utf8", input });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("iac-code CLI", function () {
  this.timeout(60_000);
  let tmp: string;

  before(() => {
    mkdirSync(path.join(ROOT, ".tmp"), { recursive: true });
    tmp = mkdtempSync(path.join(ROOT, ".tmp", "cli-test-"));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("prints help and version", () => {
    const help = cli(["--help"]);
    expect(help.status).to.equal(0);
    expect(help.stdout).to.contain("contract");
    const version = cli(["--version"]);
    expect(version.status).to.equal(0);
    expect(version.stdout.trim()).to.match(/^\d+\.\d+\.\d+/);
  });

  it("prints help and exits non-zero on an unknown subcommand", () => {
    const r = cli(["frobnicate"]);
    expect(r.status).to.not.equal(0);
    expect(r.stderr).to.contain("Unknown command: frobnicate");
    expect(r.stderr).to.contain("Usage: iac-code");
  });

  it("lists the contract names", () => {
    const r = cli(["contract", "list"]);
    expect(r.status).to.equal(0);
    expect(r.stdout).to.contain("agui/run-agent-input\tRunAgentInput");
    expect(r.stdout).to.contain("a2a/protojson/Task\tTask");
  });

  it("ends quietly when the reader of its output stops early (contract list | true)", () => {
    const r = spawnSync("sh", ["-c", `"${process.execPath}" "${BIN}" contract list | true`], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(r.status).to.equal(0);
    expect(r.stderr).to.equal("");
  });

  it("validates a good file with exit 0", () => {
    const file = path.join(ROOT, "schemas/examples/agui/iac-code-props/valid/full.json");
    const r = cli(["contract", "validate", "agui/iac-code-props", file]);
    expect(r.status, r.stdout + r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^OK /);
  });

  it("reports each violation with its JSON path and exits 1", () => {
    const file = path.join(tmp, "bad.json");
    writeFileSync(
      file,
      JSON.stringify({ schemaVersion: 1, rosInvocationId: "x".repeat(300), cwd: "relative", extra: true }),
    );
    const r = cli(["contract", "validate", "agui/iac-code-props", file]);
    expect(r.status).to.equal(1);
    expect(r.stdout).to.contain("/rosInvocationId:");
    expect(r.stdout).to.contain("/cwd:");
    expect(r.stdout).to.contain("/extra:");
  });

  it("reads standard input with -", () => {
    const ok = cli(["contract", "validate", "a2a/protojson/GetTaskRequest", "-"], '{"id":"task-1"}');
    expect(ok.status, ok.stdout + ok.stderr).to.equal(0);
    const bad = cli(["contract", "validate", "a2a/protojson/GetTaskRequest", "-"], '{"historyLength":2}');
    expect(bad.status).to.equal(1);
    expect(bad.stdout).to.contain("required");
  });

  it("rejects text that is not JSON with exit 1", () => {
    const r = cli(["contract", "validate", "agui/iac-code-props", "-"], "{not json");
    expect(r.status).to.equal(1);
    expect(r.stdout).to.contain("not JSON");
  });

  it("rejects an unknown contract name or a missing file with exit 2", () => {
    const unknown = cli(["contract", "validate", "agui/nope", "-"], "{}");
    expect(unknown.status).to.equal(2);
    expect(unknown.stderr).to.contain('Unknown schema "agui/nope"');
    const missing = cli(["contract", "validate", "agui/iac-code-props", path.join(tmp, "missing.json")]);
    expect(missing.status).to.equal(2);
    expect(missing.stderr).to.contain("Cannot read");
  });

  it("exports schemas, OpenAPI and protos that compile with nothing else", () => {
    const out = path.join(tmp, "export");
    const r = cli(["contract", "export", out]);
    expect(r.status, r.stderr).to.equal(0);
    expect(existsSync(path.join(out, "schemas/agui/run-agent-input.json"))).to.be.true;
    expect(existsSync(path.join(out, "schemas/openapi/agui.yaml"))).to.be.true;
    expect(existsSync(path.join(out, "generated/jsonschema/a2a-protojson.json"))).to.be.true;
    expect(existsSync(path.join(out, "proto/google/api/annotations.proto"))).to.be.true;
    expect(existsSync(path.join(out, "proto/google/rpc/error_details.proto"))).to.be.true;
    // buf compiles the exported tree on its own: every import is present.
    const buf = spawnSync(
      path.join(ROOT, "node_modules/.bin/buf"),
      ["build", path.join(out, "proto"), "-o", path.join(tmp, "image.binpb")],
      {
        encoding: "utf8",
      },
    );
    expect(buf.status, buf.stderr).to.equal(0);
    // Again onto the same directory: one line and exit 2, unless --force.
    const again = cli(["contract", "export", out]);
    expect(again.status).to.equal(2);
    expect(again.stderr).to.equal(
      `Cannot export the contracts: ${path.join(out, "schemas")} already exists; use --force to overwrite the export.\n`,
    );
    expect(cli(["contract", "export", out, "--force"]).status).to.equal(0);
  });

  it("refuses to export onto a file with one line", () => {
    const file = path.join(tmp, "a-file");
    writeFileSync(file, "x");
    const r = cli(["contract", "export", file]);
    expect(r.status).to.equal(2);
    expect(r.stderr).to.equal(`Cannot export the contracts: ${file} exists and is not a directory.\n`);
  });
});
