// The adapter's memory does not grow with the threads it has served: its store
// keeps a limited number of threads (the least recently used idle ones leave),
// and a thread with an interrupt waiting stays loaded whatever its age; a
// thread that left memory is read again from its file and goes on as before.
import { expect } from "chai";
import { post, runInput, startHarness, type Harness } from "./harness.js";

describe("AG-UI adapter: idle threads leave memory (thread cache)", function () {
  this.timeout(60_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({ cacheLimit: 3 });
  });
  after(async () => {
    await h.close();
  });

  it("keeps at most the limit of threads, a waiting one whatever its age; an evicted thread runs again from its file", async () => {
    const waiting = await post(
      h.url,
      runInput(h, { threadId: "waits", runId: "w1", text: "[[permission]]" }),
    );
    const interrupt = (waiting.events.at(-1)!.outcome as { interrupts: Array<{ id: string }> }).interrupts[0];
    for (let i = 0; i < 8; i++) {
      const run = await post(h.url, runInput(h, { threadId: `idle-${i}`, runId: "r1", text: "hello" }));
      expect(run.events.at(-1)).to.deep.include({ type: "RUN_FINISHED", outcome: { type: "success" } });
    }
    const loaded = h.store.loaded().map((doc) => doc.threadId);
    expect(loaded).to.have.length(3);
    expect(loaded).to.include.members(["waits", "idle-6", "idle-7"]);
    expect(h.agui.adapter.interruptsWaiting()).to.equal(1);
    expect(h.agui.adapter.isIdle()).to.equal(false);

    // The first idle thread left memory: its next run reads it back and continues the thread.
    const again = await post(h.url, runInput(h, { threadId: "idle-0", runId: "r2", text: "hello again" }));
    expect(again.events.at(-1), JSON.stringify(again.events.at(-1))).to.deep.include({
      type: "RUN_FINISHED",
      outcome: { type: "success" },
    });
    expect((await h.store.load("idle-0"))?.runDigests).to.have.keys(["r1", "r2"]);
    // The waiting thread stayed: its answer resumes it.
    const resumed = await post(
      h.url,
      runInput(h, {
        threadId: "waits",
        runId: "w2",
        resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }],
      }),
    );
    expect(resumed.events.at(-1), JSON.stringify(resumed.events.at(-1))).to.deep.include({
      type: "RUN_FINISHED",
      outcome: { type: "success" },
    });
    expect(h.agui.adapter.interruptsWaiting()).to.equal(0);
  });
});
