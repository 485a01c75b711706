// Restarts and cancellation: a permission wait survives a restart (graceful or
// not) and is answered afterwards; restored conversations are repaired;
// cancelled turns deny their inputs and leave no half-written file.
import { expect } from "chai";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "../../src/runtime/fs-util.js";
import type { AgentSession, RuntimeEvent } from "../../src/runtime/seam.js";
import {
  allowOnce,
  drive,
  ofType,
  removeTempDirs,
  seedStore,
  storedJsonRows,
  storedRows,
  tempDir,
  turn,
  openToolSession,
  type ToolSession,
} from "./helpers.js";

type Env = ToolSession;

function open(configDir: string, cwd: string, sessionId?: string): Promise<Env> {
  return openToolSession(configDir, cwd, { contextId: "ctx-r", sessionId });
}

async function setup(): Promise<Env> {
  return open(await tempDir(), await tempDir("iac-ws-"));
}

/** Starts a turn and reads events up to (and including) the first input_required. */
async function untilInput(session: AgentSession, text: string, signal = new AbortController().signal) {
  const iterator = session.runTurn({ text, images: [], overrides: {} }, signal)[Symbol.asyncIterator]();
  const events: RuntimeEvent[] = [];
  for (;;) {
    const step = await iterator.next();
    if (step.done) throw new Error("the turn ended without asking");
    events.push(step.value);
    if (step.value.type === "input_required") return { iterator, events, request: step.value.request };
  }
}

async function rest(iterator: AsyncIterator<RuntimeEvent>): Promise<RuntimeEvent[]> {
  const out: RuntimeEvent[] = [];
  for (let step = await iterator.next(); !step.done; step = await iterator.next()) out.push(step.value);
  return out;
}

/** The session's conversation rows and audit lines, as committed. */
function conversationText(env: Env): string {
  return storedRows(env.configDir, env.session.sessionId, "conversation").join("\n");
}
function auditOf(env: Env): Array<Record<string, unknown>> {
  return storedJsonRows(env.configDir, env.session.sessionId, "permission-audit") as Array<
    Record<string, unknown>
  >;
}

