// Process-level behaviour of the adapter: the managed A2A child (environment,
// arguments, readiness, token, stop) and idle shutdown (agui-iaccode §1.3–§1.4).
import { expect } from "chai";
import { startManagedA2a } from "../../src/agui/upstream/managed-a2a.js";
import { managedArgs, managedEnv } from "../../src/agui/upstream/managed-child.js";
import { post, runInput, startHarness, type Harness } from "./harness.js";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** Polls (bounded) until the adapter stops answering. */
async function waitUntilClosed(url: string): Promise<boolean> {
  for (let i = 0; i < 100; i += 1) {
    try {
      const res = await fetch(new URL("/health", url), { signal: AbortSignal.timeout(500) });
      await res.body?.cancel();
    } catch {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

describe("AG-UI adapter process", function () {
  this.timeout(60_000);

  it("gives the managed A2A child the token, the allowed workspaces and the rest of the environment", () => {
    const env = managedEnv(
      { IAC_CODE_AGUI_ALLOWED_CWDS: "/a:/b", IAC_CODE_MODE: "normal", PATH: "/bin" },
      "tok",
    );
    expect(env).to.deep.equal({
      IAC_CODE_AGUI_ALLOWED_CWDS: "/a:/b",
      IACCODE_A2A_ALLOWED_CWDS: "/a:/b",
      IAC_CODE_MODE: "normal",
      PATH: "/bin",
      IACCODE_A2A_HTTP_TOKEN: "tok",
      IAC_CODE_MANAGED_A2A: "1",
    });
    // An explicit A2A list wins over the adapter's.
    expect(
      managedEnv({ IAC_CODE_AGUI_ALLOWED_CWDS: "/a", IACCODE_A2A_ALLOWED_CWDS: "/z" }, "t")
        .IACCODE_A2A_ALLOWED_CWDS,
    ).to.equal("/z");
    // The adapter's configured roots (--allowed-cwds, allowed-cwds) go to the child too.
    expect(
      managedEnv({ IAC_CODE_AGUI_ALLOWED_CWDS: "/a" }, "t", ["/c", "/d"]).IACCODE_A2A_ALLOWED_CWDS,
    ).to.equal(["/c", "/d"].join(path.delimiter));
    const args = managedArgs(1234);
    expect(args[1]).to.equal("a2a");
    expect(args.slice(2)).to.include.members(["--host", "127.0.0.1", "--port", "1234"]);
  });

  it("starts the managed A2A server on loopback behind a random bearer token and stops it", async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), "agui-managed-"));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: home,
      IAC_CODE_CONFIG_DIR: path.join(home, "cfg"),
    };
    for (const k of Object.keys(env))
      if (/^(IAC_CODE_|IACCODE_)/.test(k) && k !== "IAC_CODE_CONFIG_DIR" && k !== "IAC_CODE_FROM_SOURCE")
        delete env[k];
    const managed = await startManagedA2a({ env, stdio: "ignore" });
    try {
      expect(managed.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(managed.token).to.have.length(43);
      // Health is public; A2A calls need the token.
      const call = (headers: Record<string, string>) =>
        fetch(managed.url, {
          method: "POST",
          headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...headers },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "none" } }),
        });
      expect((await call({})).status).to.equal(401);
      const ok = await call({ Authorization: `Bearer ${managed.token}` });
      expect(ok.status).to.equal(200);
      expect(((await ok.json()) as { error: { code: number } }).error.code).to.equal(-32001);
    } finally {
      await managed.stop();
      rmSync(home, { recursive: true, force: true });
    }
    expect(managed.child.exitCode ?? managed.child.signalCode).to.not.equal(null);
  });

  describe("idle shutdown", () => {
    let h: Harness | undefined;
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    it("stops the adapter once nothing ran for the configured time", async () => {
      h = await startHarness({ settings: { idleShutdown: 0.2 } });
      const run = await post(h.url, runInput(h, { threadId: "idle-1", runId: "r1", text: "hello" }));
      expect(run.status).to.equal(200);
      expect(await waitUntilClosed(h.url)).to.equal(true);
    });

    it("never stops while an interrupt is waiting for its answer", async () => {
      h = await startHarness({ settings: { idleShutdown: 0.2 } });
      const run = await post(
        h.url,
        runInput(h, { threadId: "idle-2", runId: "r1", text: "[[permission]] write" }),
      );
      const last = run.events.at(-1) as { type: string; outcome?: { type: string } };
      expect(last.outcome?.type).to.equal("interrupt");
      // Several idle periods later the adapter still answers.
      await new Promise((resolve) => setTimeout(resolve, 800));
      const health = await fetch(new URL("/health", h.url));
      expect(health.status).to.equal(200);
    });
  });

  it("keeps earlier thread files as spares while it runs and removes them when it stops", async () => {
    const h = await startHarness();
    const dir = path.join(h.stateDir, "threads");
    const hidden = () => readdirSync(dir).filter((f) => f.startsWith("."));
    try {
      for (const runId of ["r1", "r2"]) {
        const run = await post(h.url, runInput(h, { threadId: "spares-1", runId, text: "hello" }));
        expect(run.events.at(-1)).to.deep.include({ type: "RUN_FINISHED" });
      }
      expect(hidden()).to.not.deep.equal([]);
      await h.agui.close();
      expect(hidden()).to.deep.equal([]);
      expect(readdirSync(dir)).to.deep.equal(["spares-1.json"]);
    } finally {
      await h.close();
    }
  });
});
