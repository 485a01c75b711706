/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// Session backups (issue 32 item 5, a2a-iaccode.md §12.3): `iac-code a2a` run
// from the sources with IAC_CODE_CONFIG_BACKUP_DIR, the real runtime talking to
// the local OpenAI-compatible fixture. kill -9 with the primary state deleted
// afterwards: the next message restores the session from the backup and the
// model sees the whole conversation again; a backup path that cannot be
// written blocks a would-be terminal (INPUT_REQUIRED + backupBlocked), and
// once it is writable again the next turn commits everything; no key is ever
// in a backup; `iac-code state backup|restore` round-trips the database.
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { rpc, userMessage, type AnyJson } from "../a2a/helpers.js";
import { OpenAiFixture, textReply, toolReply, type RecordedRequest } from "../fixtures/openai-server.js";
import { cleanEnv, removeDir, sourceCliArgs, startSourceCli, tempDir, type CliChild } from "./helpers.js";

const SERVER_KEY = "sk-backup-server-key-0123456789abcdef";
const REQUEST_KEY = "sk-backup-request-key-fedcba9876543210";
const BLOCKED_TEXT = "Session backup failed. Retry after the backup path is available.";

interface Setup {
  dir: string;
  workspace: string;
  persist: string;
  backup: string;
  staging: string;
  env: NodeJS.ProcessEnv;
}

function setup(fixture: OpenAiFixture): Setup {
  const dir = tempDir("iac-backup-");
  const workspace = path.join(dir, "workspace");
  mkdirSync(workspace, { recursive: true });
  const backup = path.join(dir, "backup");
  const staging = path.join(dir, "backup-staging");
  const env = cleanEnv(dir, {
    IAC_CODE_API_KEY: SERVER_KEY,
    IAC_CODE_BASE_URL: fixture.url,
    IAC_CODE_PROVIDER: "openai_compatible",
    IAC_CODE_MODEL: "fixture-model",
    IAC_CODE_CONFIG_DIR: path.join(dir, "config"),
    IAC_CODE_CONFIG_BACKUP_DIR: backup,
    IAC_CODE_CONFIG_BACKUP_TMP_DIR: staging,
    IACCODE_A2A_ALLOWED_CWDS: dir,
  });
  return { dir, workspace, persist: path.join(dir, "persist"), backup, staging, env };
}

const start = (s: Setup): Promise<CliChild> =>
  startSourceCli(["a2a", "--port", "0", "--persistence-dir", s.persist], s.env);

/** The text of every message the model was sent in a request (its conversation). */
function conversationOf(request: RecordedRequest): string {
  return JSON.stringify(request.body.messages);
}

async function send(url: string, text: string, extra: AnyJson = {}): Promise<AnyJson> {
  const reply = await rpc(url, "SendMessage", { message: userMessage(text, extra) });
  expect(reply.body.error, JSON.stringify(reply.body.error)).to.equal(undefined);
  return (reply.body.result as AnyJson).task as AnyJson;
}

async function getTask(url: string, id: string): Promise<AnyJson> {
  const reply = await rpc(url, "GetTask", { id });
  expect(reply.body.error, JSON.stringify(reply.body.error)).to.equal(undefined);
  return reply.body.result as AnyJson;
}

const lastText = (task: AnyJson): string | undefined => task.status?.message?.parts?.[0]?.text;
const historyTexts = (task: AnyJson): string[] => (task.history as AnyJson[]).map((m) => m.parts?.[0]?.text);

