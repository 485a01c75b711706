/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// Every network subcommand against an @a2a-js/sdk 1.3.0 server (JSON-RPC,
// HTTP+JSON and gRPC), including the push notification configs our server
// does not have yet.
import { expect } from "chai";
import type { AnyJson as Json } from "../a2a/helpers.js";
import { BINDING_NAMES } from "../../src/a2a/client/bindings/binding.js";
import { startSdkServer, type SdkServer } from "./fixtures/sdk-server.js";
import { jsonLines, ok, runClient, workingTask } from "./harness.js";

describe("a2a-client against an @a2a-js/sdk server", function () {
  this.timeout(30_000);
  let s: SdkServer;
  before(async () => {
    s = await startSdkServer();
  });
  after(() => s.close());

  it("discover prints the card as served, keys sorted and indented", async () => {
    const run = ok(await runClient(["discover", "--url", s.base]));
    expect(JSON.parse(run.stdout)).to.deep.include({ name: "sdk-echo" });
    expect(run.stdout.split("\n")[0]).to.equal("{");
    expect(run.stdout).to.match(/^ {2}"capabilities"/m);
    const compact = ok(await runClient(["discover", "--url", s.base, "--output", "json"]));
    expect(compact.stdout.trim().split("\n")).to.have.length(1);
  });

  it("takes the first advertised interface by default and sends A2A-Version 1.0", async () => {
    s.seenHeaders.length = 0;
    ok(await runClient(["call", "--url", s.base, "-p", "which binding?"]));
    expect(s.seenHeaders.some((h) => h["a2a-version"] === "1.0")).to.equal(true);
    const last = await runClient(["task-list", "--url", s.base, "--output", "json", "--page-size", "1"]);
    const task = (JSON.parse(last.stdout) as Json).tasks[0] as Json;
    expect(task.history[0].parts[0].text).to.equal("which binding?");
  });

  for (const binding of BINDING_NAMES) {
    describe(`over ${binding}`, () => {
      const url = () => ["--url", s.base, "--binding", binding];

      it("call prints the agent's text; --stream prints one line per event", async () => {
        const run = ok(await runClient(["call", ...url(), "-p", `hello ${binding}`]));
        expect(run.stdout).to.equal(`echo: hello ${binding}\n`);
        const streamed = ok(await runClient(["call", ...url(), "-p", "streamed", "--stream"]));
        const lines = streamed.stdout.trim().split("\n");
        expect(lines.at(-1)).to.equal("echo: streamed");
        expect((JSON.parse(lines[0]) as Json).task.status.state).to.equal("TASK_STATE_SUBMITTED");
        const json = ok(await runClient(["call", ...url(), "-p", "as json", "--output", "json"]));
        expect((JSON.parse(json.stdout) as Json).task.status.state).to.equal("TASK_STATE_COMPLETED");
      });

      it("task-get, task-list (table and json) and extended-card", async () => {
        const sent = ok(await runClient(["call", ...url(), "-p", "to list", "--output", "json"]));
        const task = (JSON.parse(sent.stdout) as Json).task as Json;
        const got = ok(
          await runClient(["task-get", ...url(), "--task-id", task.id as string, "--history-length", "1"]),
        );
        expect(JSON.parse(got.stdout)).to.deep.include({ id: task.id, contextId: task.contextId });
        const table = ok(await runClient(["task-list", ...url(), "--context-id", task.contextId as string]));
        expect(table.stdout).to.match(/^ID +Status +Context +Updated +Message\n/);
        expect(table.stdout).to.include("completed");
        expect(table.stdout).to.include("echo: to list");
        expect(table.stdout.trim().split("\n").at(-1)).to.equal("Showing 1 of 1 tasks.");
        const json = ok(
          await runClient([
            "task-list",
            ...url(),
            "--context-id",
            task.contextId as string,
            "--output",
            "json",
          ]),
        );
        expect((JSON.parse(json.stdout) as Json).tasks.map((t: Json) => t.id)).to.deep.equal([task.id]);
        const card = ok(await runClient(["extended-card", ...url()]));
        expect((JSON.parse(card.stdout) as Json).name).to.equal("sdk-echo (extended)");
      });

      it("push-config-create, -get, -list and -delete", async () => {
        const sent = ok(await runClient(["call", ...url(), "-p", "push me", "--output", "json"]));
        const taskId = (JSON.parse(sent.stdout) as Json).task.id as string;
        const created = ok(
          await runClient([
            "push-config-create",
            ...url(),
            "--task-id",
            taskId,
            "--config-id",
            "hook-1",
            "--callback-url",
            "https://hooks.example.com/a2a",
            "--notification-token",
            "nt-1",
            "--auth-scheme",
            "Bearer",
            "--auth-credentials",
            "cred-1",
          ]),
        );
        expect(JSON.parse(created.stdout)).to.deep.include({
          taskId,
          id: "hook-1",
          url: "https://hooks.example.com/a2a",
          token: "nt-1",
          authentication: { scheme: "Bearer", credentials: "cred-1" },
        });
        const got = ok(
          await runClient(["push-config-get", ...url(), "--task-id", taskId, "--config-id", "hook-1"]),
        );
        expect(JSON.parse(got.stdout)).to.deep.include({
          id: "hook-1",
          url: "https://hooks.example.com/a2a",
        });
        const listed = ok(
          await runClient(["push-config-list", ...url(), "--task-id", taskId, "--output", "json"]),
        );
        expect((JSON.parse(listed.stdout) as Json).configs.map((c: Json) => c.id)).to.deep.equal(["hook-1"]);
        const deleted = ok(
          await runClient(["push-config-delete", ...url(), "--task-id", taskId, "--config-id", "hook-1"]),
        );
        expect(deleted.stdout).to.equal(`Deleted push notification config hook-1 of task ${taskId}.\n`);
        const empty = ok(
          await runClient(["push-config-list", ...url(), "--task-id", taskId, "--output", "json"]),
        );
        expect((JSON.parse(empty.stdout) as Json).configs ?? []).to.deep.equal([]);
      });

      it("task-subscribe prints a running task's events until it completes; task-cancel cancels one", async () => {
        const running = runClient(["call", ...url(), "-p", "[SLOW] one"]);
        const id = await workingTask(["--url", s.base]);
        const sub = ok(await runClient(["task-subscribe", ...url(), "--task-id", id]));
        const events = jsonLines(sub.stdout);
        expect(events.at(-1)).to.have.nested.property("statusUpdate.status.state", "TASK_STATE_COMPLETED");
        expect((await running).stdout).to.equal("echo: [SLOW] one\n");

        const second = runClient(["call", ...url(), "-p", "[SLOW] two"]);
        const other = await workingTask(["--url", s.base]);
        const cancelled = ok(await runClient(["task-cancel", ...url(), "--task-id", other]));
        expect(JSON.parse(cancelled.stdout)).to.have.nested.property("status.state", "TASK_STATE_CANCELED");
        await second;
      });

      it("an A2A error names the server's reason and exits 1", async () => {
        const run = await runClient(["task-get", ...url(), "--task-id", "no-such-task"]);
        expect(run.code).to.equal(1);
        expect(run.stdout).to.equal("");
        expect(run.stderr).to.match(/^A2A error: .+\(TASK_NOT_FOUND/);
      });
    });
  }
});
