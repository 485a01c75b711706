/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// Every subcommand against our server (the real runtime on a scripted model)
// over JSON-RPC, HTTP+JSON and gRPC (also over TLS), with bearer, basic and API-key auth; the
// input-required exit and `answer` from a script; push configs give the
// server's clear error until the server has them.
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import type { AnyJson as Json } from "../a2a/helpers.js";
import { BINDING_NAMES } from "../../src/a2a/client/bindings/binding.js";
import { EXIT } from "../../src/a2a/client/errors.js";
import { makeLoopbackCert, type LoopbackCert } from "../a2a-bindings/fixtures/tls.js";
import { cleanEnv, removeDir, type E2eServer } from "../e2e/helpers.js";
import { jsonLines, ok, runClient, runCliProcess, startOurServer, workingTask } from "./harness.js";

describe("a2a-client against our server (bearer token)", function () {
  this.timeout(60_000);
  let s: E2eServer;
  before(async () => {
    s = await startOurServer({ token: "client-test-token" });
  });
  after(async () => {
    await s.close();
    removeDir(s.dir);
  });
  const auth = () => ["--url", s.url, "--token", "client-test-token"];

  it("discover works without credentials (the card is public) and the extended card needs them", async () => {
    const card = ok(await runClient(["discover", "--url", s.url]));
    expect((JSON.parse(card.stdout) as Json).securitySchemes).to.have.property("bearerAuth");
    const extended = ok(await runClient(["extended-card", ...auth()]));
    expect((JSON.parse(extended.stdout) as Json).skills.map((k: Json) => k.id)).to.include(
      "iac_code_runtime_details",
    );
    const refused = await runClient(["extended-card", "--url", s.url]);
    expect(refused.code).to.equal(EXIT.error);
    expect(refused.stderr).to.equal("A2A error: Unauthorized (HTTP 401)\n");
  });

  it("reads the token from IACCODE_A2A_HTTP_TOKEN, and --token beats it", async () => {
    const env = { IACCODE_A2A_HTTP_TOKEN: "client-test-token" };
    ok(await runClient(["task-list", "--url", s.url, "--output", "json"], { env }));
    const wrong = { IACCODE_A2A_HTTP_TOKEN: "wrong" };
    expect((await runClient(["task-list", "--url", s.url], { env: wrong })).stderr).to.include("HTTP 401");
    ok(await runClient(["task-list", ...auth(), "--output", "json"], { env: wrong }));
  });

  it("sends the per-turn model, key and thinking settings, and never prints the key it was given", async () => {
    const run = ok(
      await runClient([
        "call",
        ...auth(),
        "--cwd",
        s.workspace,
        "-p",
        "hello",
        "--iac-code-model",
        " client-model ",
        "--iac-code-api-key",
        "sk-client-secret-key",
        "--thinking-budget",
        "512",
        "--no-thinking-enabled",
        "--thinking-effort",
        "low",
        "--output",
        "json",
      ]),
    );
    expect(run.stdout).to.not.include("sk-client-secret-key");
    const sent = (JSON.parse(run.stdout) as Json).task.history[0] as Json;
    expect(sent.metadata.iac_code).to.deep.include({
      cwd: s.workspace,
      iac_code_model: "client-model",
      thinking: { enabled: false, effort: "low", budget: 512 },
    });
    // Our server echoes the key in the task history today; the client masks it.
    expect([undefined, "***"]).to.include(sent.metadata.iac_code.iac_code_api_key);
  });

  it("without --cwd sends no workspace: the server's default one (never the client's directory)", async () => {
    const run = ok(await runClient(["call", ...auth(), "-p", "hello", "--output", "json"], { cwd: s.dir }));
    const sent = (JSON.parse(run.stdout) as Json).task.history[0] as Json;
    expect(sent.metadata.iac_code).to.not.have.property("cwd");
    const dot = ok(
      await runClient(["call", ...auth(), "--cwd", ".", "-p", "hello", "--output", "json"], {
        cwd: s.workspace,
      }),
    );
    expect(((JSON.parse(dot.stdout) as Json).task.history[0] as Json).metadata.iac_code.cwd).to.equal(
      s.workspace,
    );
  });

  it("the real CLI on a pipe: --stream writes the text deltas unbroken, task-list prints whole ids", async () => {
    const env = cleanEnv(s.dir);
    const streamed = ok(
      await runCliProcess(["call", ...auth(), "--cwd", s.workspace, "-p", "hello", "--stream"], { env }),
    );
    const lines = streamed.stdout.split("\n");
    expect(lines.filter((line) => line.includes("Hello"))).to.deep.equal(["Hello from the scripted agent."]);
    expect(streamed.stdout).to.match(/[^\n]\n$/);
    const taskId = (JSON.parse(lines.at(-2) ?? "") as Json).statusUpdate.taskId as string;
    expect(taskId.length).to.be.greaterThan(28);
    const table = ok(await runCliProcess(["task-list", ...auth()], { env }));
    const row = table.stdout.split("\n").find((line) => line.startsWith(taskId));
    expect(row, table.stdout).to.match(new RegExp(`^${taskId} +\\S`));
    expect(table.stdout).to.not.include("...  ");
  });

  for (const binding of BINDING_NAMES) {
    describe(`over ${binding}`, () => {
      const url = () => [...auth(), "--binding", binding];
      const call = (...args: string[]) => runClient(["call", ...url(), "--cwd", s.workspace, ...args]);

      it("call: the answer's text (unary), and the streamed text unbroken then one line per event (--stream)", async () => {
        const run = ok(await call("-p", "hello"));
        expect(run.stdout).to.equal("Hello from the scripted agent.\n");
        const streamed = ok(await call("-p", "hello", "--stream"));
        expect(streamed.stdout).to.match(/\n$/).and.not.match(/\n\n/);
        const lines = streamed.stdout.trim().split("\n");
        // The deltas ("Hello ", "from the scripted agent.") on one line, the final message not repeated.
        expect(lines.filter((line) => line.includes("Hello"))).to.deep.equal([
          "Hello from the scripted agent.",
        ]);
        expect((JSON.parse(lines.at(-1) ?? "") as Json).statusUpdate.status.state).to.equal(
          "TASK_STATE_INPUT_REQUIRED",
        );
      });

      it("a permission stop exits 3 with the request as JSON; `answer --decision` continues the turn", async () => {
        const stopped = await call("-p", "[WRITE] a note", "--stream", "--output", "json");
        expect(stopped.code).to.equal(EXIT.inputRequired);
        const request = jsonLines(stopped.stdout).at(-1) as Json;
        expect(request).to.deep.include({ kind: "permission", toolName: "write_file", schemaVersion: 1 });
        expect(stopped.stderr).to.include(
          `--task-id ${request.requestTaskId as string} --input-id ${request.inputId as string}`,
        );
        const base = [
          "answer",
          ...url(),
          "--task-id",
          request.requestTaskId as string,
          "--input-id",
          request.inputId as string,
        ];

        const notOffered = await runClient([...base, "--decision", "maybe"]);
        expect(notOffered.code).to.equal(EXIT.usage);
        expect(notOffered.stderr).to.equal(
          "Decision 'maybe' is not offered; choose one of allow_once, allow_always, deny.\n",
        );
        const wrongId = await runClient([
          "answer",
          ...url(),
          "--task-id",
          request.requestTaskId as string,
          "--input-id",
          "permission-0",
          "--decision",
          "deny",
        ]);
        expect(wrongId.stderr).to.equal(
          `Task ${request.requestTaskId as string} waits for input ${request.inputId as string}, not permission-0.\n`,
        );

        const answered = ok(await runClient([...base, "--decision", "allow_once"]));
        expect(answered.stdout).to.include("WROTE-IT: note.txt is in your workspace.");
        expect(readFileSync(path.join(s.workspace, "note.txt"), "utf8")).to.equal("hello\n");

        const again = await runClient([...base, "--decision", "allow_once"]);
        expect(again.code).to.equal(EXIT.error);
        expect(again.stderr).to.equal(`Task ${request.requestTaskId as string} is not waiting for input.\n`);
      });

      it("deny over a unary call; a question answered by option and by free text", async () => {
        const stopped = await call("-p", "[WRITE] deny it");
        expect(stopped.code).to.equal(EXIT.inputRequired);
        const request = jsonLines(
          stopped.stdout
            .split("\n")
            .filter((l) => l.startsWith('{"'))
            .join("\n"),
        ).at(-1) as Json;
        const denied = ok(
          await runClient([
            "answer",
            ...url(),
            "--task-id",
            request.requestTaskId as string,
            "--input-id",
            request.inputId as string,
            "--decision",
            "deny",
            "--stream",
          ]),
        );
        expect(denied.stdout).to.include("DENIED-IT: nothing written.");

        for (const [given, reply] of [
          ["blue", "PICKED-BLUE"],
          ["teal", "FREE-TEXT-TEAL"],
        ]) {
          const asked = await call("-p", "[ASK] colour", "--stream", "--output", "json");
          expect(asked.code).to.equal(EXIT.inputRequired);
          const question = jsonLines(asked.stdout).at(-1) as Json;
          expect(question).to.deep.include({ kind: "ask_user_question", allowFreeText: true });
          const noAnswer = await runClient([
            "answer",
            ...url(),
            "--task-id",
            question.requestTaskId as string,
            "--input-id",
            question.inputId as string,
          ]);
          expect(noAnswer.code).to.equal(EXIT.usage);
          const answered = ok(
            await runClient([
              "answer",
              ...url(),
              "--task-id",
              question.requestTaskId as string,
              "--input-id",
              question.inputId as string,
              "--answer",
              given,
            ]),
          );
          expect(answered.stdout).to.include(reply);
        }
      });

      it("task-get, task-list, task-subscribe and task-cancel", async () => {
        const sent = ok(await call("-p", "hello", "--output", "json"));
        const task = (JSON.parse(sent.stdout) as Json).task as Json;
        const got = ok(
          await runClient(["task-get", ...url(), "--task-id", task.id as string, "--history-length", "0"]),
        );
        expect(JSON.parse(got.stdout)).to.deep.include({ id: task.id }).and.not.have.property("history");
        const table = ok(await runClient(["task-list", ...url(), "--context-id", task.contextId as string]));
        expect(table.stdout).to.include(`\n${task.id as string}  input-required`);

        const running = call("-p", "[SLOW] subscribe");
        const id = await workingTask(url());
        const sub = ok(await runClient(["task-subscribe", ...url(), "--task-id", id]));
        const events = jsonLines(sub.stdout);
        expect(events[0]).to.have.nested.property("task.id", id);
        expect(events.at(-1)).to.have.nested.property(
          "statusUpdate.status.state",
          "TASK_STATE_INPUT_REQUIRED",
        );
        expect((await running).stdout).to.include("slow end");

        const second = call("-p", "[SLOW] cancel", "--stream");
        const other = await workingTask(url());
        const cancelled = ok(await runClient(["task-cancel", ...url(), "--task-id", other]));
        expect(JSON.parse(cancelled.stdout)).to.have.nested.property("status.state", "TASK_STATE_CANCELED");
        expect((await second).stdout).to.not.include("slow end");
      });

      it("push-config subcommands get the server's clear error (push notifications are off)", async () => {
        const args = [
          [
            "push-config-create",
            "--task-id",
            "t",
            "--config-id",
            "c",
            "--callback-url",
            "https://hooks.example.com/x",
          ],
          ["push-config-get", "--task-id", "t", "--config-id", "c"],
          ["push-config-list", "--task-id", "t"],
          ["push-config-delete", "--task-id", "t", "--config-id", "c"],
        ];
        for (const [name, ...rest] of args) {
          const run = await runClient([name, ...url(), ...rest]);
          expect(run.code, name).to.equal(EXIT.error);
          expect(run.stderr, name).to.match(
            /^A2A error: Push Notification is not supported \(PUSH_NOTIFICATION_NOT_SUPPORTED/,
          );
        }
      });
    });
  }
});

for (const [scheme, file, flags, env] of [
  [
    "basic",
    { "basic-username": "ada", "basic-password": "s3cret" },
    ["--basic-username", "ada", "--basic-password", "s3cret"],
    { IACCODE_A2A_BASIC_USERNAME: "ada", IACCODE_A2A_BASIC_PASSWORD: "s3cret" },
  ],
  [
    "API-key",
    { "api-key": "k-123", "api-key-header": "X-Team-Key" },
    ["--api-key", "k-123", "--api-key-header", "X-Team-Key"],
    { IACCODE_A2A_API_KEY: "k-123", IACCODE_A2A_API_KEY_HEADER: "X-Team-Key" },
  ],
] as const) {
  describe(`a2a-client against our server (${scheme} auth)`, function () {
    this.timeout(60_000);
    let s: E2eServer;
    before(async () => {
      s = await startOurServer({ ...file });
    });
    after(async () => {
      await s.close();
      removeDir(s.dir);
    });

    for (const binding of BINDING_NAMES) {
      it(`calls and lists over ${binding} with the flags, and with the env vars`, async () => {
        const run = ok(
          await runClient([
            "call",
            "--url",
            s.url,
            ...flags,
            "--binding",
            binding,
            "--cwd",
            s.workspace,
            "-p",
            "hi",
          ]),
        );
        expect(run.stdout).to.equal("Hello from the scripted agent.\n");
        const listed = ok(
          await runClient(["task-list", "--url", s.url, "--binding", binding, "--output", "json"], {
            env: { ...env },
          }),
        );
        expect((JSON.parse(listed.stdout) as Json).tasks).to.not.be.empty;
        const refused = await runClient(["task-list", "--url", s.url, "--binding", binding]);
        expect(refused.code).to.equal(EXIT.error);
        expect(refused.stderr).to.match(
          binding === "grpc" ? /^A2A error: Unauthorized \(gRPC Unauthenticated\)/ : /\(HTTP 401\)\n$/,
        );
      });
    }
  });
}

describe("a2a-client against our server over TLS", function () {
  this.timeout(60_000);
  let tls: LoopbackCert;
  let s: E2eServer;
  before(async () => {
    tls = makeLoopbackCert();
    s = await startOurServer({ "tls-cert": tls.certPath, "tls-key": tls.keyPath });
  });
  after(async () => {
    await s.close();
    removeDir(s.dir);
    tls.dispose();
  });

  it("dials the card's gRPC address (host:port) with TLS when the card came over https", async () => {
    expect(s.url).to.match(/^https:/);
    const grpc = s.server.cards.extendedCard.supportedInterfaces.find((i) => i.protocolBinding === "GRPC");
    expect(grpc?.url).to.equal(`127.0.0.1:${s.server.port}`);
    // A child process: the test certificate is trusted through NODE_EXTRA_CA_CERTS, read at start-up.
    const env = cleanEnv(s.dir, { NODE_EXTRA_CA_CERTS: tls.certPath });
    const args = ["--url", s.url, "--binding", "grpc", "--cwd", s.workspace];
    const called = ok(await runCliProcess(["call", ...args, "-p", "hi"], { env }));
    expect(called.stdout).to.equal("Hello from the scripted agent.\n");
  });
});
