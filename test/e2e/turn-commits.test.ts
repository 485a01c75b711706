// A turn of the runtime hosted by the A2A server lands in one transaction with
// the task state it ends in: a unary SendMessage answered from text alone is
// one group commit (task, context, the session's identity, conversation and
// usage), not one for the working task and another for the final one.
import { expect } from "chai";
import { pb } from "../../src/contract/index.js";
import { rpc, userMessage } from "../a2a/helpers.js";
import { removeDir, startE2eServer, type E2eServer } from "./helpers.js";

describe("e2e: one commit per turn hosted by the A2A server", function () {
  this.timeout(20_000);
  let e2e: E2eServer;
  before(async () => {
    e2e = await startE2eServer({ script: "e2e-a2a.yaml" });
  });
  after(async () => {
    await e2e?.close();
    if (e2e) removeDir(e2e.dir);
  });

  interface TaskJson {
    id: string;
    contextId: string;
    status: { state: string };
  }
  const send = async (text: string): Promise<TaskJson> => {
    const reply = await rpc(e2e.url, "SendMessage", { message: userMessage(text) });
    expect(reply.status).to.equal(200);
    return (reply.body.result as { task: TaskJson }).task;
  };

  it("writes a unary turn's task, context and session rows in one commit, all of them", async () => {
    await send("hello");
    const before = e2e.state.commits;
    const task = await send("hello again");
    expect(e2e.state.commits - before).to.equal(1);
    expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
    const stored = await e2e.state.tasks.get(task.id);
    expect(stored?.task.status?.state).to.equal(pb.TaskState.INPUT_REQUIRED);
    const context = await e2e.state.contexts.get(task.contextId);
    const session = await e2e.runtime.openSession({
      contextId: task.contextId,
      cwd: e2e.workspace,
      sessionId: context!.sessionId,
    });
    const roles = (session as unknown as { conversation(): Array<{ role: string }> })
      .conversation()
      .map((m) => m.role);
    expect(roles).to.deep.equal(["user", "assistant"]);
  });
});
