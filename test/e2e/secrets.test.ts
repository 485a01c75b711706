/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// Per-request secrets (LLM API key, Alibaba Cloud AccessKey pair and STS token)
// sent as marker values through every surface: JSON-RPC, REST and gRPC, unary
// and streaming, an answer that resumes a turn after a restart, and AG-UI
// forwarded props on their way through A2A. Afterwards no marker is in any
// file under the dirs of the run (config, persistence, AG-UI state), in any
// log line (debug level) or in any response body.
import { expect } from "chai";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import type { Interrupt } from "@ag-ui/client";
import { HttpAgent } from "@ag-ui/client";
import { startAguiServer } from "../../src/agui/server.js";
import { createLogger } from "../../src/server/logger.js";
import { agentRun } from "../agui/harness.js";
import { openStream, rpc, userMessage, type AnyJson } from "../a2a/helpers.js";
import { a2aGrpcClient, collect, metadata, unary } from "../a2a-bindings/fixtures/grpc-client.js";
import {
  answerMessage,
  removeDir,
  sendUntilInput,
  startE2eServer,
  tempDir,
  type E2eServer,
} from "./helpers.js";

const MARKERS = {
  iac_code_api_key: "sk-MARKERKEY0001",
  alibaba_cloud_access_key_id: "LTAIMARKERID0002",
  alibaba_cloud_access_key_secret: "MARKER-SECRET-0003",
  alibaba_cloud_security_token: "MARKER-STS-0004",
};

