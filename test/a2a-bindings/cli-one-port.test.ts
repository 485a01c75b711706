// The "done when" of the bindings issue: one `iac-code a2a` process, one port,
// and the @a2a-js/sdk client gets answers over JSON-RPC, HTTP+JSON and gRPC.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { SendMessageRequest, StreamResponse, type Task } from "@a2a-js/sdk";
import { BINDINGS, sdkClient } from "./fixtures/server.js";

const BIN = fileURLToPath(new URL("../../bin/iac-code.mjs", import.meta.url));

describe("a2a-bindings: iac-code a2a serves all three bindings on one port", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "iac-cli-bindings-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("answers the SDK over JSON-RPC, HTTP+JSON and gRPC, then stops on SIGTERM", async () => {
    const config = path.join(dir, "a2a-server.yml");
    // A scripted model that only answers text, so every turn ends without asking anything.
    const script = path.join(dir, "script.yaml");
    writeFileSync(
      script,
      'version: 1\nmodel: hello-script\nrules:\n  - name: hello\n    reply:\n      - text: "Hello from the script."\n',
    );
    writeFileSync(
      config,
      `port: 0\npersistence-dir: ${path.join(dir, "persist")}\nprovider: scripted\nscript: ${script}\n`,
    );
    const env = {
      PATH: process.env.PATH,
      HOME: dir,
      IAC_CODE_CONFIG_DIR: path.join(dir, "cfg"),
      IAC_CODE_FROM_SOURCE: process.env.IAC_CODE_FROM_SOURCE,
    };
    const child = spawn(process.execPath, [BIN, "a2a", "--config", config], {
      env,
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    // The banner is on stdout; stderr has only log lines.
    let stderr = "";
    child.stderr.resume();
    child.stdout.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", () => {
          const match = /listening on .*\n/.exec(stderr);
          if (match) resolve(match[0]);
        });
        void exit.then((code) => reject(new Error(`exited ${String(code)}: ${stderr}`)));
      });
      const match =
        /JSON-RPC (http:\/\/127\.0\.0\.1:(\d+)\/), HTTP\+JSON (\S+), gRPC (127\.0\.0\.1:(\d+));/.exec(line);
      expect(match, line).to.not.equal(null);
      const [, jsonRpcUrl, port, restUrl, , grpcPort] = match ?? [];
      expect(restUrl).to.equal(`http://127.0.0.1:${port}`);
      expect(grpcPort, "gRPC shares the port").to.equal(port);
      const base = jsonRpcUrl.replace(/\/$/, "");
      for (const binding of BINDINGS) {
        const client = await sdkClient(base, binding);
        expect(client.transport.protocolName).to.equal(binding);
        const request = SendMessageRequest.fromJSON({
          message: {
            messageId: `cli-${binding}`,
            role: "ROLE_USER",
            parts: [{ text: `hello over ${binding}` }],
          },
        });
        const task = (await client.sendMessage(request)) as Task;
        expect(task.id, binding).to.be.a("string");
        const streamed: StreamResponse[] = [];
        for await (const event of client.sendMessageStream(
          SendMessageRequest.fromJSON({
            message: { messageId: `cli-s-${binding}`, role: "ROLE_USER", parts: [{ text: "stream please" }] },
          }),
        )) {
          streamed.push(event);
        }
        expect(streamed[0].payload?.$case, binding).to.equal("task");
        const got = await client.getTask({ tenant: "", id: task.id, historyLength: undefined });
        expect(got.id).to.equal(task.id);
      }
      child.kill("SIGTERM");
      expect(await exit).to.equal(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