describe("runtime: restart and cancellation", () => {
  let env: Env;
  afterEach(async () => {
    await env?.runtime.close();
    await removeTempDirs();
  });

  it("keeps a permission wait across a graceful restart; the answer after restart runs the tool", async () => {
    env = await setup();
    const { iterator, request } = await untilInput(env.session, "[WRITE]");
    const sessionId = env.session.sessionId;
    await env.runtime.close();
    expect(await rest(iterator)).to.deep.equal([]);
    expect(await readdir(env.cwd)).to.deep.equal([]);

    env = await open(env.configDir, env.cwd, sessionId);
    expect(env.session.pendingInputs()).to.deep.equal([request]);
    expect(
      env.session.answerInput({ inputId: request.inputId, kind: "permission", decision: "allow_once" }),
    ).to.equal(true);
    const events = await drive(env.session.resumeTurn({}, new AbortController().signal), env.session);
    expect(events[0]).to.deep.equal({
      type: "input_received",
      inputId: request.inputId,
      toolUseId: request.toolUseId,
      kind: "permission",
      decision: "allow_once",
    });
    expect(ofType(events, "tool_result")[0]).to.include({ name: "write_file", isError: false });
    expect(ofType(events, "message_end").at(-1)?.text).to.equal("notes.yaml is written.");
    expect(await readFile(path.join(env.cwd, "notes.yaml"), "utf8")).to.equal("a: 1\n");
    expect(env.session.pendingInputs()).to.deep.equal([]);

    // Nothing is left to resume, and the conversation reloads complete.
    await env.runtime.close();
    env = await open(env.configDir, env.cwd, sessionId);
    expect(await drive(env.session.resumeTurn({}, new AbortController().signal), env.session)).to.deep.equal(
      [],
    );
    const followUp = await turn(env.session, "anything else?");
    expect(ofType(followUp, "message_end")[0].text).to.equal("Plain answer.");
  });

  it("survives a crash (nothing flushed after the question) and re-publishes the input on resume", async () => {
    env = await setup();
    const first = env;
    const { request } = await untilInput(env.session, "[WRITE]");
    // A second runtime on the same directory plays the restarted process; the first is simply abandoned.
    env = await open(first.configDir, first.cwd, first.session.sessionId);
    expect(env.session.pendingInputs().map((r) => r.inputId)).to.deep.equal([request.inputId]);
    const events = await drive(
      env.session.resumeTurn({ language: "en" }, new AbortController().signal),
      env.session,
      {
        answer: allowOnce,
      },
    );
    expect(events[0]).to.deep.equal({ type: "input_required", request });
    expect(ofType(events, "tool_result")[0].isError).to.equal(false);
    expect(await readFile(path.join(env.cwd, "notes.yaml"), "utf8")).to.equal("a: 1\n");
    await first.runtime.close();
  });

  it("keeps a question across a restart; the answer after restart reaches the model", async () => {
    env = await setup();
    const { iterator, request } = await untilInput(env.session, "[ASK]");
    expect(request).to.include({ kind: "ask_user_question", inputId: `ask-${request.toolUseId}` });
    const sessionId = env.session.sessionId;
    await env.runtime.close();
    expect(await rest(iterator)).to.deep.equal([]);
    env = await open(env.configDir, env.cwd, sessionId);
    expect(env.session.pendingInputs()).to.deep.equal([request]);
    expect(
      env.session.answerInput({
        inputId: request.inputId,
        kind: "ask_user_question",
        freeText: "Beijing please",
      }),
    ).to.equal(true);
    const events = await drive(env.session.resumeTurn({}, new AbortController().signal), env.session);
    expect(ofType(events, "input_received")[0]).to.include({
      inputId: request.inputId,
      kind: "ask_user_question",
    });
    expect(ofType(events, "tool_result")[0].result).to.deep.equal({
      selected_id: null,
      selected_label: null,
      free_text: "Beijing please",
    });
    expect(ofType(events, "message_end").at(-1)?.text).to.equal("Thanks for answering.");
  });

  it("a new message instead of an answer closes the waiting call and runs the new turn", async () => {
    env = await setup();
    const { request } = await untilInput(env.session, "[WRITE]");
    const sessionId = env.session.sessionId;
    await env.runtime.close();
    env = await open(env.configDir, env.cwd, sessionId);
    const events = await turn(env.session, "never mind");
    expect(ofType(events, "message_end")[0].text).to.equal("Plain answer.");
    expect(env.session.pendingInputs()).to.deep.equal([]);
    expect(conversationText(env)).to.include("Not run: the user sent a new message instead of answering.");
    expect(auditOf(env).at(-1)).to.include({
      inputId: request.inputId,
      decision: "cancelled",
      reason: "superseded",
    });
  });

  it("repairs a tool call left without result when a session is restored", async () => {
    env = await setup();
    const rows = [
      {
        type: "message",
        message: {
          id: "m1",
          role: "user",
          content: [{ type: "text", text: "list" }],
          createdAt: "2026-01-01T00:00:00Z",
        },
      },
      {
        type: "message",
        message: {
          id: "m2",
          role: "assistant",
          content: [{ type: "tool_use", id: "call_x", name: "list_files", input: {} }],
          createdAt: "2026-01-01T00:00:01Z",
        },
      },
    ];
    const sessionId = env.session.sessionId;
    await env.runtime.close();
    // The rows a process killed between the call and its result leaves, and one it could not finish.
    seedStore(env.configDir, sessionId, { rows: { conversation: [...rows, "{torn"] } });
    env = await open(env.configDir, env.cwd, sessionId);
    expect(env.session.pendingInputs()).to.deep.equal([]);
    const lines = storedRows(env.configDir, sessionId, "conversation");
    const repaired = JSON.parse(lines.at(-1) as string) as {
      type: string;
      block: { toolUseId: string; isError: boolean };
    };
    expect(repaired).to.deep.include({ type: "tool_result" });
    expect(repaired.block).to.include({ toolUseId: "call_x", isError: true });
    const events = await turn(env.session, "and now?");
    expect(ofType(events, "message_end")[0].text).to.equal("Plain answer.");
  });

  /** The store as a restart finds it: `use` allowed and started, its result never recorded. */
  async function startedBeforeRestart(
    text: string,
    use: { id: string; name: string; input: Record<string, unknown> },
  ) {
    const rows = [
      {
        type: "message",
        message: { id: "m1", role: "user", content: [{ type: "text", text }], createdAt: "t" },
      },
      {
        type: "message",
        message: { id: "m2", role: "assistant", content: [{ type: "tool_use", ...use }], createdAt: "t" },
      },
    ];
    const request = {
      inputId: "permission-0123456789abcdef0123456789abcdef",
      kind: "permission",
      toolUseId: use.id,
      toolName: use.name,
      title: "Change twice.txt.",
      purpose: "p",
      effect: "file_change",
      isReadOnly: false,
      prompt: "Change twice.txt. Allow once?",
      safeSummary: use.name,
      options: [],
      responseSchema: {},
      language: "en",
    };
    const sessionId = env.session.sessionId;
    await env.runtime.close();
    seedStore(env.configDir, sessionId, {
      rows: { conversation: rows },
      docs: {
        "pending-round": {
          version: 1,
          assistantMessageId: "m2",
          decisions: { [use.id]: { allowed: true, reason: "user:allow_once" } },
          inputs: [
            { request, answer: { inputId: request.inputId, kind: "permission", decision: "allow_once" } },
          ],
          started: [use.id],
        },
      },
    });
    env = await open(env.configDir, env.cwd, sessionId);
    return drive(env.session.resumeTurn({}, new AbortController().signal), env.session);
  }

  it("does not run twice a side-effecting call that had started before the restart", async () => {
    env = await setup();
    await writeFile(path.join(env.cwd, "twice.txt"), "x");
    const events = await startedBeforeRestart("[EDIT]", {
      id: "call_e",
      name: "edit_file",
      input: { path: "twice.txt", old_string: "x", new_string: "xx" },
    });
    expect(ofType(events, "tool_result")[0]).to.include({
      toolUseId: "call_e",
      isError: true,
      result: "The tool call was interrupted before it finished (the server restarted).",
    });
    expect(ofType(events, "input_required")).to.deep.equal([]);
    expect(await readFile(path.join(env.cwd, "twice.txt"), "utf8")).to.equal("x");
  });

  it("runs again, without asking again, a started call whose second run is its first (write_file)", async () => {
    env = await setup();
    const events = await startedBeforeRestart("[WRITE]", {
      id: "call_w",
      name: "write_file",
      input: { path: "twice.txt", content: "x" },
    });
    expect(ofType(events, "tool_result")[0]).to.include({ toolUseId: "call_w", isError: false });
    expect(ofType(events, "input_required")).to.deep.equal([]);
    expect(await readFile(path.join(env.cwd, "twice.txt"), "utf8")).to.equal("x");
  });

  it("cancelling while a permission waits denies it (audited) and writes nothing", async () => {
    env = await setup();
    const controller = new AbortController();
    const { iterator } = await untilInput(env.session, "[WRITE]", controller.signal);
    controller.abort();
    const after = await rest(iterator);
    expect(ofType(after, "tool_result")).to.have.length(0);
    expect(await readdir(env.cwd)).to.deep.equal([]);
    expect(env.session.pendingInputs()).to.deep.equal([]);
    expect(auditOf(env)).to.have.length(1);
    expect(auditOf(env)[0]).to.include({ decision: "cancelled", reason: "cancelled" });
    expect(conversationText(env)).to.include("Permission denied: the request was cancelled.");
    // The session stays usable.
    const next = await turn(env.session, "hello");
    expect(ofType(next, "message_end")[0].text).to.equal("Plain answer.");
  });

  it("cancelling while a write call streams leaves no file and no assistant message", async () => {
    env = await setup();
    const controller = new AbortController();
    const events = await turn(env.session, "[SLOW-TOOL-ARGS]", {
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "tool_use_end") setImmediate(() => controller.abort());
      },
    });
    expect(ofType(events, "message_end")[0]).to.include({ stopReason: "cancelled" });
    expect(ofType(events, "tool_result")).to.have.length(0);
    expect(await readdir(env.cwd)).to.deep.equal([]);
    expect(storedRows(env.configDir, env.session.sessionId, "conversation")).to.have.length(1);
  });

  it("an atomic write aborted before its rename leaves the old content and no temporary file", async () => {
    const dir = await tempDir("iac-atomic-");
    const target = path.join(dir, "vpc.yaml");
    await writeFile(target, "old: true\n");
    const controller = new AbortController();
    let error: unknown;
    try {
      await writeFileAtomic(target, "new: true\n".repeat(10_000), {
        signal: controller.signal,
        beforeRename: () => controller.abort(),
      });
    } catch (e) {
      error = e;
    }
    expect((error as Error).name).to.equal("AbortError");
    expect(await readFile(target, "utf8")).to.equal("old: true\n");
    expect(await readdir(dir)).to.deep.equal(["vpc.yaml"]);
    env = await setup();
  });

  it("rejects opening a saved session from another workspace", async () => {
    env = await setup();
    const other = await tempDir("iac-other-");
    await mkdir(path.join(other, "x"));
    const sessionId = env.session.sessionId;
    await env.runtime.close();
    env = await open(env.configDir, env.cwd, sessionId);
    let error: unknown;
    try {
      await env.runtime.openSession({ contextId: "ctx-r", cwd: path.join(other, "x"), sessionId });
    } catch (e) {
      error = e;
    }
    expect((error as Error).message).to.equal("The session belongs to a different workspace.");
    let bad: unknown;
    try {
      await env.runtime.openSession({ contextId: "ctx-r", cwd: env.cwd, sessionId: "../escape" });
    } catch (e) {
      bad = e;
    }
    expect((bad as Error).message).to.equal("Invalid session id.");
  });
});
