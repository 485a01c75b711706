// kill -9 at random moments of normal and pipeline turns (`iac-code a2a` from
// the sources, SQLite state store): after each restart the conversation and
// the task state agree, because a turn's writes land in the same commits as
// the task state they belong to.
// - Normal turns ([STREAM] text, [CHAIN] a read-only tool between two model
//   calls, [WRITE] a permission answered at once): every turn the client saw
//   end is in both the task history and the conversation; every task whose
//   history has the assistant's reply has it in the conversation too; no tool
//   call is left without its result once the session is opened again.
// - Pipeline turns (every permission and the selection answered): the journal is
//   numbered 1..N without a gap or a repeat, its snapshot is the fold of its
//   events, and the run, continued after the restart, completes once with one
//   stack created.
import { expect } from "chai";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SqliteStateStore } from "../../src/a2a/stores/sqlite-state.js";
import { encodeProtoJson, pb } from "../../src/contract/index.js";
import { envelopesOf, PipelineFiles } from "../../src/runtime/pipeline/files.js";
import { emptySnapshot, reduce } from "../../src/runtime/pipeline/snapshot.js";
import { rebuildConversation } from "../../src/runtime/session/store.js";
import type { Message } from "../../src/runtime/messages.js";
import { sessionScope } from "../../src/runtime/store/runtime-store.js";
import { createLogger } from "../../src/server/logger.js";
import { openStream, resultOf, rpc, stateOf, userMessage, type AnyJson } from "../a2a/helpers.js";
import { RosEndpointFixture } from "../fixtures/ros-endpoint.js";
import { AK, PIPELINE_SCRIPT, SECRET } from "../pipeline/helpers.js";
import {
  answerMessage,
  cleanEnv,
  inputAnswerMessage,
  iacOf,
  isEndOfTurn,
  isInputRequest,
  removeDir,
  SCRIPTS,
  startSourceCli,
  tempDir,
  texts,
  type CliChild,
} from "./helpers.js";

const logger = createLogger({ silent: true });
const INTERRUPTED = "Task was interrupted by process exit and cannot be revived automatically.";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const random = (max: number) => Math.floor(Math.random() * (max + 1));

/** What the client of one killed turn saw. */
interface Round {
  contextId: string;
  taskId: string;
  text: string;
  /** The final text of a turn the client saw end (INPUT_REQUIRED without input). */
  finished?: string;
}

/** The parts of a task (ProtoJSON) the checks read. */
interface TaskJson {
  id: string;
  contextId: string;
  status?: { state?: string };
  history?: Array<{ role?: string; parts?: Array<{ text?: string }> }>;
  metadata?: {
    iac_code?: {
      input?: { kind?: string; inputId?: string; toolUseId?: string; options?: Array<{ id: string }> };
    };
  };
}

interface StoredContext {
  sessionId: string;
  messages: Message[];
  tasks: TaskJson[];
}

/** Reads a stopped server's store: each context's conversation and tasks. */
async function readStore(persistDir: string, contextIds: string[]): Promise<Map<string, StoredContext>> {
  const state = SqliteStateStore.open({ dir: persistDir, syncEveryCommit: false, logger });
  try {
    const out = new Map<string, StoredContext>();
    for (const contextId of contextIds) {
      const context = await state.contexts.get(contextId);
      if (!context) continue;
      const rows = await (
        await state.runtime.log(sessionScope(context.sessionId, contextId), "conversation")
      ).read();
      const page = await state.tasks.list({ owner: "", contextId, pageSize: 100, includeArtifacts: false });
      out.set(contextId, {
        sessionId: context.sessionId,
        messages: rebuildConversation(rows, logger, context.sessionId),
        tasks: (page?.tasks ?? []).map((t) => encodeProtoJson(pb.TaskSchema, t.task) as unknown as TaskJson),
      });
    }
    return out;
  } finally {
    await state.close();
  }
}

function assistantTexts(messages: Message[]): string[] {
  return messages
    .filter((m) => m.role === "assistant")
    .map((m) => m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join(""));
}

