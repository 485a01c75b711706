// The unix transport through a raw line client: the shared JSON-RPC behaviour,
// the line framing, the socket file's mode (0600 unless socket-mode says
// otherwise), its removal at shutdown, and the start-up refusals.
import { expect } from "chai";
import { statSync, existsSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { startOurServer } from "../a2a-client/harness.js";
import { removeDir, tempDir, type E2eServer } from "../e2e/helpers.js";
import { message, request, unixConnection, type RawConnection } from "./raw-clients.js";
import { sharedBehaviour } from "./suite.js";

describe("transport unix", function () {
  this.timeout(60_000);
  let s: E2eServer;
  let socketPath: string;
  let c: RawConnection & { lines: string[] };
  before(async () => {
    const dir = tempDir("iac-unix-");
    socketPath = path.join(dir, "a2a.sock");
    s = await startOurServer({ transport: "unix", "socket-path": socketPath });
    c = await unixConnection(socketPath);
  });
  after(async () => {
    await c.close();
    await s.close();
    removeDir(path.dirname(socketPath));
    removeDir(s.dir);
  });

  sharedBehaviour(() => c, {
    protocolBinding: "unix",
    url: () => `unix://${socketPath}`,
    lines: true,
    metrics: async () => (await s.server.metrics.scrape()).body,
    card: () => s.server.cards.publicCard.json,
  });

  it("frames: a unary reply line carries no final; a stream ends with {jsonrpc, id, final: true}", async () => {
    const before = c.lines.length;
    await c.next(c.send(request("ListTasks", {}, "lines-1")));
    const key = c.send(request("SendStreamingMessage", message("hello"), "lines-2"));
    for (;;) if ((await c.next(key)).final) break;
    const lines = c.lines.slice(before);
    expect(JSON.parse(lines[0])).to.not.have.property("final");
    expect(lines.at(-1)).to.equal('{"jsonrpc":"2.0","id":"lines-2","final":true}');
  });

  it("a line over 16 MiB is refused (-32600) and skipped; invalid UTF-8 is -32700; the connection goes on", async () => {
    const socket = net.connect(socketPath);
    await new Promise((done) => socket.once("connect", done));
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    socket.write(Buffer.alloc(16 * 1024 * 1024 + 10, 0x61));
    socket.write(Buffer.from([0x0a, 0xff, 0xfe, 0x0a]));
    socket.write(`${request("ListTasks", {}, "after-big")}\n`);
    for (let i = 0; i < 500 && !text.includes('"after-big"'); i++)
      await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    const replies = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: unknown; error?: { code: number; message: string } });
    expect(replies[0]).to.deep.include({ id: null });
    expect(replies[0].error).to.deep.include({ code: -32600, message: "Payload larger than 16777216 bytes" });
    expect(replies[1].error).to.deep.include({ code: -32700, message: "Invalid JSON payload" });
    expect(replies[2].id).to.equal("after-big");
  });

  it("the socket file is owner-only (0600) and the server runs anonymous", () => {
    expect(statSync(socketPath).mode & 0o777).to.equal(0o600);
    expect(s.server.cards.publicCard.json.securitySchemes ?? {}).to.deep.equal({});
  });

  it("socket-mode widens it; shutdown removes the socket file", async () => {
    const dir = tempDir("iac-unix-mode-");
    const shared = path.join(dir, "group.sock");
    const t = await startOurServer({ transport: "unix", "socket-path": shared, "socket-mode": "0660" });
    try {
      expect(statSync(shared).mode & 0o777).to.equal(0o660);
      const conn = await unixConnection(shared);
      expect((await conn.next(conn.send(request("ListTasks", {})))).payload.result).to.have.property("tasks");
      await t.close();
      expect(existsSync(shared)).to.equal(false);
      await conn.close();
    } finally {
      await t.close();
      removeDir(t.dir);
      removeDir(dir);
    }
  });

  it("start-up: a stale socket is replaced, a live one or a plain file refused, a missing parent named", async () => {
    const dir = tempDir("iac-unix-start-");
    try {
      const stale = path.join(dir, "stale.sock");
      // A server killed without cleaning up leaves its socket file behind.
      const old = spawn(process.execPath, [
        "-e",
        `require("node:net").createServer().listen(${JSON.stringify(stale)}, () => console.log("up"))`,
      ]);
      await new Promise((done) => old.stdout.once("data", done));
      old.kill("SIGKILL");
      await new Promise((done) => old.once("close", done));
      expect(existsSync(stale)).to.equal(true);
      const t = await startOurServer({ transport: "unix", "socket-path": stale });
      try {
        await expectStartFailure(
          { transport: "unix", "socket-path": stale },
          `Unix socket ${stale} is in use by another server.`,
        );
      } finally {
        await t.close();
        removeDir(t.dir);
      }
      const file = path.join(dir, "plain");
      writeFileSync(file, "x");
      await expectStartFailure(
        { transport: "unix", "socket-path": file },
        `Path exists and is not a Unix socket: ${file}`,
      );
      const missing = path.join(dir, "nope", "a.sock");
      await expectStartFailure(
        { transport: "unix", "socket-path": missing },
        `Unix socket parent does not exist: ${path.join(dir, "nope")}`,
      );
    } finally {
      removeDir(dir);
    }
  });
});

async function expectStartFailure(file: Record<string, unknown>, messageText: string): Promise<void> {
  try {
    const t = await startOurServer(file);
    await t.close();
  } catch (error) {
    expect((error as Error).message).to.equal(messageText);
    return;
  }
  throw new Error("the server started");
}
