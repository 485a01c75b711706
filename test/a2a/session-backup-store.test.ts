// The session backup store (src/a2a/stores/session-backup.ts) on both state
// stores: a context's record, tasks (their artifact index) and runtime rows
// (logs keep their numbering, documents, every part) are committed to one file
// and restored into a store that lost them, read back exactly; the backup
// staging leaves nothing behind; a restored context is "current" afterwards;
// a backup path that cannot be read is "not ready", no backup is "missing".
// Also the ensure-restored route's refusals (401, 400 naming the field, 404)
// on a real server.
import { expect } from "chai";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { pb } from "../../src/contract/index.js";
import { BackupNotReadyError, SessionBackups } from "../../src/a2a/stores/session-backup.js";
import type { StateStore, StoredTask } from "../../src/a2a/stores/state.js";
import { partOf, sessionScope } from "../../src/runtime/store/runtime-store.js";
import { createLogger } from "../../src/server/logger.js";
import { bothStores } from "../fixtures/both-stores.js";
import { cleanup, makeTempDir, startTestServer, userMessage } from "./helpers.js";

const logger = createLogger({ silent: true });

function storedTask(id: string, contextId: string, state: pb.TaskState, ms: number): StoredTask {
  return {
    task: create(pb.TaskSchema, {
      id,
      contextId,
      status: { state, timestamp: timestampFromMs(ms) },
      history: [
        { messageId: `${id}-m`, role: pb.Role.USER, parts: [{ content: { case: "text", value: id } }] },
      ],
      metadata: { iac_code: { iacCodeSessionId: "session-1" } },
    }),
    owner: "bearer",
    updatedAt: ms,
    language: "fr",
    credentialNames: ["iac_code_api_key"],
  };
}

/** Stages one context with two tasks (one with artifacts) and session rows in three parts. */
async function seed(store: StateStore): Promise<void> {
  store.contexts.save({
    contextId: "ctx-1",
    sessionId: "session-1",
    cwd: "/w",
    owner: "bearer",
    updatedAt: 1,
  });
  store.tasks.save(storedTask("task-a", "ctx-1", pb.TaskState.INPUT_REQUIRED, 1000));
  store.tasks.save(storedTask("task-b", "ctx-1", pb.TaskState.FAILED, 2000));
  for (const id of ["art-1", "art-2"])
    store.artifacts.save(
      "task-b",
      create(pb.ArtifactSchema, {
        artifactId: id,
        name: id,
        parts: [{ content: { case: "text", value: id } }],
      }),
    );
  // Another context: not part of ctx-1's backup.
  store.tasks.save(storedTask("task-other", "ctx-2", pb.TaskState.INPUT_REQUIRED, 3000));
  const scope = sessionScope("session-1", "ctx-1");
  (await store.runtime.log(scope, "conversation", { fresh: true })).append(["m1", "m2", "m3"]);
  store.runtime.put(scope, "session", '{"id":"session-1"}');
  (await store.runtime.log(partOf(scope, "pipeline"), "journal", { fresh: true })).append(["e1", "e2"]);
  store.runtime.put(partOf(scope, "pipeline"), "snapshot", '{"lastSequence":2}');
  (await store.runtime.log(partOf(scope, "transcript/step-1"), "transcript", { fresh: true })).append(["t1"]);
  await store.commit();
}

async function rowsOf(store: StateStore): Promise<Record<string, unknown>> {
  const scope = sessionScope("session-1", "ctx-1");
  const out: Record<string, unknown> = {};
  for (const catalog of await store.runtime.catalog("session-1")) {
    const part = partOf(scope, catalog.part);
    for (const name of catalog.logs)
      out[`${catalog.part}/log/${name}`] = await (await store.runtime.log(part, name)).read();
    for (const name of catalog.docs) out[`${catalog.part}/doc/${name}`] = await store.runtime.get(part, name);
  }
  return out;
}

