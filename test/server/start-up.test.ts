// Start-up of the server commands as an operator sees it: a port in use fails
// before anything else starts, a bad setting names its source, and a server
// reachable from other machines without authentication says so.
import { expect } from "chai";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { exposureWarning, isLoopbackHost } from "../../src/server/exposure.js";

const BIN = path.resolve(import.meta.dirname, "../../bin/iac-code.mjs");

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
    expect(badEnv.code).to.equal(1);
    expect(badEnv.stderr.trim()).to.equal("Invalid IAC_CODE_AGUI_PORT 'abc': expected an integer.");
    const file = path.join(dir, "bad.yml");
    writeFileSync(file, "host: 127.0.0.1\nport: abc\n");
    const badFile = await run(["serve", "--config", file], env);
    expect(badFile.code).to.equal(1);
    expect(badFile.stderr.trim()).to.equal(`${file}:2:7: port must be integer`);
    const a2a = await run(["a2a", "--config", file], env);
    expect(a2a.code).to.equal(1);
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

  it("knows which addresses are loopback", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"])
      expect(isLoopbackHost(host), host).to.equal(true);
    for (const host of ["0.0.0.0", "::", "192.168.1.2", "example.com"])
      expect(isLoopbackHost(host), host).to.equal(false);
    expect(exposureWarning("0.0.0.0", true, "x")).to.equal(undefined);
    expect(exposureWarning("127.0.0.1", false, "x")).to.equal(undefined);
  });
});
