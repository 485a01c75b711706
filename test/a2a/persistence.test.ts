/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- tests read free-form JSON-RPC replies through `any` */
import { expect } from "chai";
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { toBinary } from "@bufbuild/protobuf";
import { pb } from "../../src/contract/index.js";
import { decodeTask } from "../../src/a2a/stores/task-codec.js";
import {
  cleanup,
  makeTempDir,
  openStream,
  resultOf,
  rpc,
  startTestServer,
  stateOf,
  userMessage,
} from "./helpers.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests peek into free-form JSON
type Json = Record<string, any>;

/** Three SendMessage calls ("one", "two", "three") with the same extra message fields; their task ids. */
async function sendThree(
  server: { rpc: (method: string, params: Json) => Promise<{ body: Json }> },
  extra: Json,
) {
  const ids: string[] = [];
  for (const text of ["one", "two", "three"]) {
    const r = await server.rpc("SendMessage", { message: userMessage(text, extra) });
    ids.push(((r.body.result as Json).task as Json).id as string);
  }
  return ids;
}

describe("A2A persistence and restart recovery", () => {
  it("a restarted server answers GetTask/ListTasks for old tasks and continues an old context with the same session", async () => {
    const dir = makeTempDir();
    try {
      const a = await startTestServer({ dir, file: { token: "t0k" } });
      const auth = { Authorization: "Bearer t0k" };
      const first = await a.rpc(
        "SendMessage",
        { message: userMessage("[[tool]] remember", { contextId: "ctx-persist" }) },
        auth,
      );
      const task = (first.body.result as Json).task as Json;
      const failed = await a.rpc("SendMessage", { message: userMessage(" ") }, auth);
      const failedId = ((failed.body.result as Json).task as Json).id as string;
      await a.close();

      const b = await startTestServer({ dir, file: { token: "t0k" } });
      try {
        const got = (await b.rpc("GetTask", { id: task.id }, auth)).body.result as Json;
        expect(got.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
        expect(got.history.map((m: Json) => m.parts[0].text)).to.deep.equal(
          task.history.map((m: Json) => m.parts[0].text),
        );
        expect(got.artifacts).to.have.length(1);
        expect(got.metadata.iac_code.iacCodeSessionId).to.equal(task.metadata.iac_code.iacCodeSessionId);
        const list = (await b.rpc("ListTasks", {}, auth)).body.result as Json;
        expect((list.tasks as Json[]).map((x) => x.id).sort()).to.deep.equal([task.id, failedId].sort());
        const next = await b.rpc(
          "SendMessage",
          { message: userMessage("continue", { contextId: "ctx-persist" }) },
          auth,
        );
        const nextTask = (next.body.result as Json).task as Json;
        expect(nextTask.metadata.iac_code.iacCodeSessionId).to.equal(task.metadata.iac_code.iacCodeSessionId);
        expect(nextTask.history.at(-1).parts[0].text).to.equal("Echo(turn 2): continue");
        const followOld = await b.rpc(
          "SendMessage",
          { message: userMessage("same task", { taskId: task.id }) },
          auth,
        );
        expect(((followOld.body.result as Json).task as Json).history.at(-1).parts[0].text).to.equal(
          "Echo(turn 3): same task",
        );
      } finally {
        await b.close();
      }
    } finally {
      cleanup(dir);
    }
  });

  it("keeps tasks scoped to their owner across a restart", async () => {
    const dir = makeTempDir();
    try {
      const a = await startTestServer({ dir, file: { token: "t1", "api-key": "k1" } });
      const created = await a.rpc(
        "SendMessage",
        { message: userMessage("owned") },
        { Authorization: "Bearer t1" },
      );
      const id = ((created.body.result as Json).task as Json).id as string;
      await a.close();
      const b = await startTestServer({ dir, file: { token: "t1", "api-key": "k1" } });
      try {
        expect((await b.rpc("GetTask", { id }, { "X-API-Key": "k1" })).body.error).to.deep.include({
          code: -32001,
        });
        expect((await b.rpc("GetTask", { id }, { Authorization: "Bearer t1" })).body.result).to.have.property(
          "id",
          id,
        );
      } finally {
        await b.close();
      }
    } finally {
      cleanup(dir);
    }
  });

  it("upgrades a schema 1 database (bare Task bodies): every task reads back as it was, an unreadable one is quarantined", async () => {
    const dir = makeTempDir();
    try {
      const a = await startTestServer({ dir });
      const ids = await sendThree(a, { metadata: { note: { n: 1 } } });
      const before = await Promise.all(
        ids.map(async (id) => (await a.rpc("GetTask", { id })).body.result as Json),
      );
      await a.close();
      const file = path.join(dir, "persist", "state.db");
      const db = new Database(file);
      for (const { id, body } of db.prepare("SELECT id, body FROM tasks").all() as Array<{
        id: string;
        body: Buffer;
      }>)
        db.prepare("UPDATE tasks SET body = ? WHERE id = ?").run(
          toBinary(pb.TaskSchema, decodeTask(id, body)),
          id,
        );
      db.prepare("UPDATE tasks SET body = ? WHERE id = ?").run(Buffer.from("not a task"), ids[2]);
      db.pragma("user_version = 1");
      db.close();

      const b = await startTestServer({ dir });
      try {
        for (const [i, id] of ids.slice(0, 2).entries())
          expect((await b.rpc("GetTask", { id })).body.result).to.deep.equal(before[i]);
        expect((before[0].metadata as Json).iac_code).to.be.an("object");
        expect((await b.rpc("GetTask", { id: ids[2] })).body.error).to.deep.include({ code: -32001 });
      } finally {
        await b.close();
      }
      const after = new Database(file, { readonly: true });
      expect(after.pragma("user_version", { simple: true })).to.equal(2);
      expect(after.prepare("SELECT id FROM quarantine").all()).to.deep.equal([{ id: ids[2] }]);
      after.close();
    } finally {
      cleanup(dir);
    }
  });

  it("keeps the state in one database; an unreadable record is quarantined, the others still answer", async () => {
    const dir = makeTempDir();
    try {
      const a = await startTestServer({ dir });
      const ids = await sendThree(a, { contextId: "ctx:with:colons" });
      await a.close();
      const persist = path.join(dir, "persist");
      expect(readdirSync(persist).filter((f) => !f.startsWith("state.db"))).to.deep.equal([]);
      const db = new Database(path.join(persist, "state.db"));
      db.prepare("UPDATE tasks SET body = ? WHERE id = ?").run(Buffer.from("not a task"), ids[1]);
      db.close();

      const b = await startTestServer({ dir });
      try {
        const list = (await b.rpc("ListTasks", {})).body.result as Json;
        expect((list.tasks as Json[]).map((x) => x.id).sort()).to.deep.equal([ids[0], ids[2]].sort());
        expect(list.totalSize).to.equal(2);
        expect((await b.rpc("GetTask", { id: ids[1] })).body.error).to.deep.include({ code: -32001 });
        expect((await b.rpc("GetTask", { id: ids[0] })).body.result).to.have.property("id", ids[0]);
        const next = await b.rpc("SendMessage", {
          message: userMessage("again", { contextId: "ctx:with:colons" }),
        });
        expect(((next.body.result as Json).task as Json).history.at(-1).parts[0].text).to.equal(
          "Echo(turn 4): again",
        );
      } finally {
        await b.close();
      }
      const after = new Database(path.join(persist, "state.db"), { readonly: true });
      const quarantined = after.prepare("SELECT kind, id, reason FROM quarantine").all() as Json[];
      after.close();
      expect(quarantined).to.have.length(1);
      expect(quarantined[0]).to.include({ kind: "task", id: ids[1] });
      expect(quarantined[0].reason).to.match(/does not decode/);
    } finally {
      cleanup(dir);
    }
  });

  it("graceful shutdown cancels running turns and flushes their final state", async () => {
    const dir = makeTempDir();
    try {
      const a = await startTestServer({ dir });
      const stream = await openStream(a.url, "SendStreamingMessage", { message: userMessage("[[slow]]") });
      const head = await stream.until((e) => stateOf(e) === "TASK_STATE_WORKING");
      const id = resultOf(head[0]).task.id as string;
      await a.close();
      const tail = await stream.rest();
      expect(stateOf(tail.at(-1)!)).to.equal("TASK_STATE_CANCELED");
      const b = await startTestServer({ dir });
      try {
        expect(((await b.rpc("GetTask", { id })).body.result as Json).status.state).to.equal(
          "TASK_STATE_CANCELED",
        );
        expect((await b.rpc("CancelTask", { id })).body.error).to.deep.include({ code: -32002 });
      } finally {
        await b.close();
      }
    } finally {
      cleanup(dir);
    }
  });

  it("graceful shutdown keeps a turn that waits for permission answerable after the restart", async () => {
    const dir = makeTempDir();
    try {
      const a = await startTestServer({ dir });
      const reply = await a.rpc("SendMessage", { message: userMessage("[[permission]] deploy") });
      const task = (reply.body.result as Json).task as Json;
      expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
      const envelope = task.metadata.iac_code.input as Json;
      await a.close();

      const b = await startTestServer({ dir });
      try {
        const got = (await b.rpc("GetTask", { id: task.id })).body.result as Json;
        expect(got.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
        expect(got.metadata.iac_code.input.inputId).to.equal(envelope.inputId);
        const stream = await openStream(b.url, "SendStreamingMessage", {
          message: userMessage("", {
            taskId: task.id,
            contextId: task.contextId,
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
          }),
        });
        const events = await stream.rest();
        const texts = events
          .map((e) => resultOf(e).statusUpdate?.status?.message?.parts?.[0]?.text)
          .filter(Boolean);
        expect(texts).to.include("Answer allow_once for write_file.");
        expect(stateOf(events.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
      } finally {
        await b.close();
      }
    } finally {
      cleanup(dir);
    }
  });

  it("after a crash, a pending permission can still be answered on a new server (same session)", async () => {
    const dir = makeTempDir();
    mkdirSync(path.join(dir, "workspace"), { recursive: true });
    const child = spawn(
      process.execPath,
      ["--import", "tsx", fileURLToPath(new URL("./fixtures/child-server.ts", import.meta.url)), dir],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes("\n")) resolve(out.trim());
        });
        child.once("exit", (code) => reject(new Error(`child exited ${String(code)}`)));
      });
      const reply = await rpc(url, "SendMessage", { message: userMessage("[[permission]] deploy") });
      const task = (reply.body.result as Json).task as Json;
      expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
      const envelope = task.metadata.iac_code.input as Json;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;

      const b = await startTestServer({ dir });
      try {
        const got = (await b.rpc("GetTask", { id: task.id })).body.result as Json;
        expect(got.metadata.iac_code.input.inputId).to.equal(envelope.inputId);
        const answer = {
          schemaVersion: 1,
          kind: "permission",
          requestTaskId: task.id,
          inputId: envelope.inputId,
          toolUseId: envelope.toolUseId,
          decision: "deny",
        };
        const stream = await openStream(b.url, "SendStreamingMessage", {
          message: userMessage("", {
            taskId: task.id,
            contextId: task.contextId,
            parts: [{ mediaType: "application/json", data: answer }],
          }),
        });
        const events = await stream.rest();
        expect(resultOf(events[0]).task.id).to.equal(task.id);
        const texts = events
          .map((e) => resultOf(e).statusUpdate?.status?.message?.parts?.[0]?.text)
          .filter(Boolean);
        expect(texts).to.include("Answer deny for write_file.");
        expect(stateOf(events.at(-1)!)).to.equal("TASK_STATE_INPUT_REQUIRED");
        const after = (await b.rpc("GetTask", { id: task.id })).body.result as Json;
        expect(after.metadata.iac_code).to.not.have.property("input");
        expect(after.metadata.iac_code.iacCodeSessionId).to.equal(task.metadata.iac_code.iacCodeSessionId);
        // A second answer finds nothing pending.
        const again = await b.rpc("SendMessage", {
          message: userMessage("", {
            taskId: task.id,
            contextId: task.contextId,
            parts: [{ mediaType: "application/json", data: answer }],
          }),
        });
        expect(again.body.error).to.deep.include({
          code: -32602,
          message: "permission_resume_invalid: pending permission is not active.",
        });
      } finally {
        await b.close();
      }
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      cleanup(dir);
    }
  });
});
