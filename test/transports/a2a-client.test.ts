/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form JSON-RPC replies through `any` (Json) */
// `iac-code a2a-client` over each custom transport by URL scheme (unix://,
// ws://, grpc-jsonrpc://, redis://…?request-stream=, stdio:<command>) against
// our server: unary and streamed calls, task-subscribe, task-get, an A2A
// error, discover refused (extended-card where credentials travel), and the auth flags where the
// transport carries them.
import { expect } from "chai";
import path from "node:path";
import { EXIT } from "../../src/a2a/client/errors.js";
import { ok, runClient, startOurServer, workingTask } from "../a2a-client/harness.js";
import { BIN, removeDir, tempDir, type E2eServer } from "../e2e/helpers.js";
import { startRedis, type TestRedis } from "../fixtures/redis-server.js";
import { stdioConfig } from "./stdio-config.js";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON output

interface Case {
  name: string;
  start(): Promise<{ server?: E2eServer; url: string; auth: string[]; cleanup(): Promise<void> }>;
  /** Several client runs can share one server (stdio starts one per run). */
  shared: boolean;
}

let redis: TestRedis | undefined;

const inProcess =
  (file: Record<string, unknown>, url: (s: E2eServer) => string = (s) => s.url, auth: string[] = []) =>
  async () => {
    const server = await startOurServer(file);
    return {
      server,
      url: url(server),
      auth,
      async cleanup() {
        await server.close();
        removeDir(server.dir);
      },
    };
  };

const CASES: Case[] = [
  {
    name: "unix",
    shared: true,
    start: async () => {
      const dir = tempDir("iac-client-unix-");
      const started = await inProcess({ transport: "unix", "socket-path": path.join(dir, "a.sock") })();
      return { ...started, cleanup: async () => (await started.cleanup(), removeDir(dir)) };
    },
  },
  {
    name: "websocket",
    shared: true,
    start: inProcess({ transport: "websocket", token: "t-ws" }, undefined, ["--token", "t-ws"]),
  },
  {
    name: "grpc-jsonrpc",
    shared: true,
    start: inProcess({ transport: "grpc-jsonrpc", token: "t-grpc" }, undefined, ["--token", "t-grpc"]),
  },
  {
    name: "redis-streams",
    shared: true,
    start: async () => {
      redis ??= await startRedis();
      const url = redis.url;
      return inProcess(
        { transport: "redis-streams", "redis-url": url, "request-stream": "client:req" },
        () => `${url}?request-stream=client:req&response-stream=client:replies`,
      )();
    },
  },
  {
    name: "stdio",
    shared: false,
    start: () => {
      const dir = tempDir("iac-client-stdio-");
      const command = [process.execPath, BIN, "a2a", "--config", stdioConfig(dir)].map((w) =>
        JSON.stringify(w),
      );
      return Promise.resolve({
        url: `stdio:${command.join(" ")}`,
        auth: [],
        cleanup: () => Promise.resolve(removeDir(dir)),
      });
    },
  },
];

describe("a2a-client over the custom transports", function () {
  this.timeout(90_000);
  after(async () => {
    await redis?.close();
  });

  for (const kase of CASES) {
    describe(kase.name, () => {
      let started: Awaited<ReturnType<Case["start"]>>;
      before(async () => {
        started = await kase.start();
      });
      after(async () => {
        await started.cleanup();
      });
      const url = () => ["--url", started.url, ...started.auth];
      const cwd = () => (started.server ? ["--cwd", started.server.workspace] : []);

      it("call (unary and --stream), task-get, and an A2A error", async () => {
        const unary = ok(await runClient(["call", ...url(), ...cwd(), "-p", "hello", "--output", "json"]));
        const task = (JSON.parse(unary.stdout) as Json).task as Json;
        expect(task.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
        const streamed = ok(await runClient(["call", ...url(), ...cwd(), "-p", "hello", "--stream"]));
        // On a pipe the text deltas run on in one line (the other events one JSON line each).
        expect(streamed.stdout.trim().split("\n")).to.include("Hello from the scripted agent.");
        const got = ok(await runClient(["task-get", ...url(), "--task-id", task.id as string]));
        expect((JSON.parse(got.stdout) as Json).id).to.equal(task.id);
        const missing = await runClient(["task-get", ...url(), "--task-id", "no-such-task"]);
        expect(missing.code).to.equal(EXIT.error);
        expect(missing.stderr).to.match(/^A2A error: .*\(TASK_NOT_FOUND, JSON-RPC -32001\)\n$/);
      });

      it("discover is refused in one line; extended-card answers where the URL carries credentials", async () => {
        const refused = await runClient(["discover", ...url()]);
        expect(refused.code).to.equal(EXIT.usage);
        const scheme = /^[a-z-]+:/.exec(started.url)![0];
        const notServed = `discover reads the agent card over HTTP(S) (GET /.well-known/agent-card.json), which a ${scheme} URL does not serve`;
        const extended = await runClient(["extended-card", ...url()]);
        if (started.auth.length > 0) {
          expect(refused.stderr).to.equal(
            `${notServed}: use \`iac-code a2a-client extended-card\` with the same --url and the server's credentials (GetExtendedAgentCard, served to authenticated callers only) instead.\n`,
          );
          const card = JSON.parse(ok(extended).stdout) as Json;
          expect(card.supportedInterfaces[0].protocolBinding).to.equal(kase.name);
          expect(card.capabilities.extendedAgentCard).to.equal(true);
        } else {
          expect(refused.stderr).to.equal(
            `${notServed}, and neither is the extended card (GetExtendedAgentCard is served to authenticated callers only, and a ${scheme} URL carries no credentials).\n`,
          );
          expect(extended.code).to.equal(EXIT.error);
          expect(extended.stderr).to.match(/^A2A error: .*\(UNSUPPORTED_OPERATION, JSON-RPC -32004\)\n$/);
        }
      });

      if (kase.shared) {
        it("task-subscribe follows a running turn to its end", async () => {
          const running = runClient(["call", ...url(), ...cwd(), "-p", "[SLOW] follow"]);
          const id = await workingTask(url());
          const sub = ok(await runClient(["task-subscribe", ...url(), "--task-id", id]));
          const events = sub.stdout
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line) as Json);
          expect(events[0].task.id).to.equal(id);
          expect(events.at(-1)!.statusUpdate.status.state).to.equal("TASK_STATE_INPUT_REQUIRED");
          expect(ok(await running).stdout).to.include("slow end");
        });
      }

      if (["websocket", "grpc-jsonrpc"].includes(kase.name)) {
        it("without the token the server refuses the call", async () => {
          const refused = await runClient(["task-list", "--url", started.url, "--output", "json"]);
          expect(refused.code).to.equal(EXIT.error);
          expect(refused.stderr).to.match(/Unauthorized/);
        });
      }
    });
  }
});
