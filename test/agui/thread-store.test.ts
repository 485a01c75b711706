// Thread state files: safe names, atomic replacement with private permissions,
// lazy loading, strict validation (a corrupt file only affects its thread).
import { expect } from "chai";
import {
  linkSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  symlinkSync,
  mkdirSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  contextIdFor,
  serializeThreadDoc,
  StateUnavailableError,
  ThreadStore,
  threadKey,
  type ThreadDoc,
} from "../../src/agui/threads/thread-store.js";

function doc(threadId: string): ThreadDoc {
  return {
    schemaVersion: 1,
    threadId,
    contextId: contextIdFor(threadId),
    cwd: "/tmp/ws",
    userId: null,
    iacCodeSessionId: null,
    execution: {
      executionId: "exec-1",
      rosInvocationId: "inv-1",
      taskId: "task-1",
      lastTaskId: null,
      pipelineSequence: 0,
      pipelineOpenSteps: ["step:b", "step:a"],
      textSnapshotDigests: [],
      pending: {
        "permission-1": {
          value: { inputId: "permission-1", kind: "permission" },
          sideband: false,
          expiresAt: "2030-01-01T00:00:00.000Z",
        },
      },
    },
    runDigests: { "run-1": "d".repeat(64) },
    appliedResumeDigests: [],
    terminalExecutionIds: [],
  };
}

