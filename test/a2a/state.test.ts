/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- tests read free-form JSON-RPC replies through `any` */
// The state layer: group commit, keyset paging under concurrent inserts,
// totals per filter, one owner per persistence dir, crash recovery and
// per-request credentials after a restart.
import { expect } from "chai";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { pb } from "../../src/contract/index.js";
import { settleInterruptedTasks } from "../../src/a2a/core/turn/recovery.js";
import { PersistenceDirInUseError } from "../../src/a2a/stores/owner-lock.js";
import { SqliteStateStore } from "../../src/a2a/stores/sqlite-state.js";
import type { AuditEntry, StoredTask } from "../../src/a2a/stores/state.js";
import { createLogger } from "../../src/server/logger.js";
import { resolveSettings } from "../../src/a2a/config/server-settings.js";
import {
  cleanup,
  makeTempDir,
  resultOf,
  startTestServer,
  stateOf,
  openStream,
  userMessage,
} from "./helpers.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests peek into free-form JSON
type Json = Record<string, any>;
const logger = createLogger({ silent: true });

function storedTask(
  id: string,
  contextId: string,
  state: pb.TaskState,
  ms: number,
  language = "en",
): StoredTask {
  return {
    task: create(pb.TaskSchema, {
      id,
      contextId,
      status: { state, timestamp: timestampFromMs(ms) },
      history: [
        { messageId: `${id}-m`, role: pb.Role.USER, parts: [{ content: { case: "text", value: id } }] },
      ],
    }),
    owner: "",
    updatedAt: ms,
    language,
    credentialNames: [],
  };
}

/** A store whose audit lines fail to insert `when` (an SQL condition on NEW.line), as a full disk fails them. */
function storeWithFailingAudit(dir: string, when: string) {
  const store = SqliteStateStore.open({ dir, syncEveryCommit: false, logger });
  // The store holds the database's only connection (exclusive locking): the trigger goes through it.
  const db = (store as unknown as { db: import("better-sqlite3").Database }).db;
  db.exec(`CREATE TRIGGER fail_audit BEFORE INSERT ON permission_audit_lines WHEN ${when}
           BEGIN SELECT RAISE(FAIL, 'disk I/O error (test)'); END`);
  return { store, diskBack: () => db.exec("DROP TRIGGER fail_audit") };
}

function auditEntry(inputId: string, decision: AuditEntry["decision"]): AuditEntry {
  return {
    ts: "2026-01-01T00:00:00.000Z", sessionId: "s-1", taskId: "t-1", contextId: "ctx-1", owner: "",
    toolName: "write_file", toolUseId: inputId, inputId, decision, reason: "test", autoApproved: false,
  }; // prettier-ignore
}

