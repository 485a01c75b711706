import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  ConfigError,
  loadConfigFile,
  normaliseTransport,
  parseThinkingExposure,
  resolveSettings,
} from "../../src/a2a/config/server-settings.js";
import { settingsFromCli } from "../../src/cli/a2a-run.js";
import { cleanup, makeTempDir, rpc, userMessage } from "./helpers.js";

const BIN = fileURLToPath(new URL("../../bin/iac-code.mjs", import.meta.url));

describe("A2A server configuration", () => {
  let dir: string;
  beforeEach(() => {
    dir = makeTempDir();
  });
  afterEach(() => cleanup(dir));

  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it("loads YAML with dashes or underscores and validates it", () => {
    const config = loadConfigFile(
      write("a.yml", "port: 9999\nbasic_username: u\nbasic-password: p\nthinking_exposure: all\n"),
    );
    expect(config).to.deep.equal({
      port: 9999,
      "basic-username": "u",
      "basic-password": "p",
      "thinking-exposure": "all",
    });
    expect(loadConfigFile(write("empty.yml", ""))).to.deep.equal({});
  });

  it("rejects unknown keys, bad values, non-mappings and bad YAML with clear messages", () => {
    // The file, the line and the column of what is wrong.
    expect(() => loadConfigFile(write("b.yml", "host: a\nprot_col: 1\n"))).to.throw(
      ConfigError,
      /b\.yml:2:1: unknown key prot_col$/,
    );
    // A typo of a known key names it, as the command line does for flags.
    expect(() => loadConfigFile(write("t.yml", "prot: 8080\n"))).to.throw(
      ConfigError,
      /t\.yml:1:1: unknown key prot \(did you mean port\?\)$/,
    );
    expect(() => loadConfigFile(write("u.yml", "persistence_dri: /tmp/x\n"))).to.throw(
      ConfigError,
      /u\.yml:1:1: unknown key persistence_dri \(did you mean persistence-dir\?\)$/,
    );
    expect(() => loadConfigFile(write("c.yml", "host: a\nport:   70000\n"))).to.throw(
      ConfigError,
      /c\.yml:2:9: port must be <= 65535$/,
    );
    expect(() => loadConfigFile(write("m.yml", "mode: fast\n"))).to.throw(
      ConfigError,
      /m\.yml:1:7: mode must be one of normal, pipeline$/,
    );
    expect(() => loadConfigFile(write("d.yml", "- a\n- b\n"))).to.throw(
      ConfigError,
      /d\.yml: a config file must contain a mapping/,
    );
    expect(() => loadConfigFile(write("e.yml", "a: 1\nb: [\n"))).to.throw(
      ConfigError,
      /e\.yml:3:1: not valid YAML/,
    );
    expect(() => loadConfigFile(path.join(dir, "missing.yml"))).to.throw(
      ConfigError,
      /Cannot read config file .*missing\.yml: ENOENT/,
    );
  });

  it("parses thinking exposure like the reference", () => {
    expect(parseThinkingExposure(undefined)).to.deep.equal(["tool_trace"]);
    expect(parseThinkingExposure("all")).to.deep.equal(["raw_thinking", "tool_trace"]);
    expect(parseThinkingExposure(["raw-thinking"])).to.deep.equal(["raw_thinking"]);
    expect(parseThinkingExposure("none")).to.deep.equal([]);
    expect(parseThinkingExposure("tool-trace; raw_thinking")).to.deep.equal(["raw_thinking", "tool_trace"]);
    expect(() => parseThinkingExposure("thought-summary")).to.throw(
      "Unsupported A2A thinking exposure type 'thought_summary'. Supported values: raw-thinking, tool-trace.",
    );
  });

  it("normalises transports and their aliases", () => {
    for (const alias of ["http", "HTTP", "jsonrpc", "json_rpc", "http+jsonrpc", "https"])
      expect(normaliseTransport(alias)).to.equal("http");
    expect(() => normaliseTransport("carrier-pigeon")).to.throw(
      "Unsupported transport 'carrier-pigeon'. Supported values: grpc, grpc-jsonrpc, http, redis-streams, stdio, unix, websocket",
    );
    for (const [alias, name] of [
      ["ws", "websocket"],
      ["WSS", "websocket"],
      ["grpc+jsonrpc", "grpc-jsonrpc"],
      ["redis", "redis-streams"],
      ["redis_stream", "redis-streams"],
      ["grpcs", "grpc"],
      ["stdio", "stdio"],
      ["unix", "unix"],
    ])
      expect(normaliseTransport(alias)).to.equal(name);
  });

  it("applies precedence: command line > file > environment > defaults", () => {
    const env = {
      IACCODE_A2A_HTTP_TOKEN: "env-tok",
      IACCODE_A2A_API_KEY: "env-key",
      IACCODE_A2A_API_KEY_HEADER: "X-Env",
    };
    const defaults = resolveSettings({}, {}, {});
    expect(defaults).to.include({
      host: "127.0.0.1",
      port: 41242,
      transport: "http",
      apiKeyHeader: "X-API-Key",
      idleContextSeconds: 3600,
    });
    expect(defaults.thinkingExposure).to.deep.equal(["tool_trace"]);
    const fromEnv = resolveSettings({ token: "file-tok" }, {}, env);
    expect(fromEnv).to.include({ token: "file-tok", apiKey: "env-key", apiKeyHeader: "X-Env" });
    const file = write("p.yml", "host: 0.0.0.0\nport: 1234\nthinking-exposure: raw-thinking\n");
    const cli = settingsFromCli({ config: file, port: "4321", thinkingExposure: ["tool-trace"] }, {});
    expect(cli).to.include({ host: "0.0.0.0", port: 4321 });
    expect(cli.thinkingExposure).to.deep.equal(["tool_trace"]);
    expect(() => settingsFromCli({ port: "http" }, {})).to.throw(
      ConfigError,
      "Invalid --port 'http': expected an integer.",
    );
    expect(resolveSettings({ "persistence-dir": "/srv/a2a" }, {}, {})).to.include({
      persistenceDir: "/srv/a2a",
      artifactDir: "/srv/a2a/artifacts",
    });
  });
});