describe("agui thread store", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), "agui-store-"));
  });

  it("derives safe, collision-free, bounded file names", () => {
    expect(threadKey("8473547e-c8ed-4aef-a84c-603a6a8d42da")).to.equal(
      "8473547e-c8ed-4aef-a84c-603a6a8d42da",
    );
    expect(threadKey("thread-1")).to.equal("thread-1");
    expect(threadKey("Thread-1")).to.equal(`aguiid~${Buffer.from("Thread-1").toString("hex")}`);
    expect(threadKey("../external/thread")).to.match(/^aguiid~[0-9a-f]+$/);
    expect(threadKey("con")).to.match(/^aguiid~/);
    expect(threadKey("a.")).to.match(/^aguiid~/);
    for (const id of ["T".repeat(115), "会话".repeat(40)]) {
      const key = threadKey(id);
      expect(key).to.match(/^aguihash~[0-9a-f]{64}$/);
      expect(key.length).to.be.below(100);
    }
    expect(threadKey("T".repeat(115))).not.to.equal(threadKey("T".repeat(116)));
    expect(() => threadKey("")).to.throw();
    expect(contextIdFor("thread-1")).to.match(/^agui-[0-9a-f]{40}$/);
  });

  it("writes atomically with 0700 directories and a 0600 file, sorted, no temp files left", async () => {
    const store = new ThreadStore({ root });
    await store.save(doc("Thread-1"));
    const file = store.fileFor("Thread-1");
    expect(statSync(root).mode & 0o777).to.equal(0o700);
    expect(statSync(path.join(root, "threads")).mode & 0o777).to.equal(0o700);
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    expect(readdirSync(path.join(root, "threads"))).to.deep.equal([path.basename(file)]);
    const text = readFileSync(file, "utf8");
    expect(text.endsWith("\n")).to.equal(true);
    const parsed = JSON.parse(text) as ThreadDoc;
    expect(Object.keys(parsed)).to.deep.equal([...Object.keys(parsed)].sort());
    expect(parsed.execution.pipelineOpenSteps).to.deep.equal(["step:a", "step:b"]);
  });

  it("with syncEveryWrite (sync-every-commit) writes the same file, then loads it back", async () => {
    const synced = new ThreadStore({ root, syncEveryWrite: true });
    await synced.save(doc("thread-1"));
    await new ThreadStore({ root: path.join(root, "plain") }).save(doc("thread-1"));
    const file = synced.fileFor("thread-1");
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    expect(readdirSync(path.join(root, "threads"))).to.deep.equal(["thread-1.json"]);
    expect(readFileSync(file, "utf8")).to.equal(
      readFileSync(path.join(root, "plain", "threads", "thread-1.json"), "utf8"),
    );
    expect(await new ThreadStore({ root }).load("thread-1")).to.deep.equal(
      await new ThreadStore({ root: path.join(root, "plain") }).load("thread-1"),
    );
  });

  it("loads lazily in a new store and keeps threads separate", async () => {
    await new ThreadStore({ root }).save(doc("thread-1"));
    await new ThreadStore({ root }).save(doc("thread-2"));
    const fresh = new ThreadStore({ root });
    expect(fresh.loaded()).to.deep.equal([]);
    expect((await fresh.load("thread-1"))?.threadId).to.equal("thread-1");
    expect(fresh.loaded().map((d) => d.threadId)).to.deep.equal(["thread-1"]);
    expect(await fresh.load("thread-3")).to.equal(undefined);
  });

  it("a corrupt, foreign or symlinked file makes only that thread unavailable", async () => {
    const store = new ThreadStore({ root });
    await store.save(doc("thread-2"));
    mkdirSync(path.join(root, "threads"), { recursive: true });
    writeFileSync(store.fileFor("thread-1"), "{not json");
    const fresh = new ThreadStore({ root });
    let err: unknown;
    try {
      await fresh.load("thread-1");
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(StateUnavailableError);
    expect((await fresh.load("thread-2"))?.threadId).to.equal("thread-2");

    for (const bad of [
      { ...doc("thread-3"), schemaVersion: 2 },
      { ...doc("thread-3"), threadId: "other" },
      { ...doc("thread-3"), execution: { ...doc("thread-3").execution, pipelineSequence: -1 } },
      { ...doc("thread-3"), execution: { ...doc("thread-3").execution, textSnapshotDigests: ["XYZ"] } },
      {
        ...doc("thread-3"),
        execution: {
          ...doc("thread-3").execution,
          pending: { other: { value: { inputId: "x" }, sideband: false, expiresAt: "2030-01-01T00:00:00Z" } },
        },
      },
    ]) {
      writeFileSync(store.fileFor("thread-3"), JSON.stringify(bad));
      let e3: unknown;
      try {
        await new ThreadStore({ root }).load("thread-3");
      } catch (e) {
        e3 = e;
      }
      expect(e3, JSON.stringify(bad).slice(0, 80)).to.be.instanceOf(StateUnavailableError);
    }
    const target = path.join(root, "elsewhere.json");
    writeFileSync(target, JSON.stringify(doc("thread-4")));
    symlinkSync(target, store.fileFor("thread-4"));
    let e4: unknown;
    try {
      await new ThreadStore({ root }).load("thread-4");
    } catch (e) {
      e4 = e;
    }
    expect(e4).to.be.instanceOf(StateUnavailableError);
  });

  it("a failed write leaves the previous file intact", async () => {
    const store = new ThreadStore({ root });
    await store.save(doc("thread-1"));
    const before = readFileSync(store.fileFor("thread-1"), "utf8");
    store.beforeWrite = () => {
      throw new Error("disk full");
    };
    const changed = { ...doc("thread-1"), runDigests: { "run-2": "e".repeat(64) } };
    let err: unknown;
    try {
      await store.save(changed);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(Error);
    expect(readFileSync(store.fileFor("thread-1"), "utf8")).to.equal(before);
  });

  it("keeps a replaced version as a spare that a later write of any thread fills instead of creating a file", async () => {
    const store = new ThreadStore({ root });
    const dir = path.join(root, "threads");
    const hidden = () => readdirSync(dir).filter((f) => f.startsWith("."));
    // A long first version: the shorter text written over it later must not keep its tail.
    const digests = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`run-${i}`, "d".repeat(64)]));
    await store.save({ ...doc("thread-1"), runDigests: digests });
    expect(hidden()).to.deep.equal([]); // a new file replaced nothing
    const first = statSync(store.fileFor("thread-1")).ino;
    const second = { ...doc("thread-1"), runDigests: { "run-2": "e".repeat(64) } };
    await store.save(second);
    // The first version stays, under a temp name, as the spare.
    expect(hidden()).to.have.length(1);
    const spare = path.join(dir, hidden()[0]);
    expect(statSync(spare).ino).to.equal(first);
    expect(statSync(spare).mode & 0o777).to.equal(0o600);
    // Another thread's first write fills the spare: its file is that inode, with its own text.
    await store.save(doc("thread-2"));
    expect(statSync(store.fileFor("thread-2")).ino).to.equal(first);
    expect(readFileSync(store.fileFor("thread-2"), "utf8")).to.equal(serializeThreadDoc(doc("thread-2")));
    expect(hidden()).to.deep.equal([]);
    expect((await new ThreadStore({ root }).load("thread-2"))?.threadId).to.equal("thread-2");
    expect((await new ThreadStore({ root }).load("thread-1"))?.runDigests).to.deep.equal(second.runDigests);
    // close() removes the spares.
    await store.save(doc("thread-2"));
    expect(hidden()).to.have.length(1);
    store.close();
    expect(hidden()).to.deep.equal([]);
    expect(readdirSync(dir).sort()).to.deep.equal(["thread-1.json", "thread-2.json"]);
  });

  it("never writes into a spare that has another link (another process may hold it)", async () => {
    const store = new ThreadStore({ root });
    const dir = path.join(root, "threads");
    await store.save(doc("thread-1"));
    const old = readFileSync(store.fileFor("thread-1"), "utf8");
    await store.save({ ...doc("thread-1"), runDigests: { "run-2": "e".repeat(64) } });
    const [spare] = readdirSync(dir).filter((f) => f.startsWith("."));
    const elsewhere = path.join(root, "held-elsewhere");
    linkSync(path.join(dir, spare), elsewhere);
    await store.save(doc("thread-2"));
    // The shared inode is untouched and no longer a spare here; thread-2 got a new file.
    expect(readFileSync(elsewhere, "utf8")).to.equal(old);
    expect(statSync(elsewhere).nlink).to.equal(1);
    expect(statSync(store.fileFor("thread-2")).ino).not.to.equal(statSync(elsewhere).ino);
    expect((await new ThreadStore({ root }).load("thread-2"))?.threadId).to.equal("thread-2");
  });
});