/** Every file under a directory, read as text (the backup store and its staging). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(path.join(e.parentPath, e.name), "utf8"));
}

describe("e2e: session backups (IAC_CODE_CONFIG_BACKUP_DIR)", function () {
  this.timeout(120_000);
  let fixture: OpenAiFixture;
  let s: Setup;
  let server: CliChild | undefined;

  beforeEach(async () => {
    fixture = await OpenAiFixture.start();
    let n = 0;
    fixture.respond = () => textReply(`Answer ${++n}.`);
    s = setup(fixture);
  });
  afterEach(async () => {
    await server?.stop("SIGKILL");
    server = undefined;
    await fixture.close();
    removeDir(s.dir);
  });

  it("kill -9, primary state deleted: the next message restores the session from the backup and the conversation continues; no key in the backup", async () => {
    server = await start(s);
    const ctx = { contextId: "ctx-backup-restore", metadata: { iac_code: { cwd: s.workspace } } };
    const first = await send(server.url, "My favourite colour is teal.", ctx);
    expect(first.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    const second = await send(server.url, "And my pet is a heron.", {
      ...ctx,
      metadata: { iac_code: { cwd: s.workspace, iac_code_api_key: REQUEST_KEY } },
    });
    expect(second.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(fixture.lastRequest.headers.authorization).to.equal(`Bearer ${REQUEST_KEY}`);
    const sessionId = second.metadata.iac_code.iacCodeSessionId as string;

    // The backup holds the context, both tasks as acknowledged and the conversation; never a key.
    const file = path.join(s.backup, "contexts", `${ctx.contextId}.json`);
    const backup = JSON.parse(readFileSync(file, "utf8")) as AnyJson;
    expect(backup.context).to.deep.include({ contextId: ctx.contextId, sessionId });
    expect((backup.tasks as AnyJson[]).map((t) => t.id).sort()).to.deep.equal([first.id, second.id].sort());
    const everything = [...filesUnder(s.backup), ...filesUnder(s.staging)].join("\n");
    expect(everything).to.include("My favourite colour is teal.");
    expect(everything).to.not.include(SERVER_KEY);
    expect(everything).to.not.include(REQUEST_KEY);
    expect(readdirSync(s.staging)).to.deep.equal([]);

    await server.stop("SIGKILL");
    server = undefined;
    rmSync(s.persist, { recursive: true, force: true });
    server = await start(s);

    const third = await send(server.url, "What are my colour and my pet?", ctx);
    expect(third.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(third.metadata.iac_code.iacCodeSessionId).to.equal(sessionId);
    // The model was sent the conversation from before the crash.
    const seen = conversationOf(fixture.lastRequest);
    expect(seen).to.include("My favourite colour is teal.");
    expect(seen).to.include("And my pet is a heron.");
    expect(seen).to.include("Answer 1.");
    expect(seen).to.include("Answer 2.");
    expect(seen).to.include("What are my colour and my pet?");
    // Every acknowledged task is back as it was.
    const restored = await getTask(server.url, second.id as string);
    expect(restored.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(historyTexts(restored)).to.deep.equal(historyTexts(second));
    const list = (await rpc(server.url, "ListTasks", { contextId: ctx.contextId })).body.result as AnyJson;
    expect((list.tasks as AnyJson[]).map((t) => t.id).sort()).to.deep.equal(
      [first.id, second.id, third.id].sort(),
    );
    await server.waitForOutput("session restored from its backup");
  });

  it("a backup path that cannot be written blocks a would-be terminal (INPUT_REQUIRED + backupBlocked); writable again, the next turn commits all, nothing acknowledged is lost", async () => {
    server = await start(s);
    const ctx = { contextId: "ctx-backup-blocked", metadata: { iac_code: { cwd: s.workspace } } };
    const first = await send(server.url, "Remember the number 42.", ctx);
    expect(first.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    // The backup path becomes a file where the directory was: nothing can be written there (root included).
    rmSync(s.backup, { recursive: true });
    writeFileSync(s.backup, "not a directory\n");

    // A normal turn end: its backup is not critical, the turn ends as usual.
    const normal = await send(server.url, "Remember the number 43 too.", ctx);
    expect(normal.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(normal.metadata.iac_code).to.not.have.property("backupBlocked");
    await server.waitForOutput("session backup failed");

    // A context the primary store does not know cannot be checked against its backup now: retryable refusal.
    const unknown = await rpc(server.url, "SendMessage", {
      message: userMessage("hello", { ...ctx, contextId: "ctx-never-seen" }),
    });
    expect((unknown.body.error as AnyJson).message).to.equal(
      "Session backup is still synchronizing. Retry after 3 seconds.",
    );
    expect((unknown.body.error as AnyJson).data[0].metadata).to.include({
      code: "SESSION_BACKUP_NOT_READY",
      retryable: "true",
    });

    // A model failure would end the task FAILED: its critical backup fails, so it stays INPUT_REQUIRED.
    fixture.enqueue({
      status: 400,
      body: { error: { message: "bad request", type: "invalid_request_error" } },
    });
    const blocked = await send(server.url, "This turn fails.", ctx);
    expect(blocked.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(lastText(blocked)).to.equal(BLOCKED_TEXT);
    const info = blocked.metadata.iac_code.backupBlocked as AnyJson;
    expect(info).to.include({ reason: "terminal", blockedTerminalState: "failed", recoverable: true });
    expect(info.error).to.match(/^(ENOTDIR|EEXIST)/);
    expect(info.error).to.not.include(s.dir);
    expect((await getTask(server.url, blocked.id as string)).status.state).to.equal(
      "TASK_STATE_INPUT_REQUIRED",
    );

    // Writable again: the next turn's backup commits the context with every task.
    rmSync(s.backup);
    const after = await send(server.url, "Which number?", ctx);
    expect(after.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(after.metadata.iac_code).to.not.have.property("backupBlocked");
    const backup = JSON.parse(
      readFileSync(path.join(s.backup, "contexts", `${ctx.contextId}.json`), "utf8"),
    ) as AnyJson;
    expect((backup.tasks as AnyJson[]).map((t) => t.id).sort()).to.deep.equal(
      [first.id, normal.id, blocked.id, after.id].sort(),
    );

    // Nothing acknowledged is lost: kill -9, primary gone, every task comes back from the backup.
    await server.stop("SIGKILL");
    server = undefined;
    rmSync(s.persist, { recursive: true, force: true });
    server = await start(s);
    await send(server.url, "Still there?", ctx);
    for (const task of [first, normal, blocked, after]) {
      const got = await getTask(server.url, task.id as string);
      expect(got.status.state, task.id as string).to.equal(task.status.state);
      expect(historyTexts(got)).to.deep.equal(historyTexts(task));
    }
    expect(lastText(await getTask(server.url, blocked.id as string))).to.equal(BLOCKED_TEXT);
    expect(conversationOf(fixture.lastRequest)).to.include("Remember the number 42.");
  });

  it("a wait for permission with the backup path unwritable carries backupBlocked and keeps its input; CancelTask after a restart stays waiting until the backup works", async () => {
    server = await start(s);
    const ctx = { contextId: "ctx-backup-wait", metadata: { iac_code: { cwd: s.workspace } } };
    await send(server.url, "Hello.", ctx);
    rmSync(s.backup, { recursive: true });
    writeFileSync(s.backup, "not a directory\n");
    fixture.enqueue(toolReply("call-1", "write_file", { path: "out.txt", content: "x\n" }));
    const waiting = await send(server.url, "Write out.txt.", ctx);
    expect(waiting.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(waiting.metadata.iac_code.input).to.include({ kind: "permission" });
    expect(waiting.metadata.iac_code.backupBlocked).to.include({
      reason: "input_required",
      blockedTerminalState: "input-required",
      recoverable: true,
    });

    // After a restart the wait has no live turn: CancelTask needs the terminal backup first.
    await server.stop("SIGKILL");
    server = await start(s);
    const refused = (await rpc(server.url, "CancelTask", { id: waiting.id as string })).body
      .result as AnyJson;
    expect(refused.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    expect(lastText(refused)).to.equal(BLOCKED_TEXT);
    expect(refused.metadata.iac_code.backupBlocked).to.include({
      reason: "terminal",
      blockedTerminalState: "canceled",
    });
    expect(refused.metadata.iac_code.input.inputId).to.equal(waiting.metadata.iac_code.input.inputId);

    rmSync(s.backup);
    const canceled = (await rpc(server.url, "CancelTask", { id: waiting.id as string })).body
      .result as AnyJson;
    expect(canceled.status.state).to.equal("TASK_STATE_CANCELED");
    expect(canceled.metadata.iac_code).to.not.have.property("backupBlocked");
    const backup = JSON.parse(
      readFileSync(path.join(s.backup, "contexts", `${ctx.contextId}.json`), "utf8"),
    ) as AnyJson;
    expect((backup.tasks as AnyJson[]).map((t) => t.id)).to.include(waiting.id);
    expect(existsSync(path.join(s.workspace, "out.txt"))).to.equal(false);
  });

  it("`iac-code state backup <dir>` / `state restore <dir>` round-trip the state database of a stopped server", async () => {
    server = await start(s);
    const ctx = { contextId: "ctx-state-copy", metadata: { iac_code: { cwd: s.workspace } } };
    const task = await send(server.url, "Keep this.", ctx);
    const copy = path.join(s.dir, "operator-copy");
    const cli = (args: string[]) =>
      spawnSync(process.execPath, sourceCliArgs(args), { env: s.env, encoding: "utf8" });

    // A running server holds its database: the backup is refused, naming the PID.
    const refused = cli(["state", "backup", copy, "--persistence-dir", s.persist]);
    expect(refused.status).to.equal(1);
    expect(refused.stderr).to.include(`PID ${server.child.pid}`);

    await server.stop("SIGKILL");
    server = undefined;
    const backedUp = cli(["state", "backup", copy, "--persistence-dir", s.persist]);
    expect(backedUp.status, backedUp.stderr).to.equal(0);
    expect(existsSync(path.join(copy, "state.db"))).to.equal(true);

    rmSync(s.persist, { recursive: true, force: true });
    rmSync(s.backup, { recursive: true, force: true });
    const restored = cli(["state", "restore", copy, "--persistence-dir", s.persist]);
    expect(restored.status, restored.stderr).to.equal(0);
    // A second restore over the restored database needs --force.
    const again = cli(["state", "restore", copy, "--persistence-dir", s.persist]);
    expect(again.status).to.equal(1);
    expect(again.stderr).to.include("--force");

    server = await start(s);
    const got = await getTask(server.url, task.id as string);
    expect(historyTexts(got)).to.deep.equal(historyTexts(task));
    await send(server.url, "And now?", ctx);
    expect(conversationOf(fixture.lastRequest)).to.include("Keep this.");

    const redis = cli(["state", "backup", copy, "--store", "redis"]);
    expect(redis.status).to.equal(1);
    expect(redis.stderr).to.include("docs/operations.md");
  });
});