describe("session backups: the backup store on SQLite and Redis", () => {
  const s = bothStores("iac-backup-store-");

  for (const [name, open] of s.stores) {
    it(`${name}: a context is committed to its backup and restored, read back exactly, into a store that lost it`, async () => {
      const backupDir = makeTempDir("iac-backup-files-");
      try {
        const settings = { dir: backupDir, tmpDir: path.join(backupDir, ".staging") };
        const first = open();
        let before: Record<string, unknown>;
        let tasksBefore: StoredTask[];
        try {
          await seed(first);
          before = await rowsOf(first);
          tasksBefore = (await first.tasks.list({
            owner: "bearer",
            contextId: "ctx-1",
            pageSize: 10,
            includeArtifacts: true,
          }))!.tasks;
          await new SessionBackups(settings, first, logger).commit("ctx-1");
        } finally {
          await first.close();
        }
        expect(readdirSync(path.join(backupDir, ".staging"))).to.deep.equal([]);
        const file = JSON.parse(readFileSync(path.join(backupDir, "contexts", "ctx-1.json"), "utf8")) as {
          tasks: Array<{ id: string }>;
        };
        expect(file.tasks.map((t) => t.id).sort()).to.deep.equal(["task-a", "task-b"]);

        // The primary store is lost.
        if (name === "redis") await s.client.flushall();
        else rmSync(s.dir, { recursive: true, force: true });
        const second = open();
        try {
          const backups = new SessionBackups(settings, second, logger);
          expect(await backups.ensureRestored("ctx-1")).to.equal("restored");
          expect(await backups.ensureRestored("ctx-1")).to.equal("current");
          expect(await backups.ensureRestored("ctx-never")).to.equal("missing");
          expect(await backups.contextOfSession("session-1")).to.equal("ctx-1");
          expect(await second.contexts.get("ctx-1")).to.deep.include({
            sessionId: "session-1",
            cwd: "/w",
            owner: "bearer",
          });
          expect(await rowsOf(second)).to.deep.equal(before);
          const tasks = (await second.tasks.list({
            owner: "bearer",
            contextId: "ctx-1",
            pageSize: 10,
            includeArtifacts: true,
          }))!.tasks;
          expect(tasks).to.deep.equal(tasksBefore);
          expect(
            tasks.find((t) => t.task.id === "task-b")!.task.artifacts.map((a) => a.artifactId),
          ).to.deep.equal(["art-1", "art-2"]);
          expect(await second.tasks.get("task-other")).to.equal(undefined);
          // The restored log goes on numbering after its rows.
          const conversation = await second.runtime.log(sessionScope("session-1", "ctx-1"), "conversation");
          expect(conversation.nextSeq).to.equal(4);

          // A backup path that cannot be read now: not ready (retryable), not "missing".
          rmSync(backupDir, { recursive: true });
          writeFileSync(backupDir, "not a directory\n");
          let error: unknown;
          await backups.ensureRestored("ctx-elsewhere").catch((e: unknown) => (error = e));
          expect(error).to.be.instanceOf(BackupNotReadyError);
          let failed: unknown;
          await backups.commit("ctx-1").catch((e: unknown) => (failed = e));
          expect((failed as NodeJS.ErrnoException).code).to.be.oneOf(["ENOTDIR", "EEXIST"]);
        } finally {
          await second.close();
        }
      } finally {
        rmSync(backupDir, { recursive: true, force: true });
      }
    });
  }
});

describe("POST /iac-code/session/ensure-restored refusals", () => {
  it("401 without the token, 400 naming the bad field, 404 for an unknown session, 200 current for a known one", async () => {
    const dir = makeTempDir();
    const server = await startTestServer({ dir, file: { token: "t0k" } });
    try {
      const url = new URL(
        "iac-code/session/ensure-restored",
        server.url.endsWith("/") ? server.url : `${server.url}/`,
      );
      const call = (body: unknown, token = "t0k") =>
        fetch(url, {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            ...(token ? { Authorization: `Bearer ${token}` } : {}),
          },
          body: JSON.stringify(body),
        });
      expect((await call({ cwd: "/", sessionId: "s", taskId: "t" }, "")).status).to.equal(401);
      const bad = await call({ cwd: server.workspace, sessionId: "s", taskId: "not a valid id!" });
      expect(bad.status).to.equal(400);
      expect(((await bad.json()) as { error: string }).error).to.include("taskId");
      const missing = await call({ cwd: server.workspace, sessionId: "s" });
      expect(((await missing.json()) as { error: string }).error).to.include("taskId");
      expect((await call({ cwd: server.workspace, sessionId: "s-1", taskId: "t-1" })).status).to.equal(404);

      const reply = await server.rpc(
        "SendMessage",
        { message: userMessage("hello") },
        { Authorization: "Bearer t0k" },
      );
      const task = (
        reply.body.result as { task: { id: string; metadata: { iac_code: { iacCodeSessionId: string } } } }
      ).task;
      const sessionId = task.metadata.iac_code.iacCodeSessionId;
      const known = await call({ cwd: server.workspace, sessionId, taskId: task.id });
      expect(known.status).to.equal(200);
      expect(await known.json()).to.deep.equal({ status: "current" });
      // The same task with another workspace or session is not this caller's session.
      expect((await call({ cwd: "/elsewhere", sessionId, taskId: task.id })).status).to.equal(404);
      expect((await call({ cwd: server.workspace, sessionId: "other", taskId: task.id })).status).to.equal(
        404,
      );
    } finally {
      await server.close();
      cleanup(dir);
    }
  });
});
