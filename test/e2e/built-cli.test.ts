// The shipped path: bin/iac-code.mjs running the compiled dist/ (npm ci builds
// it through the prepare script, npm test through pretest). Help and contract
// listing, a validation that loads the validators, and an A2A server started
// from dist that answers /health and stops on SIGTERM.
import { expect } from "chai";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { contractTitles } from "../../src/contract/names.js";
import { schemaIndex } from "../../src/contract/index.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "bin", "iac-code.mjs");

/** The environment of a user's shell: no source mode, a private config dir. */
function userEnv(configDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, IAC_CODE_CONFIG_DIR: configDir };
  delete env.IAC_CODE_FROM_SOURCE;
  return env;
}

describe("the built CLI (dist/)", function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    // npm test builds first (pretest); a targeted run builds here when dist/ is missing.
    if (!existsSync(path.join(ROOT, "dist", "src", "cli", "main.js")))
      execFileSync(
        process.execPath,
        [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "scripts/build.ts"],
        {
          cwd: ROOT,
          stdio: "inherit",
        },
      );
    dir = mkdtempSync(path.join(os.tmpdir(), "built-cli-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const run = (...args: string[]) =>
    execFileSync(process.execPath, [BIN, ...args], { env: userEnv(dir), encoding: "utf8" });

  it("--help and contract list run from dist; the listing matches the schema index", () => {
    expect(run("--help")).to.match(/^Usage: iac-code/);
    const lines = run("contract", "list").trim().split("\n");
    expect(lines).to.deep.equal(Object.entries(schemaIndex).map(([name, e]) => `${name}\t${e.title}`));
    expect(Object.keys(contractTitles)).to.deep.equal(Object.keys(schemaIndex));
  });

  it("contract validate loads the validators and reads the example files", () => {
    const example = path.join(ROOT, "schemas", "examples", "agui", "health");
    expect(existsSync(example)).to.equal(true);
    const valid = path.join(example, "valid");
    const file = path.join(valid, execFileSync("ls", [valid], { encoding: "utf8" }).split("\n")[0]);
    expect(run("contract", "validate", "agui/health", file)).to.match(/^OK /);
  });

  it("an A2A server from dist (demo script, i18n catalogs) answers /health and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, [BIN, "a2a", "--port", "0"], {
      env: userEnv(dir),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.resume();
    const url = await new Promise<string>((resolve, reject) => {
      // The banner is on stdout; stderr has only log lines.
      child.stdout.on("data", (chunk: Buffer) => {
        err += chunk.toString("utf8");
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(err);
        if (match) resolve(match[1]);
      });
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${err}`)));
    });
    const health = (await (await fetch(`${url}health`)).json()) as {
      runtime: { demo: boolean; hint?: string };
    };
    expect(health.runtime.demo).to.equal(true);
    expect(health.runtime.hint).to.match(/Demo mode/);
    child.kill("SIGTERM");
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).to.equal(0);
  });

  it("a stdio server from dist answers a JSON-RPC line on stdout and exits 0 when stdin closes", async () => {
    const child = spawn(process.execPath, [BIN, "a2a", "--transport", "stdio"], {
      env: userEnv(dir),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stdin.end('{"jsonrpc":"2.0","id":7,"method":"ListTasks","params":{}}\n');
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).to.equal(0);
    const lines = out.trim().split("\n");
    expect(lines).to.have.length(1);
    expect(JSON.parse(lines[0]))
      .to.deep.include({ jsonrpc: "2.0", id: 7 })
      .and.have.nested.property("result.tasks");
  });
});
