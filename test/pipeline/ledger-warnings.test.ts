// A cleanup record that cannot be saved: the store refuses the ledger
// document (as a full disk or a lost lease would), the run goes on and says
// so with a pipeline_warning (cleanup_tracking_unavailable) naming the stack
// whose record is lost, once; the stack is still deleted by the rollback
// (the run still knows it). Reading an unreadable ledger is in scenarios.test.ts.
import { expect } from "chai";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { createAgentRuntime } from "../../src/runtime/index.js";
import type { PipelineEnvelope } from "../../src/runtime/seam.js";
import type { RuntimeStore, StoreScope } from "../../src/runtime/store/runtime-store.js";
import { openStandaloneStore } from "../../src/runtime/store/standalone-store.js";
import { removeTempDirs, silentLogger, tempDir } from "../runtime/helpers.js";
import { choosingAnswers, play } from "./demo-world.js";

/** The real store, except that it refuses every write of the ledger document. */
class LedgerRefusingStore implements RuntimeStore {
  constructor(private readonly inner: RuntimeStore) {}
  log(scope: StoreScope, name: string, options?: { fresh?: boolean }) {
    return this.inner.log(scope, name, options);
  }
  get(scope: StoreScope, name: string) {
    return this.inner.get(scope, name);
  }
  put(scope: StoreScope, name: string, value: string | undefined): void {
    if (name === "ledger") throw new Error("the store refused the ledger document (test)");
    this.inner.put(scope, name, value);
  }
  commit() {
    return this.inner.commit();
  }
  catalog(sessionId: string) {
    return this.inner.catalog(sessionId);
  }
  close() {
    return this.inner.close();
  }
}

describe("pipeline: a cleanup record that cannot be saved", function () {
  this.timeout(60_000);
  after(removeTempDirs);

  it("is a pipeline_warning naming the stack, once, and the rollback still deletes the stack", async () => {
    const dir = await tempDir("iac-ledger-warning-");
    const cwd = path.join(dir, "workspace");
    await mkdir(cwd, { recursive: true });
    const store = new LedgerRefusingStore(openStandaloneStore(path.join(dir, "config"), silentLogger()));
    const runtime = await createAgentRuntime({
      configDir: path.join(dir, "config"),
      env: { HOME: dir },
      homeDir: dir,
      logger: silentLogger(),
      store,
    });
    try {
      const session = await runtime.openSession({ contextId: "ledger-warning", cwd });
      const played = await play(session, "I need a website [demo:deploy-fails]", choosingAnswers("1", "0"));
      const warnings = played.list.filter((e) => e.eventType === "pipeline_warning");
      const failedStack = (
        played.list.find(
          (e) => e.eventType === "tool_result" && e.data.toolName === "ros_deploy" && e.data.isError === true,
        )!.data.result as { stackId: string }
      ).stackId;
      const okStack = (
        played.list.find(
          (e) =>
            e.eventType === "tool_result" && e.data.toolName === "ros_deploy" && e.data.isError === false,
        )!.data.result as { stackId: string }
      ).stackId;
      // One per stack whose record was lost, and one for the rollback's marking.
      expect(warnings.map((e: PipelineEnvelope) => e.data)).to.deep.equal([
        {
          reason: "cleanup_tracking_unavailable",
          operation: "observe",
          resourceId: failedStack,
          message:
            "The cleanup ledger could not be saved: this stack may not be deleted automatically. Check the ROS console.",
        },
        {
          reason: "cleanup_tracking_unavailable",
          operation: "mark_pending",
          resourceCount: 1,
          message:
            "The cleanup ledger could not be saved: this stack may not be deleted automatically. Check the ROS console.",
        },
        {
          reason: "cleanup_tracking_unavailable",
          operation: "observe",
          resourceId: okStack,
          message:
            "The cleanup ledger could not be saved: this stack may not be deleted automatically. Check the ROS console.",
        },
      ]);
      // Published with the deployment's result (in its batch), before the rollback.
      const at = (e: PipelineEnvelope | undefined) => played.list.indexOf(e!);
      const failedResult = played.list.find(
        (e) => e.eventType === "tool_result" && e.data.isError === true && e.data.toolName === "ros_deploy",
      );
      expect(at(warnings[0])).to.equal(at(failedResult) + 1);
      expect(at(warnings[0])).to.be.lessThan(
        at(played.list.find((e) => e.eventType === "rollback_completed")),
      );
      expect(played.list.find((e) => e.eventType === "cleanup_completed")!.data).to.include({
        resourceId: failedStack,
      });
      expect(played.list.at(-2)).to.include({ eventType: "pipeline_completed", status: "completed" });
    } finally {
      await runtime.close();
    }
  });
});
