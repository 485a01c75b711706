// The gRPC transport's own cost, without any A2A work: SendMessage answered
// with one constant task by (a) our binding's unary path (grpc-unary.ts, on
// node:http2), (b) Connect on node:http2 (what our binding runs streaming
// calls on, and ran unary calls on before) and (c) @grpc/grpc-js (the stack
// of the @a2a-js/sdk gRPC server), each in its own process, driven by the
// same grpc-js client as a2a-vs-sdk.ts. Prints the server CPU per request of
// each and the ratios: what separates our gRPC unary figure from the SDK's
// before the core runs.
//
//   npx tsx scripts/bench/grpc-transport-floor.ts [--requests 3000] [--rounds 5]
import { option } from "./bench-args.js";
import { fork, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import pino from "pino";
import { pb } from "../../src/contract/index.js";
import { GRPC_MAX_MESSAGE_BYTES } from "../../src/a2a/bindings/grpc.js";
import { withUnaryFastPath, type A2AGrpcImpl } from "../../src/a2a/bindings/grpc-unary.js";
import { grpcDriver, median, pool } from "./bench-clients.js";

const ANSWER = create(pb.SendMessageResponseSchema, {
  payload: {
    case: "task",
    value: { id: "t", contextId: "c", status: { state: pb.TaskState.INPUT_REQUIRED } },
  },
});

function connectServer(): void {
  const handler = connectNodeAdapter({
    grpc: true,
    grpcWeb: false,
    connect: false,
    routes: (router) => router.rpc(pb.A2AService.method.sendMessage, () => Promise.resolve(ANSWER)),
  });
  const server = http2.createServer(handler);
  server.listen(0, "127.0.0.1", () => process.send!((server.address() as AddressInfo).port));
}

function fastPathServer(): void {
  const handler = withUnaryFastPath({
    // Only SendMessage is called here.
    impl: { sendMessage: () => Promise.resolve(ANSWER) } as unknown as A2AGrpcImpl,
    readMaxBytes: GRPC_MAX_MESSAGE_BYTES,
    logger: pino({ level: "silent" }),
    connect: (_req, res) => {
      res.statusCode = 404;
      res.end();
    },
  });
  const server = http2.createServer(handler);
  server.listen(0, "127.0.0.1", () => process.send!((server.address() as AddressInfo).port));
}

function grpcJsServer(): void {
  const server = new grpc.Server();
  const definition: grpc.ServiceDefinition = {
    SendMessage: {
      path: `/${pb.A2AService.typeName}/SendMessage`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: pb.SendMessageRequest) => Buffer.from(toBinary(pb.SendMessageRequestSchema, m)),
      requestDeserialize: (b: Buffer) => fromBinary(pb.SendMessageRequestSchema, b),
      responseSerialize: (m: pb.SendMessageResponse) =>
        Buffer.from(toBinary(pb.SendMessageResponseSchema, m)),
      responseDeserialize: (b: Buffer) => fromBinary(pb.SendMessageResponseSchema, b),
    },
  };
  server.addService(definition, {
    SendMessage: (_call: unknown, done: grpc.sendUnaryData<pb.SendMessageResponse>) => done(null, ANSWER),
  });
  server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) => {
    if (error) throw error;
    process.send!(port);
  });
}

/** CPU time (user + system, ms) of a process so far, from /proc (100 ticks per second). */
function cpuMs(child: ChildProcess): number {
  const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function main(): Promise<void> {
  const requests = option("requests", 3000);
  const rounds = option("rounds", 5);
  const peers = [];
  for (const kind of ["fast-path", "connect", "grpc-js"]) {
    const child = fork(import.meta.filename, [kind], { execArgv: ["--import", "tsx"] });
    const port = await new Promise<number>((resolve) => child.once("message", (m) => resolve(m as number)));
    peers.push({ kind, child, driver: grpcDriver(`127.0.0.1:${port}`, 1), cpuUs: [] as number[] });
  }
  try {
    for (const p of peers) await pool(requests, 16, () => p.driver.unary());
    for (let round = 0; round < rounds; round += 1) {
      for (const p of peers) {
        const before = cpuMs(p.child);
        await pool(requests, 16, () => p.driver.unary());
        p.cpuUs.push(((cpuMs(p.child) - before) * 1000) / requests);
      }
    }
    const [fastPath, connect, grpcJs] = peers.map((p) => median(p.cpuUs));
    console.log(
      `gRPC unary answering a constant, server CPU per request (median of ${rounds} alternating rounds): ` +
        `our unary path on node:http2 ${fastPath.toFixed(0)} us, Connect on node:http2 ${connect.toFixed(0)} us, ` +
        `grpc-js ${grpcJs.toFixed(0)} us; ours/grpc-js ${(fastPath / grpcJs).toFixed(2)}x, Connect/grpc-js ${(connect / grpcJs).toFixed(2)}x`,
    );
  } finally {
    for (const p of peers) {
      p.driver.close();
      p.child.kill();
    }
  }
}

const kind = process.argv[2];
if (kind === "fast-path") fastPathServer();
else if (kind === "connect") connectServer();
else if (kind === "grpc-js") grpcJsServer();
else await main();