function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; stdout: () => string; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, "a2a", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  let err = "";
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

describe("iac-code a2a (the command)", () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    dir = makeTempDir();
    env = {
      PATH: process.env.PATH,
      HOME: dir,
      IAC_CODE_CONFIG_DIR: path.join(dir, "cfg"),
      IAC_CODE_FROM_SOURCE: process.env.IAC_CODE_FROM_SOURCE,
    };
  });
  afterEach(() => cleanup(dir));

  it("starts from a config file, answers JSON-RPC, and stops cleanly on SIGTERM", async () => {
    const config = path.join(dir, "a2a-server.yml");
    writeFileSync(config, `port: 0\npersistence_dir: ${path.join(dir, "persist")}\ntoken: cli-token\n`);
    const run = runCli(["--config", config], env);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setInterval(() => {
          const match = /listening on (http:\/\/\S+)/.exec(run.stdout());
          if (match) {
            clearInterval(timer);
            resolve(match[1]);
          }
        }, 20);
        void run.exit.then((code) => {
          clearInterval(timer);
          reject(new Error(`exited ${String(code)}: ${run.stderr()}`));
        });
      });
      const denied = await rpc(url, "ListTasks", {});
      expect(denied.status).to.equal(401);
      const reply = await rpc(
        url,
        "SendMessage",
        { message: userMessage("hello from the CLI test") },
        { Authorization: "Bearer cli-token" },
      );
      const task = (reply.body.result as { task: { status: { state: string } } }).task;
      expect(["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_FAILED"]).to.include(task.status.state);
      run.child.kill("SIGTERM");
      expect(await run.exit).to.equal(0);
      expect(run.stderr()).to.not.include("cli-token");
    } finally {
      if (run.child.exitCode === null) run.child.kill("SIGKILL");
    }
  });

  it("exits 2 (usage) with a clear message on bad configuration; an unknown option says which it probably is, in one line", async function () {
    // Five CLI processes from the sources, side by side.
    this.timeout(60_000);
    const bad = path.join(dir, "bad.yml");
    writeFileSync(bad, "no_such_key: 1\n");
    const cases = [
      [["--config", bad], /bad\.yml:1:1: unknown key no_such_key/],
      [["--transport", "unix"], /^socket-path is required for --transport unix: give --socket-path/],
      [
        ["--transport", "redis", "--redis-url", "http://x"],
        /^Invalid --redis-url 'http:\/\/x': must match pattern/,
      ],
      [["--thinking-exposure", "everything"], /Unsupported A2A thinking exposure type 'everything'/],
      [["--port", "-5"], /Invalid --port/],
    ] as Array<[string[], RegExp]>;
    const runs = cases.map(([args]) => runCli(args, env));
    for (const [i, [args, pattern]] of cases.entries()) {
      expect(await runs[i].exit, args.join(" ")).to.equal(2);
      expect(runs[i].stderr()).to.match(pattern);
    }
    const typo = runCli(["--prot", "8080"], env);
    expect(await typo.exit).to.equal(2);
    expect(typo.stderr().trim().split("\n")).to.deep.equal([
      "error: unknown option '--prot'",
      "(Did you mean --port?)",
      "(add --help for the options)",
    ]);
  });

  it("exits 1 when the port is taken", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const run = runCli(["--port", String(port)], { ...env, IAC_CODE_CONFIG_DIR: path.join(dir, "cfg2") });
      expect(await run.exit).to.equal(1);
      expect(run.stderr()).to.include(`Port ${port} on 127.0.0.1 is already in use.`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
  it("refuses settings of features this version does not have instead of ignoring them", () => {
    expect(() => resolveSettings({ "idle-shutdown-seconds": 5 }, {}, {})).to.throw(
      ConfigError,
      "Not available in this version of iac-code: idle-shutdown-seconds. Remove this setting from the config file.",
    );
    expect(
      resolveSettings({ "push-notifications": false, mode: "normal", "idle-shutdown-seconds": 0 }, {}, {})
        .push,
    ).to.include({ enabled: false });
    expect(resolveSettings({ mode: "pipeline", "pipeline-name": "selling" }, {}, {})).to.include({
      mode: "pipeline",
      pipelineName: "selling",
    });
  });
});
