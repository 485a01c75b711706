/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// The reference's error texts and exit codes, usage errors, timeouts and
// unreachable servers, and where values come from: command line, then the
// --config file (keys with - or _), then IACCODE_A2A_* (auth), then defaults.
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import type { AnyJson } from "../a2a/helpers.js";
import { EXIT } from "../../src/a2a/client/errors.js";
import { startSdkServer, type SdkServer } from "./fixtures/sdk-server.js";
import { runClient } from "./harness.js";

let dir: string;
before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "iac-a2a-client-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function configFile(name: string, yaml: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, yaml);
  return file;
}

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function fails(args: string[], code: number, stderr: string | RegExp): Promise<void> {
  const run = await runClient(args);
  expect(run.code, run.stderr).to.equal(code);
  expect(run.stdout).to.equal("");
  if (typeof stderr === "string") expect(run.stderr).to.equal(`${stderr}\n`);
  else expect(run.stderr).to.match(stderr);
}

describe("a2a-client: the reference's error texts", () => {
  it("names a missing required value and where to give it (exit 1)", async () => {
    await fails(["task-get"], EXIT.error, "url is required. Provide --url or url in --config.");
    await fails(
      ["call", "-p", "hi"],
      EXIT.error,
      "url is required. Provide --url or url in --config, or configure --route/--route-name.",
    );
    const url = ["--url", "http://127.0.0.1:1"];
    await fails(
      ["task-get", ...url],
      EXIT.error,
      "task_id is required. Provide --task-id or task_id in --config.",
    );
    await fails(
      ["task-cancel", ...url],
      EXIT.error,
      "task_id is required. Provide --task-id or task_id in --config.",
    );
    await fails(
      ["task-subscribe", ...url],
      EXIT.error,
      "task_id is required. Provide --task-id or task_id in --config.",
    );
    await fails(
      ["push-config-create", ...url, "--task-id", "t"],
      EXIT.error,
      "config_id is required. Provide --config-id or config_id in --config.",
    );
    await fails(
      ["push-config-create", ...url, "--task-id", "t", "--config-id", "c"],
      EXIT.error,
      "callback_url is required. Provide --callback-url or callback_url in --config.",
    );
    await fails(
      ["push-config-get", ...url, "--task-id", "t"],
      EXIT.error,
      "config_id is required. Provide --config-id or config_id in --config.",
    );
    await fails(
      ["push-config-list", ...url],
      EXIT.error,
      "task_id is required. Provide --task-id or task_id in --config.",
    );
    await fails(
      ["push-config-delete", ...url, "--task-id", "t"],
      EXIT.error,
      "config_id is required. Provide --config-id or config_id in --config.",
    );
    await fails(
      ["answer", ...url, "--input-id", "i"],
      EXIT.error,
      "task_id is required. Provide --task-id or task_id in --config.",
    );
  });

  it("refuses a bad --output, --binding, --status or number (exit 2)", async () => {
    const url = ["--url", "http://127.0.0.1:1"];
    await fails(["task-list", ...url, "--output", "text"], EXIT.usage, "--output must be table or json.");
    await fails(["task-get", ...url, "--output", "table"], EXIT.usage, "--output must be text or json.");
    await fails(
      ["task-list", ...url, "--binding", "soap"],
      EXIT.usage,
      "--binding must be one of jsonrpc, rest, grpc.",
    );
    await fails(
      ["task-list", ...url, "--status", "sleeping"],
      EXIT.usage,
      /^--status must be one of submitted, working, completed/,
    );
    await fails(
      ["task-list", ...url, "--page-size", "0"],
      EXIT.usage,
      "--page-size must be an integer of at least 1 (got '0').",
    );
    await fails(
      ["task-get", ...url, "--task-id", "t", "--history-length", "x"],
      EXIT.usage,
      "--history-length must be an integer of at least 0 (got 'x').",
    );
    await fails(
      ["task-get", ...url, "--task-id", "t", "--timeout", "-1"],
      EXIT.usage,
      "--timeout must be a number of at least 0 (got '-1').",
    );
    await fails(
      ["call", ...url, "-p", "x", "--thinking-budget", "1.5"],
      EXIT.usage,
      /^--thinking-budget must be an integer/,
    );
  });

  it("commander's own usage errors exit 2; --help lists the exit codes and exits 0", async () => {
    await fails(
      ["call", "--url", "http://x"],
      EXIT.usage,
      /required option '-p, --prompt <text>' not specified/,
    );
    await fails(["task-get", "--no-such-option"], EXIT.usage, /unknown option '--no-such-option'/);
    await fails(["no-such-command"], EXIT.usage, /unknown command 'no-such-command'/);
    const help = await runClient(["call", "--help"]);
    expect(help.code).to.equal(EXIT.ok);
    expect(help.stdout)
      .to.include("--binding <name>")
      .and.include("Exit codes:")
      .and.include("3  input required");
    const group = await runClient(["--help"]);
    for (const name of [
      "call",
      "answer",
      "discover",
      "task-get",
      "task-list",
      "task-cancel",
      "task-subscribe",
      "push-config-create",
      "push-config-get",
      "push-config-list",
      "push-config-delete",
      "extended-card",
      "route-preview",
    ]) {
      expect(group.stdout).to.match(new RegExp(`^  ${name} `, "m"));
    }
  });

  it("an unreachable server and a server that never answers are reported with the URL", async () => {
    const port = await closedPort();
    await fails(
      ["task-list", "--url", `http://127.0.0.1:${port}`],
      EXIT.error,
      `Cannot reach http://127.0.0.1:${port}/.well-known/agent-card.json: ECONNREFUSED`,
    );
    await fails(
      ["task-list", "--url", `grpc://127.0.0.1:${port}`],
      EXIT.error,
      /^Cannot reach http:\/\/127\.0\.0\.1:\d+: /,
    );
    await fails(
      ["task-list", "--url", "ftp://127.0.0.1:1"],
      EXIT.error,
      /^Unsupported A2A URL ftp:\/\/127\.0\.0\.1:1/,
    );
    const sockets = new Set<Socket>();
    const silent: Server = createServer(() => undefined);
    silent.on("connection", (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      await fails(
        ["discover", "--url", base, "--timeout", "0.2"],
        EXIT.error,
        `No reply from ${base}/.well-known/agent-card.json within 0.2 s (--timeout).`,
      );
    } finally {
      sockets.forEach((socket) => socket.destroy());
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("prints errors as one JSON object on stderr with --output json", async () => {
    const run = await runClient(["task-get", "--url", "http://127.0.0.1:1", "--output", "json"]);
    expect(run.code).to.equal(EXIT.error);
    expect(JSON.parse(run.stderr)).to.deep.equal({
      error: { exitCode: 1, message: "task_id is required. Provide --task-id or task_id in --config." },
    });
  });
});

describe("a2a-client: the --config file", function () {
  this.timeout(30_000);
  let s: SdkServer;
  before(async () => {
    s = await startSdkServer();
  });
  after(() => s.close());

  it("supplies values (keys with - or _); the command line beats it", async () => {
    const file = configFile(
      "client.yml",
      `url: ${s.base}\noutput: json\napi-key: from-file\nbinding: rest\n`,
    );
    const run = await runClient(["--config", file, "call", "-p", "from config"]);
    expect(run.code, run.stderr).to.equal(0);
    expect((JSON.parse(run.stdout) as AnyJson).task.status.state).to.equal("TASK_STATE_COMPLETED");
    expect(s.seenHeaders.at(-1)?.["x-api-key"]).to.equal("from-file");
    expect(s.seenHeaders.at(-1)?.["a2a-version"]).to.equal("1.0");
    const text = await runClient([
      "--config",
      file,
      "call",
      "-p",
      "as text",
      "--output",
      "text",
      "--api-key",
      "from-flag",
    ]);
    expect(text.stdout).to.equal("echo: as text\n");
    expect(s.seenHeaders.at(-1)?.["x-api-key"]).to.equal("from-flag");
  });

  it("beats the IACCODE_A2A_* environment, which fills what neither gives", async () => {
    const file = configFile("auth.yml", `url: ${s.base}\ntoken: file-token\n`);
    const env = { IACCODE_A2A_HTTP_TOKEN: "env-token", IACCODE_A2A_API_KEY: "env-key" };
    const run = await runClient(["--config", file, "task-list", "--output", "json"], { env });
    expect(run.code, run.stderr).to.equal(0);
    expect(s.seenHeaders.at(-1)).to.deep.include({
      authorization: "Bearer file-token",
      "x-api-key": "env-key",
    });
    await runClient([
      "task-list",
      "--url",
      s.base,
      "--basic-username",
      "u",
      "--basic-password",
      "p",
      "--output",
      "json",
    ]);
    expect(s.seenHeaders.at(-1)?.authorization).to.equal(`Basic ${Buffer.from("u:p").toString("base64")}`);
  });

  it("rejects an unreadable, malformed or invalid file with the reason", async () => {
    await fails(
      ["--config", path.join(dir, "missing.yml"), "task-list"],
      EXIT.error,
      /^Cannot read A2A client config file .*missing\.yml: ENOENT\n$/,
    );
    await fails(
      ["--config", configFile("list.yml", "- a\n- b\n"), "task-list"],
      EXIT.error,
      "A2A client config file must contain a YAML mapping.",
    );
    await fails(
      ["--config", configFile("bad.yml", "url: [\n"), "task-list"],
      EXIT.error,
      /^A2A client config file is not valid YAML: /,
    );
    await fails(
      ["--config", configFile("typo.yml", "urll: http://x\n"), "task-list"],
      EXIT.error,
      /^Invalid A2A client config .*typo\.yml: \/urll must NOT have additional properties\n$/,
    );
    await fails(
      ["--config", configFile("route.yml", "routes:\n  - name: ros\n"), "call", "-p", "x"],
      EXIT.error,
      "A2A client route config entries require name and url.",
    );
  });

  it("route-preview ignores the config file", async () => {
    const broken = configFile("ignored.yml", "urll: http://x\n");
    const run = await runClient([
      "--config",
      broken,
      "route-preview",
      "--route",
      "a=http://a",
      "--name",
      "a",
    ]);
    expect(run.code, run.stderr).to.equal(0);
    expect(JSON.parse(run.stdout)).to.deep.equal({ name: "a", url: "http://a", skills: [], tags: [] });
  });
});
