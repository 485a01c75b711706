// The shipped path: bin/iac-code.mjs running the compiled dist/ (npm ci builds
// it through the prepare script, npm test through pretest). Help and contract
// listing, a validation that loads the validators, an A2A server started
// from dist that answers /health and stops on SIGTERM, and what each command
// loads (help and listing: the command tree only, no server or transport).
import { expect } from "chai";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { contractTitles } from "../../src/contract/names.js";
import { schemaIndex } from "../../src/contract/index.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "bin", "iac-code.mjs");
const MODULE_TRACE = path.join(ROOT, "test", "fixtures", "module-trace.mjs");

/** What a command must not load when it does not use it: servers, transports, stores, descriptors, validators. */
const HEAVY: Record<string, RegExp> = {
  ioredis: /\/node_modules\/ioredis\//,
  ws: /\/node_modules\/ws\//,
  "better-sqlite3": /\/node_modules\/better-sqlite3\//,
  "@connectrpc": /\/node_modules\/@connectrpc\//,
  koa: /\/node_modules\/(koa|@koa)\//,
  pino: /\/node_modules\/pino\//,
  jose: /\/node_modules\/jose\//,
  "@bufbuild/protobuf": /\/node_modules\/@bufbuild\/protobuf\//,
  "generated protobuf descriptors": /\/generated\/proto\//,
  "the validators": /\/generated\/validators\.cjs$/,
  ajv: /\/node_modules\/ajv\//,
};

/** The heavy modules among those loaded. */
const heavyIn = (modules: string[]): string[] =>
  Object.keys(HEAVY).filter((name) => modules.some((m) => HEAVY[name].test(m)));

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

  /** Runs a command under test/fixtures/module-trace.mjs: its exit status and every module it loaded. */
  function traced(...args: string[]): { status: number | null; modules: string[] } {
    const trace = path.join(dir, `modules-${args.join("-").replace(/[^\w-]/g, "_")}.txt`);
    const result = spawnSync(process.execPath, ["--import", MODULE_TRACE, BIN, ...args], {
      env: { ...userEnv(dir), MODULE_TRACE_FILE: trace },
      encoding: "utf8",
    });
    return { status: result.status, modules: readFileSync(trace, "utf8").split("\n").filter(Boolean) };
  }

  it("help and contract list load the command tree only: no server, transport, store, descriptor or validator", () => {
    for (const args of [
      ["--help"],
      ["a2a", "--help"],
      ["agui", "--help"],
      ["serve", "--help"],
      ["a2a-client", "--help"],
      ["a2a-client", "call", "--help"],
      ["contract", "list"],
    ]) {
      const { status, modules } = traced(...args);
      expect(status, args.join(" ")).to.equal(0);
      expect(
        modules.some((m) => m.endsWith("/dist/src/cli/program.js")),
        args.join(" "),
      ).to.equal(true);
      expect(heavyIn(modules), args.join(" ")).to.deep.equal([]);
    }
  });

  it("contract validate loads the validators but no protobuf, server or transport", () => {
    const valid = path.join(ROOT, "schemas", "examples", "a2a", "health", "valid");
    const example = path.join(valid, readdirSync(valid).sort()[0]);
    const { status, modules } = traced("contract", "validate", "a2a/health", example);
    expect(status).to.equal(0);
    expect(heavyIn(modules)).to.deep.equal(["the validators", "ajv"]);
  });

  it("an a2a-client call loads the transport of its URL only (ws://: ws, not ioredis nor Connect)", () => {
    // Nothing listens on port 1: the command fails after loading its transport.
    const { status, modules } = traced(
      "a2a-client",
      "task-get",
      "--task-id",
      "t",
      "--url",
      "ws://127.0.0.1:1/",
    );
    expect(status).to.equal(1);
    const heavy = heavyIn(modules);
    expect(heavy).to.include("ws");
    expect(
      heavy.filter((name) => ["ioredis", "@connectrpc", "better-sqlite3", "koa", "pino"].includes(name)),
    ).to.deep.equal([]);
  });

  it("an A2A server with the default store and transport loads sqlite, Koa and Connect, not ioredis nor ws", async () => {
    const trace = path.join(dir, "modules-a2a-server.txt");
    const child = spawn(
      process.execPath,
      ["--import", MODULE_TRACE, BIN, "a2a", "--port", "0", "--persistence-dir", path.join(dir, "traced")],
      { env: { ...userEnv(dir), MODULE_TRACE_FILE: trace }, stdio: ["ignore", "pipe", "ignore"] },
    );
    let out = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        if (out.includes("listening on")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    child.kill("SIGTERM");
    expect(await new Promise<number | null>((resolve) => child.once("exit", resolve))).to.equal(0);
    const heavy = heavyIn(readFileSync(trace, "utf8").split("\n").filter(Boolean));
    expect(heavy).to.include.members(["better-sqlite3", "koa", "@connectrpc", "pino"]);
    expect(heavy.filter((name) => name === "ioredis" || name === "ws")).to.deep.equal([]);
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