/** Tool uses of the conversation without a result right after them. */
function orphanToolCalls(messages: Message[]): string[] {
  const orphans: string[] = [];
  messages.forEach((m, i) => {
    if (m.role !== "assistant") return;
    const results = new Set(
      (messages[i + 1]?.content ?? []).flatMap((b) => (b.type === "tool_result" ? [b.toolUseId] : [])),
    );
    for (const b of m.content) if (b.type === "tool_use" && !results.has(b.id)) orphans.push(b.id);
  });
  return orphans;
}

describe("e2e: kill -9 at random moments, conversation and task state agree", function () {
  this.timeout(240_000);
  let dir: string;
  let server: CliChild | undefined;
  let ros: RosEndpointFixture | undefined;
  afterEach(async () => {
    await server?.stop("SIGKILL");
    server = undefined;
    await ros?.close();
    ros = undefined;
    removeDir(dir);
  });

  function config(lines: string[]): { file: string; persistDir: string; workspace: string } {
    const persistDir = path.join(dir, "persist");
    const workspace = path.join(dir, "workspace");
    mkdirSync(workspace, { recursive: true });
    const file = path.join(dir, "a2a-server.yml");
    writeFileSync(
      file,
      ["port: 0", `persistence-dir: ${JSON.stringify(persistDir)}`, `allowed-cwds: [${JSON.stringify(dir)}]`, "provider: scripted", ...lines, ""].join("\n"),
    ); // prettier-ignore
    return { file, persistDir, workspace };
  }

  it("normal turns: what the client saw end is in both; replies agree; no orphan tool call", async () => {
    dir = tempDir("iac-consistency-");
    const { file, persistDir, workspace } = config([
      `script: ${JSON.stringify(path.join(SCRIPTS, "e2e-crash.yaml"))}`,
    ]);
    const env = cleanEnv(dir, { IAC_CODE_CONFIG_DIR: path.join(dir, "config") });
    const rounds: Round[] = [];
    const kinds = ["[STREAM]", "[CHAIN]", "[WRITE]"];
    for (let i = 0; i < 12; i++) {
      server = await startSourceCli(["a2a", "--config", file], env);
      // Every other round continues the context of the round before (a restored session).
      const previous = i % 2 === 1 ? rounds.at(-1) : undefined;
      const text = `${kinds[i % 3]} round ${i}`;
      const cwd = path.join(workspace, `round-${i}`);
      mkdirSync(cwd);
      const stream = await openStream(server.url, "SendStreamingMessage", {
        message: userMessage(text, {
          metadata: { iac_code: { cwd: previous ? path.join(workspace, `round-${i - 1}`) : cwd } },
          ...(previous ? { contextId: previous.contextId } : {}),
        }),
      });
      const first = await stream.next();
      const task = resultOf(first!).task as AnyJson;
      const round: Round = { contextId: task.contextId as string, taskId: task.id as string, text };
      rounds.push(round);
      const killAt = Date.now() + random(350);
      const seen: Array<Record<string, unknown>> = [first!];
      for (;;) {
        const left = killAt - Date.now();
        if (left <= 0) break;
        const next = await Promise.race([stream.next(), sleep(left).then(() => undefined)]);
        if (!next) break;
        seen.push(next);
        if (isInputRequest(next)) {
          // The permission of [WRITE], answered at once on a stream of its own (read to nothing).
          const waiting = { taskId: round.taskId, contextId: round.contextId, envelope: iacOf(next)!.input as AnyJson };
          void openStream(server.url, "SendStreamingMessage", { message: answerMessage(waiting, "allow_once") })
            .then((s) => s.rest())
            .catch(() => undefined);
        } else if (isEndOfTurn(next)) {
          if (stateOf(next) === "TASK_STATE_INPUT_REQUIRED") round.finished = texts(seen).at(-1);
          break;
        }
      } // prettier-ignore
      await server.stop("SIGKILL");
      stream.stop();
    }

    // After the last restart, one more turn on each context opens (and repairs) its session.
    server = await startSourceCli(["a2a", "--config", file], env);
    const contexts = [...new Set(rounds.map((r) => r.contextId))];
    for (const contextId of contexts) {
      const cwd = path.join(workspace, `round-${rounds.findIndex((r) => r.contextId === contextId)}`);
      const reply = await rpc(server.url, "SendMessage", {
        message: userMessage("after the crashes", { contextId, metadata: { iac_code: { cwd } } }),
      });
      expect(reply.body.error, JSON.stringify(reply.body.error)).to.equal(undefined);
    }
    await server.stop();
    server = undefined;

    const stored = await readStore(persistDir, contexts);
    for (const round of rounds) {
      const context = stored.get(round.contextId)!;
      const where = `${round.text} (${round.taskId})`;
      const users = context.messages.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
      const replies = assistantTexts(context.messages);
      if (round.finished !== undefined) {
        // Acknowledged: the end of the turn the client saw is in the task and in the conversation.
        expect(users.some((u) => u.includes(round.text)), where).to.equal(true);
        expect(replies.some((r) => r.includes(round.finished!)), `${where}: ${JSON.stringify(replies)}`).to.equal(true);
        const task = context.tasks.find((t) => t.id === round.taskId)!;
        expect(JSON.stringify(task.history), where).to.contain(round.finished);
      }
    } // prettier-ignore
    for (const [contextId, context] of stored) {
      expect(orphanToolCalls(context.messages), contextId).to.deep.equal([]);
      // Each agent message a task kept is a reply in the conversation.
      for (const task of context.tasks) {
        for (const m of task.history ?? []) {
          if (m.role !== "ROLE_AGENT") continue;
          const text = (m.parts ?? []).map((p) => p.text ?? "").join("");
          // The server's own notice of a turn its process took down is no reply of the model.
          if (text && text !== INTERRUPTED)
            expect(assistantTexts(context.messages).join("\n"), `${task.id}: ${text}`).to.contain(text);
        }
      }
    }
  });

  it("pipeline turns: the journal stays whole, its snapshot is its fold, and the run completes once", async () => {
    // Permissions (the template writes, the deployment) and the selection are answered as they come.
    dir = tempDir("iac-consistency-pipe-");
    ros = await RosEndpointFixture.start({ [AK]: SECRET });
    ros.timeline = ["CREATE_COMPLETE"];
    const { file, persistDir, workspace } = config([`script: ${JSON.stringify(PIPELINE_SCRIPT)}`]);
    const env = cleanEnv(dir, {
      IAC_CODE_CONFIG_DIR: path.join(dir, "config"),
      ALIBABA_CLOUD_ACCESS_KEY_ID: AK,
      ALIBABA_CLOUD_ACCESS_KEY_SECRET: SECRET,
      IAC_CODE_ROS_ENDPOINT: ros.url,
    });
    const meta = { metadata: { iac_code: { cwd: workspace, runMode: "pipeline" } } };
    let contextId: string | undefined;
    /** Sends the next message of the run: an answer to what waits, else the start or "continue". */
    const nextMessage = async (url: string, first: boolean) => {
      const waiting = contextId ? await inputWaiting(url, contextId) : undefined;
      if (waiting) return { message: inputAnswer(waiting), answered: waiting.inputId };
      const text = first ? "Deploy a small web app" : "continue";
      return {
        message: userMessage(text, { ...meta, ...(contextId ? { contextId } : {}) }),
        answered: undefined,
      };
    };
    // Four processes killed at a random moment of the run (a message on the context continues a run
    // that has not ended: it owns its context).
    for (let i = 0; i < 4; i++) {
      server = await startSourceCli(["a2a", "--config", file], env);
      const { message } = await nextMessage(server.url, i === 0);
      const stream = await openStream(server.url, "SendStreamingMessage", { message });
      const first = await stream.next();
      contextId ??= (resultOf(first!).task as AnyJson).contextId as string;
      await sleep(random(900));
      await server.stop("SIGKILL");
      stream.stop();
      server = undefined;
      await checkJournal(persistDir, contextId);
    }
    // Then one process takes the run to its end, each wait answered as it comes.
    server = await startSourceCli(["a2a", "--config", file], env);
    let done = false;
    /** How each step ended (its last state and text), for the failure message. */
    const steps: string[] = [];
    for (let step = 0; step < 20 && !done; step++) {
      // A run the restart revived goes on by itself: follow it to its next wait or its end.
      const live = await liveTask(server.url, contextId!);
      const revived = live?.status?.state === "TASK_STATE_WORKING";
      const { message, answered } = revived
        ? { message: undefined, answered: undefined }
        : await nextMessage(server.url, false);
      const stream = revived
        ? await openStream(server.url, "SubscribeToTask", { id: live.id })
        : await openStream(server.url, "SendStreamingMessage", { message });
      if (revived) {
        // The run may have reached its next wait (or its end) since it was read: look again.
        const first = await stream.next();
        if (!first || "error" in first) {
          stream.stop();
          steps.push(`followed -> ${JSON.stringify(first).slice(0, 300)}; looked again`);
          continue;
        }
      }
      // The next wait (not the one just answered, which the first event still shows) or the end.
      const events = await stream.until(
        (e) =>
          (isInputRequest(e) &&
            (iacOf(e)?.input as { inputId?: string } | undefined)?.inputId !== answered) ||
          ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"].includes(stateOf(e) ?? ""),
      );
      stream.stop();
      done = stateOf(events.at(-1)!) === "TASK_STATE_COMPLETED";
      steps.push(
        `${revived ? "followed" : (answered ?? "message")} -> ${JSON.stringify(events.at(-1)).slice(0, 600)}`,
      );
    }
    await server.stop();
    server = undefined;
    expect(done, `the pipeline completed; steps:\n${steps.join("\n")}`).to.equal(true);
    const events = await checkJournal(persistDir, contextId!);
    expect(events.filter((e) => e.eventType === "pipeline_completed")).to.have.length(1);
    // A deployment the kill cut off is reported interrupted, never run again by the engine; the
    // model may deploy once more after reading that.
    expect(ros.callsOf("CreateStack").length).to.be.within(1, 2);
  });
});

