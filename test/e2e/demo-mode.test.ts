/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// Demo mode end to end: `iac-code a2a` with nothing configured anywhere (no
// IAC_CODE_* / IACCODE_* variable, a fresh HOME) starts, says so on its banner
// and /health with a hint, and a SendStreamingMessage shows streamed text and a
// permission request (allowing it writes the demo template into <config-dir>/workspace, not
// into the server's cwd). A provider that is
// configured but has no key is not demo mode: turns fail with the sanitised
// authentication error.
import { expect } from "chai";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { openStream, stateOf, userMessage, type AnyJson } from "../a2a/helpers.js";
import {
  answer,
  cleanEnv,
  iacOf,
  isEndOfTurn,
  isInputRequest,
  removeDir,
  startCli,
  tempDir,
  texts,
  type CliChild,
} from "./helpers.js";

const HINT =
  "Demo mode: no model is configured, so a bundled script answers. To use a real model, set IAC_CODE_API_KEY";

async function health(url: string): Promise<AnyJson> {
  return (await (await fetch(`${url}health`)).json()) as AnyJson;
}

describe("e2e: demo mode with nothing configured (iac-code a2a)", function () {
  this.timeout(60_000);
  let dir: string;
  let workspace: string;
  let cli: CliChild;

  before(async () => {
    dir = tempDir();
    workspace = path.join(dir, "project");
    mkdirSync(workspace, { recursive: true });
    cli = await startCli(["a2a", "--port", "0"], cleanEnv(dir), workspace);
  });
  after(async () => {
    await cli?.stop();
    if (dir) removeDir(dir);
  });

  it("says demo mode, with a hint, on the banner and /health", async () => {
    const banner = cli
      .stdout()
      .split("\n")
      .find((l) => l.startsWith("iac-code A2A server listening on"));
    expect(banner).to.match(/; model demo\/demo-script, demo\)$/);
    await cli.waitForOutput(HINT);
    const body = await health(cli.url);
    expect(body.status).to.equal("healthy");
    expect(body.runtime).to.deep.include({ demo: true, provider: "demo", model: "demo-script" });
    expect(body.runtime.hint).to.include(HINT);
  });

  it("a streamed message shows text and a permission request; allowing it writes the demo template", async () => {
    const stream = await openStream(cli.url, "SendStreamingMessage", {
      message: userMessage("Create a VPC template"),
    });
    expect(stream.contentType).to.include("text/event-stream");
    const events = await stream.until((e) => isInputRequest(e) || isEndOfTurn(e));
    stream.stop();
    const streamed = texts(events);
    // Several chunks, not one final text.
    expect(streamed.length).to.be.greaterThan(2);
    expect(streamed.join("")).to.include("I'm running in demo mode (no model is configured)");
    const last = events.at(-1)!;
    expect(isInputRequest(last)).to.equal(true);
    const envelope = iacOf(last)!.input as AnyJson;
    expect(envelope).to.deep.include({ kind: "permission", toolName: "write_file", target: "vpc.yaml" });
    expect(envelope.prompt).to.be.a("string").and.not.equal("");

    const task = (events[0].result as AnyJson).task as AnyJson;
    const done = await answer(
      cli.url,
      { taskId: task.id as string, contextId: task.contextId as string, envelope },
      "allow_once",
    );
    expect(stateOf(done.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
    // No cwd in the message: the default workspace under the config dir, never the process's cwd
    // (a source checkout when the demo runs from one).
    const defaultWorkspace = path.join(dir, ".iac-code", "workspace");
    expect(readFileSync(path.join(defaultWorkspace, "vpc.yaml"), "utf8")).to.include(
      "Type: ALIYUN::ECS::VPC",
    );
    expect(readdirSync(workspace)).to.deep.equal([]);
    // The demo validates what it wrote, then says how to leave demo mode.
    const validation = done
      .map((e) => iacOf(e)?.tool as AnyJson | undefined)
      .find((t) => t?.name === "ros_validate_template" && t.status === "completed");
    expect(validation?.result).to.deep.include({ valid: true });
    expect(texts(done).join("")).to.include("To talk to a real model, set IAC_CODE_API_KEY");
  });
});

describe("e2e: a configured provider without a key is not demo mode (iac-code a2a)", function () {
  this.timeout(60_000);

  async function authFailure(
    configure: (home: string) => NodeJS.ProcessEnv,
    provider: string,
  ): Promise<void> {
    const dir = tempDir();
    const workspace = path.join(dir, "project");
    mkdirSync(workspace, { recursive: true });
    const cli = await startCli(["a2a", "--port", "0"], configure(dir), workspace);
    try {
      await cli.waitForOutput(`Provider ${provider} has no API key`);
      const body = await health(cli.url);
      expect(body.runtime).to.deep.include({ demo: false, provider });

      for (const [language, expected] of [
        [
          "en",
          "The model provider needs valid credentials: check the API key, then retry (error {errorId}).",
        ],
        [
          "fr",
          "Le fournisseur du modèle exige des identifiants valides : vérifiez la clé d'API, puis réessayez (erreur {errorId}).",
        ],
      ]) {
        const stream = await openStream(cli.url, "SendStreamingMessage", {
          message: userMessage("Create a VPC template", {
            metadata: { iac_code: { preferredLanguage: language } },
          }),
        });
        const events = await stream.rest();
        const last = events.at(-1)!;
        expect(stateOf(last)).to.equal("TASK_STATE_FAILED");
        const error = iacOf(last)?.error as { retryable: boolean; code: string; errorId: string };
        expect(error).to.include({ retryable: false, code: "MODEL_AUTHENTICATION_FAILED" });
        expect(texts(events)).to.deep.equal([expected.replace("{errorId}", error.errorId)]);
        // The internal reason (provider name, which key is missing) stays in the server log.
        expect(JSON.stringify(events)).to.not.match(/dashscope|openai|has no API key/i);
      }
    } finally {
      await cli.stop();
      removeDir(dir);
    }
  }

  it("IAC_CODE_PROVIDER without IAC_CODE_API_KEY: sanitised authentication error", async () => {
    await authFailure((home) => cleanEnv(home, { IAC_CODE_PROVIDER: "dashscope" }), "dashscope");
  });

  it("a settings.yml naming a provider, without a key: sanitised authentication error", async () => {
    await authFailure((home) => {
      mkdirSync(path.join(home, ".iac-code"), { recursive: true });
      writeFileSync(path.join(home, ".iac-code", "settings.yml"), "activeProvider: openai\n");
      return cleanEnv(home);
    }, "openai");
  });
});
