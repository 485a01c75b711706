/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form JSON-RPC replies through `any` (Json) */
// The stdio transport: `iac-code a2a --transport stdio` as a child process,
// spoken to with a raw line client on its stdin/stdout: the shared JSON-RPC
// behaviour, stdout carrying frames only, the end of stdin stopping the server
// once its requests are answered, and --log-to-stdout refused.
import { expect } from "chai";
import { BIN, removeDir, tempDir } from "../e2e/helpers.js";
import { stdioConfig, stdioEnv } from "./stdio-config.js";
import { message, request, stdioServer, type StdioServer } from "./raw-clients.js";
import { sharedBehaviour } from "./suite.js";

describe("transport stdio", function () {
  this.timeout(60_000);
  let dir: string;
  let server: StdioServer;
  before(() => {
    dir = tempDir("iac-stdio-");
    server = stdioServer(BIN, ["a2a", "--config", stdioConfig(dir)], stdioEnv(dir));
  });
  after(async () => {
    await server.close();
    removeDir(dir);
  });

  sharedBehaviour(() => server, { protocolBinding: "stdio", url: () => "stdio://iac-code", lines: true });

  it("stdout carries JSON-RPC frames only; the banner and logs go to stderr", () => {
    expect(server.lines.length).to.be.greaterThan(10);
    for (const line of server.lines)
      expect((JSON.parse(line) as { jsonrpc: string }).jsonrpc).to.equal("2.0");
    expect(server.stderr()).to.include(
      "iac-code A2A server listening on stdio://iac-code (JSON-RPC over stdio;",
    );
  });

  it("the end of stdin: the requests already sent are answered, then the server exits 0", async () => {
    const own = tempDir("iac-stdio-end-");
    try {
      const child = stdioServer(BIN, ["a2a", "--config", stdioConfig(own)], stdioEnv(own));
      const key = child.send(request("SendMessage", message("hello"), "last-1"));
      child.child.stdin.end();
      const reply = await child.next(key);
      expect(reply.payload.result.task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
      expect(await child.exit).to.equal(0);
    } finally {
      removeDir(own);
    }
  });

  it("--log-to-stdout is refused: stdout carries the frames", async () => {
    const child = stdioServer(BIN, ["a2a", "--config", stdioConfig(dir), "--log-to-stdout"], stdioEnv(dir));
    expect(await child.exit).to.equal(2);
    expect(child.stderr()).to.equal(
      "--log-to-stdout cannot be used with --transport stdio because stdout carries A2A frames.\n",
    );
  });
});