interface Waiting {
  task: TaskJson;
  kind: string;
  inputId: string;
  toolUseId: string;
  /** The last option offered (the second candidate when both passed). */
  option?: string;
}

/**
 * The context's live task: the latest one working or waiting for input. (A message refused while
 * a revived run works is a task of its own, failed: it is not the run.)
 */
async function liveTask(url: string, contextId: string): Promise<TaskJson | undefined> {
  const page = (await rpc(url, "ListTasks", { contextId, pageSize: 20 })).body.result as {
    tasks: TaskJson[];
  };
  const live = ["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"];
  return page.tasks.find((t) => live.includes(t.status?.state ?? ""));
}

/** The input the context's live task waits for, if any. */
async function inputWaiting(url: string, contextId: string): Promise<Waiting | undefined> {
  const task = await liveTask(url, contextId);
  const input = task?.metadata?.iac_code?.input;
  return task?.status?.state === "TASK_STATE_INPUT_REQUIRED" && input?.inputId
    ? {
        task,
        kind: input.kind ?? "",
        inputId: input.inputId,
        toolUseId: input.toolUseId ?? "",
        option: input.options?.at(-1)?.id,
      }
    : undefined;
}

/** allow_once for a permission, the last option offered for a choice (or a free text without one). */
function inputAnswer(waiting: Waiting): Record<string, unknown> {
  const { task, kind, inputId, toolUseId, option } = waiting;
  const answer =
    kind === "permission"
      ? { decision: "allow_once" }
      : option !== undefined
        ? { selectedId: option }
        : { freeText: "a small web app, please" };
  return inputAnswerMessage(
    { taskId: task.id, contextId: task.contextId, envelope: { kind, inputId, toolUseId } },
    answer,
  );
}

/** The pipeline journal of a stopped server's context: numbered 1..N, each event once, the snapshot its fold. */
async function checkJournal(persistDir: string, contextId: string) {
  const state = SqliteStateStore.open({ dir: persistDir, syncEveryCommit: false, logger });
  try {
    const context = await state.contexts.get(contextId);
    expect(context, "the context is stored").to.exist;
    const files = await PipelineFiles.open(state.runtime, context!.sessionId, contextId);
    const events = envelopesOf(await files.journal.read());
    expect(events.map((e) => e.sequence)).to.deep.equal(events.map((_, i) => i + 1));
    expect(new Set(events.map((e) => e.eventId)).size).to.equal(events.length);
    const folded = emptySnapshot();
    for (const e of events) reduce(folded, e);
    const snapshot = await files.snapshot();
    expect({ ...snapshot, updatedAt: "" }).to.deep.equal({ ...folded, updatedAt: "" });
    return events;
  } finally {
    await state.close();
  }
}
