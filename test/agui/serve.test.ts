// `iac-code serve` with no configuration at all: the adapter plus a managed A2A
// child running the demo script; a Node client (HttpAgent) does a full
// permission round-trip, and SIGTERM stops both processes.
import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { HttpAgent, type Interrupt } from "@ag-ui/client";
import { agentRun } from "./harness.js";

const BIN = path.resolve(import.meta.dirname, "../../bin/iac-code.mjs");

describe("iac-code serve (adapter + managed A2A, demo script)", function () {
  this.timeout(60_000);
  let dir: string;
  let child: ChildProcess;
  let url: string;
  let out = "";
  let err = "";

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "agui-serve-"));
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir, IAC_CODE_CONFIG_DIR: path.join(dir, "cfg") };
    for (const k of Object.keys(env))
      if (/^(IAC_CODE_|IACCODE_)/.test(k) && k !== "IAC_CODE_CONFIG_DIR" && k !== "IAC_CODE_FROM_SOURCE")
        delete env[k];
    child = spawn(process.execPath, [BIN, "serve", "--port", "0"], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      child.once("exit", (code) => reject(new Error(`serve exited early (${String(code)}): ${out}`)));
    });
  });

  after(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves a full permission round-trip to the official Node client", async () => {
    const health = (await (await fetch(`${url}health`)).json()) as { runtime?: { demo: boolean } };
    expect(health.runtime?.demo).to.equal(true);
    // The workspace must exist (one rule on both protocols: never created on request).
    const workspace = path.join(dir, "ws");
    mkdirSync(workspace);
    const forwardedProps = { iacCode: { schemaVersion: 1, rosInvocationId: "inv-1", cwd: workspace } };
    const agent = new HttpAgent({
      url,
      threadId: "demo-thread",
      initialMessages: [{ id: "u1", role: "user", content: "Create a VPC template" }],
    });
    const first = await agentRun(agent, { runId: "r1", forwardedProps });
    expect(first.warnings).to.deep.equal([]);
    const outcome = first.events.at(-1)!.outcome as { type: string; interrupts: Interrupt[] };
    expect(outcome.type).to.equal("interrupt");
    expect(existsSync(path.join(workspace, "vpc.yaml"))).to.equal(false);
    const second = await agentRun(agent, {
      runId: "r2",
      forwardedProps,
      resume: [
        { interruptId: outcome.interrupts[0].id, status: "resolved", payload: { decision: "allow_once" } },
      ],
    });
    expect(second.warnings).to.deep.equal([]);
    expect(second.events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    expect(readFileSync(path.join(workspace, "vpc.yaml"), "utf8")).to.include("ROSTemplateFormatVersion");
    expect(agent.pendingInterrupts).to.deep.equal([]);
  });

  it("prints one banner (the A2A URL marked internal, the demo hint once); stderr has only JSON log lines", () => {
    const lines = out.split("\n").filter((l) => l !== "");
    expect(lines.filter((l) => l.startsWith("AG-UI adapter listening on"))).to.have.length(1);
    expect(
      lines.filter((l) =>
        /^Internal A2A server \(answers only this adapter\): http:\/\/127\.0\.0\.1:\d+\/$/.test(l),
      ),
    ).to.have.length(1);
    expect(lines.filter((l) => l.startsWith("No model is configured"))).to.have.length(1);
    expect(
      lines.filter((l) => /^Browser console: http:\/\/127\.0\.0\.1:\d+\/console$/.test(l)),
    ).to.have.length(1);
    expect(out).to.not.include("iac-code A2A server listening on");
    const logs = err.split("\n").filter((l) => l !== "");
    expect(logs.length).to.be.greaterThan(0);
    const parsed = logs.map((l) => JSON.parse(l) as { msg: string; outcome?: string });
    // The two runs above: one line each, at info, from the adapter; one line per turn from the A2A server.
    expect(parsed.filter((l) => l.msg === "run ended").map((l) => l.outcome)).to.deep.equal([
      "interrupt",
      "success",
    ]);
    expect(parsed.filter((l) => l.msg === "turn ended")).to.have.length(1);
  });
});
