// The servers the A2A benchmark compares, each started in its own process by
// scripts/bench/a2a-vs-sdk.ts (so the load generator and each server have a
// core to themselves and RSS is the server's own):
//   iac-code <persistence-dir> [--sync-every-commit]  our server, trivial agent, durable state
//   iac-code-redis <dir> <redis-url>                  our server with store: redis (a replica; scripts/bench/replicas.ts)
//   sdk                                              @a2a-js/sdk 1.3: Express JSON-RPC + grpc-js gRPC, in-memory store
//   raw                                              node:http answering the same JSON-RPC shapes, no framework, no store
// Each prints one line "READY <json>" ({jsonRpc, grpc?, startMs}) on stdout.
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { sseFrame } from "../../src/server/sse.js";
import { chunksOf, TrivialRuntime } from "./trivial-runtime.js";

// Our server runs from dist/ (the compiled JavaScript `npm start` runs; a2a-vs-sdk.ts builds it
// first), or from src/ through tsx with IAC_CODE_FROM_SOURCE=1, as bin/iac-code.mjs does.
const code = process.env.IAC_CODE_FROM_SOURCE === "1" ? "../../src" : "../../dist/src";
type ServerModule = typeof import("../../src/a2a/server.js");
type ConfigModule = typeof import("../../src/a2a/config/server-settings.js");
type LoggerModule = typeof import("../../src/server/logger.js");

interface Ready {
  jsonRpc: string;
  grpc?: string;
  /** Milliseconds from the start of the server's start-up call to listening. */
  startMs: number;
}

function ready(info: Ready): void {
  process.stdout.write(`READY ${JSON.stringify(info)}\n`);
}

async function iacCode(dir: string, syncEveryCommit: boolean, redisUrl?: string): Promise<void> {
  const { startA2aServer } = (await import(`${code}/a2a/server.js`)) as ServerModule;
  const { resolveSettings } = (await import(`${code}/a2a/config/server-settings.js`)) as ConfigModule;
  const { createLogger } = (await import(`${code}/server/logger.js`)) as LoggerModule;
  const started = performance.now();
  // The default workspace (store: redis creates no persistence dir).
  mkdirSync(dir, { recursive: true });
  const settings = resolveSettings(
    {
      port: 0,
      "persistence-dir": dir,
      "sync-every-commit": syncEveryCommit,
      ...(redisUrl ? { store: "redis", "redis-url": redisUrl } : {}),
    },
    {},
    {},
  );
  const server = await startA2aServer(settings, {
    runtime: new TrivialRuntime(),
    logger: createLogger({ silent: true }),
    cwd: dir,
    env: {},
  });
  const startMs = performance.now() - started;
  process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
  ready({ jsonRpc: server.url, grpc: server.grpcTarget, startMs });
}