describe("A2A state store", () => {
  let dir: string;
  beforeEach(() => {
    dir = makeTempDir("iac-state-");
  });
  afterEach(() => cleanup(dir));

  it("writes every change of one event-loop turn in one transaction, and reads see staged changes", async () => {
    const store = SqliteStateStore.open({ dir, syncEveryCommit: false, logger });
    try {
      for (let i = 0; i < 5; i += 1)
        store.tasks.save(storedTask(`t-${i}`, "ctx", pb.TaskState.WORKING, 1000 + i));
      store.contexts.save({ contextId: "ctx", sessionId: "s", cwd: "/tmp", owner: "", updatedAt: 1 });
      expect(store.commits).to.equal(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(store.commits).to.equal(1);

      store.tasks.save(storedTask("t-late", "ctx", pb.TaskState.WORKING, 2000));
      // A read commits what is staged first (read your writes), in one more transaction.
      expect((await store.tasks.get("t-late"))?.task.id).to.equal("t-late");
      expect(store.commits).to.equal(2);
      await store.commit();
      expect(store.commits).to.equal(2);
      expect(await store.contexts.get("ctx")).to.include({ sessionId: "s", cwd: "/tmp" });
    } finally {
      await store.close();
    }
  });

  it("an audit record whose commit failed never lands later, and takes no other record with it", async () => {
    const { store, diskBack } = storeWithFailingAudit(dir, `NEW.line LIKE '%"deny"%'`);
    try {
      store.contexts.save({ contextId: "ctx-1", sessionId: "s-1", cwd: "/tmp", owner: "", updatedAt: 1 });
      // The failing commit's first waiter hears first: the disk comes back, a read commits what was
      // restaged, and a second decision is recorded, all before the failed record is taken out.
      let later: Promise<void> | undefined;
      const first = store.commit().catch(() => {
        diskBack();
        void store.tasks.get("none");
        later = store.audit.record(auditEntry("i-2", "allow_once"));
      });
      let failed: unknown;
      await store.audit.record(auditEntry("i-1", "deny")).catch((error: unknown) => (failed = error));
      await first;
      expect(String(failed)).to.include("disk I/O error (test)");
      await later;
      // The failed record did not land with the read's commit; the second one was written.
      expect((await store.audit.entries()).map((e) => e.inputId)).to.deep.equal(["i-2"]);
    } finally {
      await store.close();
    }
  });

  it("an audit record whose commit failed under a read stays staged and lands with the next commit", async () => {
    const { store, diskBack } = storeWithFailingAudit(dir, "1");
    try {
      const recorded = store.audit.record(auditEntry("i-1", "allow_once"));
      // A read commits what is staged first: that commit fails, the read with it, not the record.
      const read = await store.tasks.get("none").catch((error: unknown) => error);
      expect(String(read)).to.include("disk I/O error (test)");
      diskBack();
      await recorded;
      expect((await store.audit.entries()).map((e) => e.inputId)).to.deep.equal(["i-1"]);
    } finally {
      await store.close();
    }
  });

  it("answers totalSize per filter from the counts kept by the database", async () => {
    const store = SqliteStateStore.open({ dir, syncEveryCommit: false, logger });
    try {
      const states = [pb.TaskState.WORKING, pb.TaskState.INPUT_REQUIRED, pb.TaskState.FAILED];
      const all: StoredTask[] = [];
      for (let i = 0; i < 30; i += 1) {
        const task = storedTask(`t-${String(i).padStart(2, "0")}`, `ctx-${i % 4}`, states[i % 3], 1000 + i);
        all.push(task);
        store.tasks.save(task);
      }
      // A task that changes state moves between the counts.
      const moved = {
        ...all[0],
        task: {
          ...all[0].task,
          status: create(pb.TaskStatusSchema, {
            state: pb.TaskState.CANCELED,
            timestamp: timestampFromMs(5000),
          }),
        },
      };
      store.tasks.save(moved);
      all[0] = moved;
      await store.commit();
      const cases = [
        {},
        { state: pb.TaskState.INPUT_REQUIRED },
        { state: pb.TaskState.CANCELED },
        { contextId: "ctx-1" },
        { contextId: "ctx-2", state: pb.TaskState.FAILED },
        { statusAfterMs: 1015 },
      ];
      for (const filter of cases) {
        const expected = all.filter(
          (t) =>
            (filter.state === undefined || t.task.status?.state === filter.state) &&
            (filter.contextId === undefined || t.task.contextId === filter.contextId) &&
            (filter.statusAfterMs === undefined ||
              Number(t.task.status!.timestamp!.seconds) * 1000 + t.task.status!.timestamp!.nanos / 1e6 >=
                filter.statusAfterMs),
        );
        const page = await store.tasks.list({ owner: "", pageSize: 100, includeArtifacts: false, ...filter });
        expect(page!.totalSize, JSON.stringify(filter)).to.equal(expected.length);
        expect(page!.tasks.map((t) => t.task.id).sort()).to.deep.equal(expected.map((t) => t.task.id).sort());
      }
      expect(
        (await store.tasks.list({ owner: "someone", pageSize: 10, includeArtifacts: false }))!.totalSize,
      ).to.equal(0);
    } finally {
      await store.close();
    }
  });

  it("refuses a second owner of the persistence dir, naming it and the PID", async () => {
    const first = SqliteStateStore.open({ dir, syncEveryCommit: false, logger });
    try {
      let refused: unknown;
      try {
        SqliteStateStore.open({ dir, syncEveryCommit: false, logger });
      } catch (error) {
        refused = error;
      }
      expect(refused).to.be.instanceOf(PersistenceDirInUseError);
      expect((refused as Error).message)
        .to.include(dir)
        .and.include(`PID ${process.pid}`);
    } finally {
      await first.close();
    }
    // Released on close: the next owner opens it.
    const second = SqliteStateStore.open({ dir, syncEveryCommit: true, logger });
    expect(second.synchronous).to.equal("FULL");
    await second.close();
    const third = SqliteStateStore.open({ dir, syncEveryCommit: false, logger });
    expect(third.synchronous).to.equal("NORMAL");
    await third.close();
  });

  it("sync-every-commit comes from the flag, the file or IACCODE_A2A_SYNC_EVERY_COMMIT", () => {
    expect(resolveSettings({}, {}, {}).syncEveryCommit).to.equal(false);
    expect(resolveSettings({}, {}, { IACCODE_A2A_SYNC_EVERY_COMMIT: "true" }).syncEveryCommit).to.equal(true);
    expect(
      resolveSettings({ "sync-every-commit": false }, {}, { IACCODE_A2A_SYNC_EVERY_COMMIT: "1" })
        .syncEveryCommit,
    ).to.equal(false);
    expect(
      resolveSettings({ "sync-every-commit": false }, { "sync-every-commit": true }, {}).syncEveryCommit,
    ).to.equal(true);
    expect(() => resolveSettings({}, {}, { IACCODE_A2A_SYNC_EVERY_COMMIT: "maybe" })).to.throw(
      "Invalid IACCODE_A2A_SYNC_EVERY_COMMIT 'maybe': expected true or false.",
    );
  });

  it("at start-up, fails the tasks whose turn died with the process, in the task's language; waiting tasks stay", async () => {
    const before = SqliteStateStore.open({ dir, syncEveryCommit: false, logger });
    before.tasks.save(storedTask("working", "c1", pb.TaskState.WORKING, 1000, "fr"));
    before.tasks.save(storedTask("submitted", "c2", pb.TaskState.SUBMITTED, 1001));
    before.tasks.save(storedTask("waiting", "c3", pb.TaskState.INPUT_REQUIRED, 1002));
    await before.close();

    const after = SqliteStateStore.open({ dir, syncEveryCommit: false, logger });
    try {
      // No pipeline run to continue: every unfinished task fails.
      const revive = () => Promise.resolve(false);
      expect(await settleInterruptedTasks(after, logger, () => undefined, revive)).to.equal(2);
      const working = (await after.tasks.get("working"))!.task;
      expect(working.status?.state).to.equal(pb.TaskState.FAILED);
      const text = working.status?.message?.parts[0].content.value;
      expect(text).to.be.a("string").and.match(/tâche/i);
      expect(working.history.at(-1)?.parts[0].content.value).to.equal(text);
      expect((await after.tasks.get("submitted"))!.task.status?.state).to.equal(pb.TaskState.FAILED);
      expect((await after.tasks.get("waiting"))!.task.status?.state).to.equal(pb.TaskState.INPUT_REQUIRED);
      expect(await after.tasks.unfinished()).to.deep.equal([]);
    } finally {
      await after.close();
    }
  });
});

describe("A2A state through the server", () => {
  it("ListTasks pages return each task once while tasks are being created", async () => {
    const t = await startTestServer();
    try {
      for (let i = 0; i < 12; i += 1) await t.rpc("SendMessage", { message: userMessage(`before ${i}`) });
      const seen: string[] = [];
      let pageToken = "";
      let creating = 0;
      do {
        const page = (await t.rpc("ListTasks", { pageSize: 3, pageToken })).body.result as Json;
        seen.push(...(page.tasks as Json[]).map((task) => task.id as string));
        pageToken = page.nextPageToken as string;
        // New tasks arrive between the pages (and sort before the cursor).
        await Promise.all(
          [0, 1].map(() => t.rpc("SendMessage", { message: userMessage(`during ${creating++}`) })),
        );
      } while (pageToken);
      expect(seen).to.have.length(12);
      expect(new Set(seen).size).to.equal(12);
      const all = (await t.rpc("ListTasks", { pageSize: 100 })).body.result as Json;
      expect(all.totalSize).to.equal(12 + creating);
    } finally {
      await t.close();
      cleanup(t.dir);
    }
  });

  it("a second server on the same persistence dir is refused", async () => {
    const t = await startTestServer();
    try {
      let refused: unknown;
      await startTestServer({ dir: t.dir }).then(
        (second) => second.close(),
        (error: unknown) => (refused = error),
      );
      expect((refused as Error).message)
        .to.include(path.join(t.dir, "persist"))
        .and.include(`PID ${process.pid}`);
      expect((await t.rpc("ListTasks", {})).body.result).to.include({ totalSize: 0 });
    } finally {
      await t.close();
      cleanup(t.dir);
    }
  });

  it("an answer after a restart must bring the turn's per-request credentials again", async () => {
    const dir = makeTempDir();
    try {
      const a = await startTestServer({ dir });
      const reply = await a.rpc("SendMessage", {
        message: userMessage("[[permission]] deploy", {
          metadata: { iac_code: { iac_code_api_key: "sk-TURN-KEY" } },
        }),
      });
      const task = (reply.body.result as Json).task as Json;
      expect(JSON.stringify(task)).to.not.include("sk-TURN-KEY");
      const envelope = task.metadata.iac_code.input as Json;
      await a.close();

      const b = await startTestServer({ dir });
      try {
        const answer = (metadata: Json) =>
          userMessage("", {
            taskId: task.id,
            contextId: task.contextId,
            metadata,
            parts: [
              {
                mediaType: "application/json",
                data: {
                  schemaVersion: 1,
                  kind: "permission",
                  requestTaskId: task.id,
                  inputId: envelope.inputId,
                  toolUseId: envelope.toolUseId,
                  decision: "allow_once",
                },
              },
            ],
          });
        const refused = await b.rpc("SendMessage", {
          message: answer({ iac_code: { preferredLanguage: "de" } }),
        });
        expect(refused.body.error).to.deep.include({ code: -32602 });
        expect((refused.body.error as Json).message)
          .to.include("iac_code_api_key")
          .and.include("Neustart");
        expect(((await b.rpc("GetTask", { id: task.id })).body.result as Json).status.state).to.equal(
          "TASK_STATE_INPUT_REQUIRED",
        );
        const stream = await openStream(b.url, "SendStreamingMessage", {
          message: answer({ iac_code: { iac_code_api_key: "sk-TURN-KEY" } }),
        });
        const events = await stream.rest();
        expect(resultOf(events[0]).task.id).to.equal(task.id);
        expect(stateOf(events.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
        expect(b.runtime.overridesSeen.at(-1)?.apiKey).to.equal("sk-TURN-KEY");
        expect(JSON.stringify(events)).to.not.include("sk-TURN-KEY");
      } finally {
        await b.close();
      }
    } finally {
      cleanup(dir);
    }
  });
});
