// A task its process left WORKING, whose session has a run that can go on
// (AgentSession.revivable): the server continues it at start-up instead of
// failing it, and an answer to a wait the revived run has not published again
// yet is taken at once (checked against that wait) and handed over when the
// wait is published. A session with nothing to continue fails the task as
// before. The runtime here is a double whose revived turn publishes its wait
// only when the test says so.
import { expect } from "chai";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { pb } from "../../src/contract/index.js";
import { startA2aServer, type RunningA2aServer } from "../../src/a2a/server.js";
import { SqliteStateStore } from "../../src/a2a/stores/sqlite-state.js";
import { resolveSettings } from "../../src/a2a/config/server-settings.js";
import { createLogger } from "../../src/server/logger.js";
import type {
  AgentRuntime,
  AgentSession,
  InputAnswer,
  InputRequest,
  RuntimeEvent,
} from "../../src/runtime/seam.js";
import { writePermissionRequest } from "../fixtures/input-requests.js";
import { rpc, userMessage } from "./helpers.js";
import { removeTempDirs, tempDir } from "../runtime/helpers.js";

const WAIT = writePermissionRequest({ inputId: "permission-revived", toolUseId: "toolu_revived" });

/** A session whose run a restart interrupted: resumeTurn publishes WAIT once released, then ends with text. */
class RevivableSession implements AgentSession {
  readonly cwd: string;
  answers: InputAnswer[] = [];
  private release!: () => void;
  readonly released = new Promise<void>((resolve) => (this.release = resolve));
  private answered?: (answer: InputAnswer) => void;
  published = false;

  constructor(
    readonly sessionId: string,
    cwd: string,
    private readonly canRevive: boolean,
  ) {
    this.cwd = cwd;
  }

  publish(): void {
    this.release();
  }
  revivable(): boolean {
    return this.canRevive;
  }
  pendingInputs(): InputRequest[] {
    return [WAIT];
  }
  answerInput(answer: InputAnswer): boolean {
    if (!this.published || !this.answered) return false;
    this.answers.push(answer);
    this.answered(answer);
    return true;
  }
  // eslint-disable-next-line @typescript-eslint/require-await -- the seam's turns are async; this one has nothing to wait for
  async *runTurn(): AsyncGenerator<RuntimeEvent> {
    yield { type: "error", kind: "fatal", message: "not in this test" };
  }
  async *resumeTurn(): AsyncGenerator<RuntimeEvent> {
    await this.released;
    const answer = new Promise<InputAnswer>((resolve) => (this.answered = resolve));
    this.published = true;
    yield { type: "input_required", request: WAIT };
    const given = await answer;
    const decision = given.kind === "permission" ? given.decision : "none";
    yield { type: "text_delta", messageId: "m-after", text: `went on with ${decision}` };
    yield {
      type: "message_end",
      messageId: "m-after",
      stopReason: "end_turn",
      text: `went on with ${decision}`,
    };
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

class RevivableRuntime implements AgentRuntime {
  readonly sessions = new Map<string, RevivableSession>();
  constructor(private readonly canRevive: boolean) {}
  openSession(options: { contextId: string; cwd: string; sessionId?: string }): Promise<AgentSession> {
    const id = options.sessionId ?? `session-${options.contextId}`;
    const session = new RevivableSession(id, options.cwd, this.canRevive);
    this.sessions.set(options.contextId, session);
    return Promise.resolve(session);
  }
  info() {
    return { provider: "test", model: "revivable", demo: false };
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** The store as a process killed mid-turn left it: the task WORKING, its context bound to a session. */
async function killedMidTurn(persistence: string, cwd: string): Promise<void> {
  const store = SqliteStateStore.open({
    dir: persistence,
    syncEveryCommit: false,
    logger: createLogger({ silent: true }),
  });
  store.contexts.save({ contextId: "ctx-1", sessionId: "session-1", cwd, owner: "", updatedAt: 1000 });
  store.tasks.save({
    task: create(pb.TaskSchema, {
      id: "task-1",
      contextId: "ctx-1",
      status: { state: pb.TaskState.WORKING, timestamp: timestampFromMs(1000) },
      history: [
        { messageId: "m-1", role: pb.Role.USER, parts: [{ content: { case: "text", value: "go" } }] },
      ],
    }),
    owner: "",
    updatedAt: 1000,
    language: "en",
    credentialNames: [],
  });
  await store.close();
}

const answerPart = (toolUseId: string) => ({
  mediaType: "application/json",
  data: { schemaVersion: 1, kind: "permission", requestTaskId: "task-1", inputId: WAIT.inputId, toolUseId, decision: "allow_once" },
}); // prettier-ignore

async function taskState(url: string): Promise<string> {
  const reply = await rpc(url, "GetTask", { id: "task-1" });
  return (reply.body.result as { status: { state: string } }).status.state;
}

describe("A2A: a pipeline run left WORKING by a dead process", function () {
  this.timeout(30_000);
  let dir: string;
  let server: RunningA2aServer | undefined;

  beforeEach(async () => {
    dir = await tempDir("iac-revival-");
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  after(removeTempDirs);

  async function start(runtime: AgentRuntime): Promise<RunningA2aServer> {
    const persistence = path.join(dir, "persist");
    await killedMidTurn(persistence, dir);
    const settings = resolveSettings({ port: 0, "persistence-dir": persistence }, {}, {});
    server = await startA2aServer(settings, {
      runtime,
      logger: createLogger({ silent: true }),
      cwd: dir,
      env: { IACCODE_A2A_ALLOWED_CWDS: dir },
    });
    return server;
  }

  it("is continued at start-up; an answer before its wait is published again is taken, then handed over", async () => {
    const runtime = new RevivableRuntime(true);
    const { url } = await start(runtime);
    expect(await taskState(url)).to.equal("TASK_STATE_WORKING");
    const session = runtime.sessions.get("ctx-1")!;

    // A wrong correlation is refused even before the wait is published again.
    const wrong = await rpc(url, "SendMessage", {
      message: userMessage("", { taskId: "task-1", contextId: "ctx-1", parts: [answerPart("toolu_other")] }),
    });
    expect((wrong.body.error as { code: number; message: string }).message).to.contain(
      "input_response_mismatch",
    );

    // The right answer is taken now; the unary call returns once the turn has gone on and ended.
    const reply = rpc(url, "SendMessage", {
      message: userMessage("", { taskId: "task-1", contextId: "ctx-1", parts: [answerPart(WAIT.toolUseId)] }),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(session.answers).to.deep.equal([]);
    session.publish();
    const body = (await reply).body;
    expect(body.error, JSON.stringify(body.error)).to.equal(undefined);
    expect(session.answers).to.deep.equal([
      { kind: "permission", inputId: WAIT.inputId, decision: "allow_once" },
    ]);
    const task = (body.result as { task: { history: Array<{ parts: Array<{ text?: string }> }> } }).task;
    expect(JSON.stringify(task)).to.contain("went on with allow_once");
    expect(await taskState(url)).to.equal("TASK_STATE_INPUT_REQUIRED");
  });

  it("a session with nothing to continue: the task ends FAILED with the reason, as before", async () => {
    const { url } = await start(new RevivableRuntime(false));
    expect(await taskState(url)).to.equal("TASK_STATE_FAILED");
  });
});