async function sdk(): Promise<void> {
  const started = performance.now();
  // Loaded here only: the other servers' processes (and their RSS) carry none of the SDK.
  const grpc = await import("@grpc/grpc-js");
  const { default: express } = await import("express");
  const { AgentCard } = await import("@a2a-js/sdk");
  const { DefaultRequestHandler, InMemoryTaskStore } = await import("@a2a-js/sdk/server");
  const { jsonRpcHandler, UserBuilder: HttpUsers } = await import("@a2a-js/sdk/server/express");
  const {
    A2AService: SdkGrpcService,
    grpcService,
    UserBuilder: GrpcUsers,
  } = await import("@a2a-js/sdk/server/grpc");
  const app = express();
  const http = await new Promise<import("node:http").Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/`;
  const grpcServer = new grpc.Server();
  const grpcPort = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    ),
  );
  const card = AgentCard.fromJSON({
    name: "sdk-bench",
    description: "trivial agent",
    version: "1.0.0",
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `127.0.0.1:${grpcPort}`, protocolBinding: "GRPC", protocolVersion: "1.0" },
    ],
    capabilities: { streaming: true },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "echo", name: "echo", description: "echo", tags: ["bench"] }],
  });
  // One handler (one in-memory store) behind both bindings, as an SDK user would wire it.
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    new (await import("./trivial-sdk-executor.js")).TrivialSdkExecutor(),
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    { keepBusAliveStates: [] },
  );
  app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: HttpUsers.noAuthentication }));
  grpcServer.addService(
    SdkGrpcService,
    grpcService({ requestHandler: handler, userBuilder: GrpcUsers.noAuthentication }),
  );
  ready({ jsonRpc: url, grpc: `127.0.0.1:${grpcPort}`, startMs: performance.now() - started });
}

/** The ceiling: the JSON-RPC shapes of the trivial agent's turn, built and written with node:http alone. */
function raw(): void {
  const started = performance.now();
  const now = () => new Date().toISOString();
  const status = (taskId: string, contextId: string, state: string, text?: string, metadata?: object) => ({
    statusUpdate: {
      taskId,
      contextId,
      status: {
        state,
        timestamp: now(),
        ...(text === undefined
          ? {}
          : {
              message: { messageId: randomUUID(), role: "ROLE_AGENT", taskId, contextId, parts: [{ text }] },
            }),
      },
      ...(metadata ? { metadata } : {}),
    },
  });
  const turn = (params: { message: { parts: Array<{ text?: string }> } & Record<string, unknown> }) => {
    const taskId = randomUUID();
    const contextId = randomUUID();
    const chunks = chunksOf(params.message.parts.map((p) => p.text ?? "").join(""));
    const user = { ...params.message, taskId, contextId };
    const final = chunks.join("");
    const task = {
      id: taskId,
      contextId,
      status: { state: "TASK_STATE_SUBMITTED", timestamp: now() },
      history: [user],
    };
    const events: object[] = [{ task }, status(taskId, contextId, "TASK_STATE_WORKING")];
    for (const text of chunks) events.push(status(taskId, contextId, "TASK_STATE_WORKING", text));
    events.push(
      status(taskId, contextId, "TASK_STATE_WORKING", undefined, { iac_code: { usage: { totalTokens: 1 } } }),
    );
    events.push(status(taskId, contextId, "TASK_STATE_WORKING", final));
    events.push(status(taskId, contextId, "TASK_STATE_INPUT_REQUIRED"));
    const done = {
      ...task,
      status: { state: "TASK_STATE_INPUT_REQUIRED", timestamp: now() },
      history: [
        user,
        { messageId: randomUUID(), role: "ROLE_AGENT", taskId, contextId, parts: [{ text: final }] },
      ],
    };
    return { events, done };
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const body: Buffer[] = [];
    req.on("data", (chunk: Buffer) => body.push(chunk));
    req.on("end", () => {
      const call = JSON.parse(Buffer.concat(body).toString("utf8")) as {
        id: number;
        method: string;
        params: Parameters<typeof turn>[0];
      };
      const { events, done } = turn(call.params);
      if (call.method === "SendStreamingMessage") {
        res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
        for (const result of events)
          res.write(sseFrame(JSON.stringify({ jsonrpc: "2.0", id: call.id, result })));
        res.end();
        return;
      }
      const reply = JSON.stringify({ jsonrpc: "2.0", id: call.id, result: { task: done } });
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(reply) });
      res.end(reply);
    });
  });
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    ready({ jsonRpc: `http://127.0.0.1:${port}/`, startMs: performance.now() - started });
  });
}

const [kind, dir, flag] = process.argv.slice(2);
if (kind === "iac-code" && dir) await iacCode(dir, flag === "--sync-every-commit");
else if (kind === "iac-code-redis" && dir && flag) await iacCode(dir, false, flag);
else if (kind === "sdk") await sdk();
else if (kind === "raw") raw();
else
  throw new Error(
    "usage: a2a-peers.ts iac-code <persistence-dir> [--sync-every-commit] | iac-code-redis <dir> <redis-url> | sdk | raw",
  );
