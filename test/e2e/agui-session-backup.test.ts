// SESSION_BACKUP_NOT_READY through real servers (agui-iaccode.md §10 items 55
// and 56; a2a-iaccode.md §12.3): the AG-UI adapter in front of the A2A server
// (IAC_CODE_CONFIG_BACKUP_DIR set) and the real runtime with a scripted model.
// The A2A server is stopped while a permission interrupt waits, its primary
// state deleted and the backup path made unreadable, and it is started again
// on the same port: the resume's ensure-restored preflight answers 409 and the
// run ends RUN_ERROR SESSION_BACKUP_NOT_READY with nothing sent and the
// interrupt still pending (56); a new run on another thread meets the
// JSON-RPC error of the message itself (55). With the backup back, the same
// resume restores the session and the write happens once.
import { expect } from "chai";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startAguiServer, type AguiServer } from "../../src/agui/server.js";
import { ThreadStore } from "../../src/agui/threads/thread-store.js";
import type { WireEvent as AguiEvent } from "../agui/helpers.js";
import { post } from "../agui/harness.js";
import { adapterSettings, removeDir, startE2eServer, tempDir, type E2eServer } from "./helpers.js";

const NOT_READY = "Session backup is still synchronizing. Retry after 3 seconds.";

describe("e2e: SESSION_BACKUP_NOT_READY (AG-UI adapter + A2A server with session backups)", function () {
  this.timeout(90_000);
  let dir: string;
  let backup: string;
  let a2a: E2eServer | undefined;
  let agui: AguiServer | undefined;

  const start = (port = 0) =>
    startE2eServer({
      script: "e2e-agui.yaml",
      dir,
      file: { port },
      env: { IAC_CODE_CONFIG_BACKUP_DIR: backup },
    });

  beforeEach(() => {
    dir = tempDir("iac-agui-backup-");
    backup = path.join(dir, "backup");
  });
  afterEach(async () => {
    await agui?.close();
    await a2a?.close();
    agui = a2a = undefined;
    removeDir(dir);
  });

  const body = (threadId: string, runId: string, text?: string, resume?: unknown[]) => ({
    threadId,
    runId,
    state: {},
    messages: text === undefined ? [] : [{ id: `msg-${runId}`, role: "user", content: text }],
    tools: [],
    context: [],
    forwardedProps: {
      iacCode: { schemaVersion: 1, rosInvocationId: `inv-${threadId}`, cwd: path.join(dir, "workspace") },
    },
    ...(resume ? { resume } : {}),
  });
  const last = (events: AguiEvent[]) => events.at(-1)!;

  it("items 55 and 56: backup not ready ends the run SESSION_BACKUP_NOT_READY, nothing sent, pending kept; then the resume restores and continues", async () => {
    a2a = await start();
    agui = await startAguiServer(adapterSettings(a2a));
    const port = Number(new URL(a2a.url).port);
    const vpc = path.join(a2a.workspace, "vpc.yaml");

    const hello = await post(agui.url, body("thread-other", "o-1", "hello"));
    expect(last(hello.events)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    const first = await post(agui.url, body("thread-write", "w-1", "[WRITE] create a VPC template"));
    const outcome = last(first.events).outcome as { type: string; interrupts: Array<{ id: string }> };
    expect(outcome.type).to.equal("interrupt");
    const interruptId = outcome.interrupts[0].id;
    const allow = [{ interruptId, status: "resolved", payload: { decision: "allow_once" } }];

    // The A2A server stops; its primary state is lost and the backup path cannot be read.
    await a2a.close();
    a2a = undefined;
    rmSync(path.join(dir, "persist"), { recursive: true, force: true });
    renameSync(backup, `${backup}.aside`);
    writeFileSync(backup, "not a directory\n");
    a2a = await start(port);

    // 56: the preflight answers 409 SESSION_BACKUP_NOT_READY: nothing is sent, the interrupt stays pending.
    const blocked = await post(agui.url, body("thread-write", "w-2", undefined, allow));
    expect(last(blocked.events)).to.deep.include({
      type: "RUN_ERROR",
      code: "SESSION_BACKUP_NOT_READY",
      message: NOT_READY,
    });
    expect(existsSync(vpc)).to.equal(false);
    const doc = await new ThreadStore({ root: path.join(dir, "agui-state") }).load("thread-write");
    expect(Object.keys(doc!.execution.pending)).to.deep.equal([interruptId]);
    const getTask = await fetch(a2a.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "GetTask",
        params: { id: doc!.execution.taskId },
      }),
    });
    expect(((await getTask.json()) as { error?: { code: number } }).error?.code).to.equal(-32001);

    // 55: a new run's message meets the JSON-RPC error {code: SESSION_BACKUP_NOT_READY, retryable}.
    const again = await post(agui.url, body("thread-other", "o-2", "hello again"));
    expect(last(again.events)).to.deep.include({
      type: "RUN_ERROR",
      code: "SESSION_BACKUP_NOT_READY",
      message: NOT_READY,
    });

    // The backup is readable again: the same resume restores the session and the write runs once.
    rmSync(backup);
    renameSync(`${backup}.aside`, backup);
    const resumed = await post(agui.url, body("thread-write", "w-3", undefined, allow));
    expect(last(resumed.events)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    expect(readFileSync(vpc, "utf8")).to.include("ALIYUN::ECS::VPC");
    const text = resumed.events
      .filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
      .map((e) => e.delta as string)
      .join("");
    expect(text).to.equal("vpc.yaml is written.");
    const other = await post(agui.url, body("thread-other", "o-3", "and now"));
    expect(last(other.events)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
  });
});
