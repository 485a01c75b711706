// The runtime store, SQLite (in state.db) and Redis alike: logs numbered from
// 1 and read after a row, documents replaced and removed, reads that see what
// is staged, the parts of a session; a turn's writes in the same commit as the
// task state (one transaction, one script call); numbering that continues
// after a reopen; and the standalone database of a runtime no server hosts.
import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { existsSync } from "node:fs";
import path from "node:path";
import { pb } from "../../src/contract/index.js";
import { SqliteStateStore } from "../../src/a2a/stores/sqlite-state.js";
import { RedisStateStore } from "../../src/a2a/stores/redis-state.js";
import { sessionScope, partOf } from "../../src/runtime/store/runtime-store.js";
import { openStandaloneStore, STANDALONE_STORE_FILE } from "../../src/runtime/store/standalone-store.js";
import { createLogger } from "../../src/server/logger.js";
import { bothStores } from "../fixtures/both-stores.js";

const logger = createLogger({ silent: true });
const scope = sessionScope("session-1", "ctx-1");

describe("runtime store", () => {
  const s = bothStores("iac-runtime-store-");

  for (const [name, index] of [
    ["sqlite", 0],
    ["redis", 1],
  ] as const) {
    it(`${name}: logs, documents, staged reads and parts`, async () => {
      const state = s.stores[index][1]();
      try {
        const store = state.runtime;
        const log = await store.log(scope, "conversation");
        expect(log.nextSeq).to.equal(1);
        log.append(["a", "b"]);
        log.append(["c"]);
        expect(log.nextSeq).to.equal(4);
        // Reads see what is staged.
        expect(await log.read()).to.deep.equal(["a", "b", "c"]);
        expect(await log.read(2)).to.deep.equal(["c"]);
        expect(await log.read(3)).to.deep.equal([]);
        store.put(scope, "pending-round", '{"x":1}');
        expect(await store.get(scope, "pending-round")).to.equal('{"x":1}');
        await store.commit();
        store.put(scope, "pending-round", undefined);
        expect(await store.get(scope, "pending-round")).to.equal(undefined);
        await store.commit();
        expect(await store.get(scope, "pending-round")).to.equal(undefined);
        const pipeline = partOf(scope, "pipeline");
        (await store.log(pipeline, "events")).append(["e1"]);
        store.put(partOf(scope, "transcript/r1.plan-1"), "session", "{}");
        await store.commit();
        expect(await store.catalog("session-1")).to.deep.equal([
          { part: "", logs: ["conversation"], docs: [] },
          { part: "pipeline", logs: ["events"], docs: [] },
          { part: "transcript/r1.plan-1", logs: [], docs: ["session"] },
        ]);
        expect(await store.catalog("session-2")).to.deep.equal([]);
        // Another session's log is its own.
        expect((await store.log(sessionScope("session-2", "ctx-2"), "conversation")).nextSeq).to.equal(1);
      } finally {
        await state.close();
      }
      // Reopened: the numbering continues after the last row.
      const again = s.stores[index][1]();
      try {
        const log = await again.runtime.log(scope, "conversation");
        expect(log.nextSeq).to.equal(4);
        expect(await log.read(1)).to.deep.equal(["b", "c"]);
      } finally {
        await again.close();
      }
    });

    it(`${name}: what a turn writes and the task state go out in one commit`, async () => {
      const state = s.stores[index][1]();
      try {
        const before = (state as SqliteStateStore | RedisStateStore).commits;
        const log = await state.runtime.log(scope, "conversation");
        state.tasks.save({
          task: create(pb.TaskSchema, {
            id: "task-1",
            contextId: "ctx-1",
            status: { state: pb.TaskState.WORKING },
          }),
          owner: "",
          updatedAt: 1,
          language: "en",
          credentialNames: [],
        });
        log.append(["user message"]);
        state.runtime.put(scope, "pending-round", "{}");
        await Promise.all([state.commit(), state.runtime.commit()]);
        expect((state as SqliteStateStore | RedisStateStore).commits - before).to.equal(1);
        expect((await state.tasks.get("task-1"))?.task.status?.state).to.equal(pb.TaskState.WORKING);
        expect(await log.read()).to.deep.equal(["user message"]);
      } finally {
        await state.close();
      }
    });
  }

  it("standalone: a runtime no server hosts keeps one database in its config dir", async () => {
    const store = openStandaloneStore(s.dir, logger);
    (await store.log(scope, "usage")).append(["u1"]);
    store.put(scope, "session", "{}");
    await store.close();
    expect(existsSync(path.join(s.dir, STANDALONE_STORE_FILE))).to.equal(true);
    const again = openStandaloneStore(s.dir, logger);
    try {
      expect(await (await again.log(scope, "usage")).read()).to.deep.equal(["u1"]);
      expect(await again.get(scope, "session")).to.equal("{}");
    } finally {
      await again.close();
    }
  });
});