/** Every file under dir, recursively (the SQLite database and its WAL included). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

function leaks(text: string): string[] {
  return Object.values(MARKERS).filter((marker) => text.includes(marker));
}

describe("e2e: per-request secrets are never stored, logged or echoed", function () {
  this.timeout(60_000);
  let logs = "";
  const bodies: string[] = [];
  const logger = () =>
    createLogger({
      debug: true,
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          logs += chunk.toString();
          done();
        },
      }),
    });
  let a: E2eServer | undefined;
  let dir: string;

  before(() => {
    dir = tempDir("iac-secrets-");
  });
  after(async () => {
    await a?.close();
    removeDir(dir);
  });

  it("through every A2A binding, a restart and AG-UI", async () => {
    a = await startE2eServer({ script: "e2e-a2a.yaml", dir, logger: logger() });
    const meta = { iac_code: { cwd: a.workspace, ...MARKERS } };
    const keep = (raw: string) => bodies.push(raw);

    // JSON-RPC unary and streaming; a live answer carrying the secrets too.
    const unaryReply = await rpc(a.url, "SendMessage", { message: userMessage("hello", { metadata: meta }) });
    keep(unaryReply.raw);
    const taskId = (unaryReply.body.result as AnyJson).task.id as string;
    const live = await sendUntilInput(a.url, "[WRITE] one", { metadata: meta });
    keep(JSON.stringify(live.events));
    const answered = await openStream(a.url, "SendStreamingMessage", {
      message: { ...answerMessage(live, "allow_once"), metadata: meta },
    });
    await answered.rest();
    keep(answered.rawFrames.join(""));

    // REST unary and streaming.
    const restHeaders = { "Content-Type": "application/json", "A2A-Version": "1.0" };
    const base = a.url.replace(/\/$/, "");
    for (const verb of ["send", "stream"]) {
      const res = await fetch(`${base}/message:${verb}`, {
        method: "POST",
        headers: restHeaders,
        body: JSON.stringify({ message: userMessage(`rest ${verb}`, { metadata: meta }) }),
      });
      keep(await res.text());
    }

    // gRPC unary and streaming (metadata is a google.protobuf.Struct on the wire).
    const client = a2aGrpcClient(a.server.grpcTarget);
    const md = () => metadata({ "a2a-version": "1.0" });
    const structOf = (value: Record<string, unknown>): AnyJson => ({
      fields: Object.fromEntries(
        Object.entries(value).map(([k, v]) => [
          k,
          typeof v === "string"
            ? { stringValue: v }
            : { structValue: structOf(v as Record<string, unknown>) },
        ]),
      ),
    });
    const grpcMessage = (text: string) => ({
      message: { messageId: `g-${text}`, role: "ROLE_USER", parts: [{ text }], metadata: structOf(meta) },
    });
    try {
      keep(JSON.stringify(await unary((cb) => client.SendMessage(grpcMessage("grpc unary"), md(), cb))));
      keep(JSON.stringify(await collect(client.SendStreamingMessage(grpcMessage("grpc stream"), md()))));
      keep(JSON.stringify(await unary((cb) => client.GetTask({ id: taskId }, md(), cb))));
      keep(JSON.stringify(await unary((cb) => client.ListTasks({ includeArtifacts: true }, md(), cb))));
    } finally {
      client.close();
    }

    // A turn waiting across a restart, answered with the secrets on the new server.
    const pending = await sendUntilInput(a.url, "[WRITE] across a restart", { metadata: meta });
    await a.close();
    a = await startE2eServer({ script: "e2e-a2a.yaml", dir, logger: logger() });
    const resumed = await openStream(a.url, "SendStreamingMessage", {
      message: { ...answerMessage(pending, "allow_once"), metadata: meta },
    });
    await resumed.rest();
    keep(resumed.rawFrames.join(""));

    // AG-UI forwarded props, through A2A, on a permission interrupt and its resume.
    const agui = await startAguiServer(
      {
        host: "127.0.0.1",
        port: 0,
        a2aUrl: a.url,
        stateDir: path.join(dir, "agui-state"),
        idleShutdown: 0,
        interruptTtl: 540,
        allowedCwds: [dir],
        debug: false,
        logStdout: false,
      },
      { logger: logger() },
    );
    try {
      const forwardedProps = {
        iacCode: {
          schemaVersion: 1,
          rosInvocationId: "inv-secrets",
          cwd: a.workspace,
          llmApiKey: MARKERS.iac_code_api_key,
          alibabaCloud: {
            accessKeyId: MARKERS.alibaba_cloud_access_key_id,
            accessKeySecret: MARKERS.alibaba_cloud_access_key_secret,
            securityToken: MARKERS.alibaba_cloud_security_token,
          },
        },
      };
      const agent = new HttpAgent({
        url: agui.url,
        threadId: "thread-secrets",
        initialMessages: [{ id: "u-1", role: "user", content: "[WRITE] via AG-UI" }],
      });
      const run = await agentRun(agent, { runId: "run-1", forwardedProps });
      keep(JSON.stringify(run.events));
      const outcome = run.events.at(-1)!.outcome as { interrupts: Interrupt[] };
      const resume = await agentRun(agent, {
        runId: "run-2",
        forwardedProps,
        resume: [
          { interruptId: outcome.interrupts[0].id, status: "resolved", payload: { decision: "allow_once" } },
        ],
      });
      keep(JSON.stringify(resume.events));
      expect(resume.events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    } finally {
      await agui.close();
    }

    // Everything the tasks now say, on every binding.
    for (const method of ["ListTasks", "GetTask"]) {
      const params = method === "GetTask" ? { id: taskId } : { includeArtifacts: true, pageSize: 100 };
      keep((await rpc(a.url, method, params)).raw);
    }
    const restBase = a.url.replace(/\/$/, "");
    keep(await (await fetch(`${restBase}/tasks?includeArtifacts=true`, { headers: restHeaders })).text());
    const listed = JSON.parse(bodies.at(-1)!) as AnyJson;
    expect(listed.totalSize).to.be.at.least(8);
    await a.close();
    a = undefined;

    expect(logs).to.include("A2A server listening");
    expect(leaks(logs), "log lines").to.deep.equal([]);
    for (const body of bodies) expect(leaks(body), body.slice(0, 300)).to.deep.equal([]);
    const files = filesUnder(dir);
    expect(files.some((f) => f.endsWith("state.db"))).to.equal(true);
    for (const file of files) expect(leaks(readFileSync(file, "latin1")), file).to.deep.equal([]);
  });
});
