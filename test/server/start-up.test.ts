// Start-up of the server commands as an operator sees it: a port in use fails
// before anything else starts, a bad setting names its source, and a server
// reachable from other machines without authentication says so.
import { expect } from "chai";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { knownEnvNames, unknownEnvWarnings } from "../../src/cli/env-check.js";
import { startCli } from "../e2e/helpers.js";
import { exposureWarning, isLoopbackHost } from "../../src/server/exposure.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "bin/iac-code.mjs");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI until it exits, or until `until` matches its output (then SIGTERM). */
function run(args: string[], env: NodeJS.ProcessEnv, until?: RegExp): Promise<Run> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  const out = { stdout: "", stderr: "" };
  const watch = (name: "stdout" | "stderr") => (chunk: Buffer) => {
    out[name] += chunk.toString();
    if (until && until.test(out.stdout + out.stderr) && child.exitCode === null) child.kill("SIGTERM");
  };
  child.stdout.on("data", watch("stdout"));
  child.stderr.on("data", watch("stderr"));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, ...out });
    }),
  );
}

describe("server start-up", function () {
  this.timeout(60_000);
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "start-up-"));
    env = {
      PATH: process.env.PATH,
      HOME: dir,
      IAC_CODE_CONFIG_DIR: path.join(dir, "cfg"),
      IAC_CODE_FROM_SOURCE: process.env.IAC_CODE_FROM_SOURCE,
    };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("serve on a port in use fails at once: no managed A2A server, no banner", async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = await run(["serve", "--port", String(port)], env);
      expect(r.code).to.equal(1);
      expect(r.stderr.trim()).to.equal(`Port ${port} on 127.0.0.1 is already in use.`);
      expect(r.stdout).to.equal("");
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it("a bad setting stops the start with its source: the variable, or the file's line and column", async () => {
    const badEnv = await run(["serve"], { ...env, IAC_CODE_AGUI_PORT: "abc" });
    expect(badEnv.code).to.equal(2);
    expect(badEnv.stderr.trim()).to.equal("Invalid IAC_CODE_AGUI_PORT 'abc': expected an integer.");
    const file = path.join(dir, "bad.yml");
    writeFileSync(file, "host: 127.0.0.1\nport: abc\n");
    const badFile = await run(["serve", "--config", file], env);
    expect(badFile.code).to.equal(2);
    expect(badFile.stderr.trim()).to.equal(`${file}:2:7: port must be integer`);
    const a2a = await run(["a2a", "--config", file], env);
    expect(a2a.code).to.equal(2);
    expect(a2a.stderr.trim()).to.equal(`${file}:2:7: port must be integer`);
  });

  it("warns when a server listens beyond loopback without authentication", async () => {
    const open = await run(["a2a", "--host", "0.0.0.0", "--port", "0"], env, /without authentication/);
    expect(open.stderr).to.match(/Listening on 0\.0\.0\.0 without authentication/);
    const withToken = await run(
      ["a2a", "--host", "0.0.0.0", "--port", "0", "--persistence-dir", path.join(dir, "p2")],
      { ...env, IACCODE_A2A_HTTP_TOKEN: "t" },
      /listening on/,
    );
    // The banner is on stdout; stderr carries only log lines.
    expect(withToken.stdout).to.match(/listening on/);
    expect(withToken.stderr).to.not.match(/without authentication/);
    const adapter = await run(["serve", "--host", "0.0.0.0", "--port", "0"], env, /without authentication/);
    expect(adapter.stderr).to.match(/Listening on 0\.0\.0\.0 without authentication/);
    expect(adapter.stderr).to.match(/IAC_CODE_AGUI_AUTH_TOKEN/);
  });

  it("a variable with our prefixes that nothing reads is named at start-up, with the one it is probably meant to be", async () => {
    const a2a = await run(["a2a", "--port", "0"], { ...env, IAC_CODE_A2A_PORT: "41300" }, /listening on/);
    expect(a2a.stderr).to.include(
      "IAC_CODE_A2A_PORT is set but iac-code reads no such variable; did you mean IACCODE_A2A_PORT?",
    );
    // The managed A2A server does not repeat the adapter's warning.
    const adapter = await run(["serve", "--port", "0"], { ...env, IAC_CODE_AGUI_PROT: "1" }, /listening on/);
    const warnings = adapter.stderr.split("\n").filter((l) => l.includes("IAC_CODE_AGUI_PROT"));
    expect(warnings, adapter.stderr).to.have.length(1);
    expect(warnings[0]).to.include("did you mean IAC_CODE_AGUI_PORT?");
    const quiet = await run(
      ["a2a", "--port", "0", "--persistence-dir", path.join(dir, "p3")],
      { ...env, IAC_CODE_MODEL: "" },
      /listening on/,
    );
    expect(quiet.stderr).to.not.include("reads no such variable");
  });

  it("every IAC_CODE_* / IACCODE_* variable the code reads is known to the start-up check", () => {
    const known = knownEnvNames();
    const read = new Set<string>();
    const files = execFileSync("git", ["ls-files", "src", "bin"], { cwd: ROOT, encoding: "utf8" }).split(
      "\n",
    );
    // env-check.ts itself names wrong variables in its examples.
    for (const file of files.filter((f) => /\.(ts|mjs)$/.test(f) && !f.endsWith("env-check.ts")))
      for (const [name] of readFileSync(path.join(ROOT, file), "utf8").matchAll(
        /\b(?:IAC_CODE|IACCODE)_[A-Z0-9_]*[A-Z0-9]\b/g,
      ))
        read.add(name);
    expect(read.size).to.be.greaterThan(20);
    expect([...read].filter((n) => !known.has(n))).to.deep.equal([]);
    expect(
      unknownEnvWarnings({ IACCODE_A2A_PORT: "1", IAC_CODE_AGUI_PORT: "2", IAC_CODE_FOO: "x" }),
    ).to.deep.equal(["IAC_CODE_FOO is set but iac-code reads no such variable"]);
  });

  it("serve takes --provider, --model and --base-url and hands them to the A2A server it manages", async () => {
    const serve = await startCli(
      ["serve", "--port", "0", "--provider", "openai_compatible", "--model", "m-from-flag", "--base-url", "http://127.0.0.1:9/v1"],
      env,
    ); // prettier-ignore
    try {
      const health = (await (await fetch(`${serve.url}health`)).json()) as {
        runtime?: Record<string, unknown>;
      };
      expect(health.runtime).to.deep.include({
        provider: "openai_compatible",
        model: "m-from-flag",
        demo: false,
      });
    } finally {
      await serve.stop();
    }
    const refused = await run(["agui", "--a2a-url", "http://127.0.0.1:1/", "--model", "m"], env);
    expect(refused.code).to.equal(2);
    expect(refused.stderr.trim()).to.equal(
      "model configures the managed A2A server, which is not started when a2a-url is set.",
    );
  });

  it("serve --sync-every-commit starts its A2A server with sync-every-commit too", async () => {
    const serve = await startCli(["serve", "--port", "0", "--sync-every-commit"], env);
    try {
      const pid = serve.child.pid!;
      const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/);
      const argvs = children.map((c) => readFileSync(`/proc/${c}/cmdline`, "utf8").split("\0"));
      const managed = argvs.find((argv) => argv.includes("a2a"));
      expect(managed, JSON.stringify(argvs)).to.include("--sync-every-commit");
    } finally {
      await serve.stop();
    }
  });

  it("knows which addresses are loopback", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"])
      expect(isLoopbackHost(host), host).to.equal(true);
    for (const host of ["0.0.0.0", "::", "192.168.1.2", "example.com"])
      expect(isLoopbackHost(host), host).to.equal(false);
    expect(exposureWarning("0.0.0.0", true, "x")).to.equal(undefined);
    expect(exposureWarning("127.0.0.1", false, "x")).to.equal(undefined);
  });
});
