// Benchmark: gRPC unary and streaming throughput of iac-code's A2A server,
// compared with JSON-RPC on the same server (same port) and with an
// @a2a-js/sdk gRPC server (@grpc/grpc-js + DefaultRequestHandler, in-memory
// store) running the same trivial agent. Every figure is measured with the
// same clients in this process over loopback; loops are bounded.
//
//   npx tsx scripts/bench/grpc-throughput.ts [--requests 400] [--streams 80] [--chunks 20] [--concurrency 8] [--rounds 3]
//
// The three targets are measured in turn, round after round, and the median of
// the rounds is reported, so a burst of load on the machine skews no one target.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { AgentCard } from "@a2a-js/sdk";
import { DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { A2AService as SdkA2AService, grpcService, UserBuilder } from "@a2a-js/sdk/server/grpc";
import { startA2aServer } from "../../src/a2a/server.js";
import { resolveSettings } from "../../src/server/config.js";
import { createLogger } from "../../src/server/logger.js";
import { TrivialSdkExecutor } from "./grpc-trivial-agents.js";
import { TrivialRuntime } from "./trivial-runtime.js";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1 || value > 100_000)
    throw new Error(`--${name} must be 1..100000`);
  return value;
}

const REQUESTS = option("requests", 400);
const STREAMS = option("streams", 80);
const CHUNKS = option("chunks", 20);
const CONCURRENCY = option("concurrency", 8);
const ROUNDS = option("rounds", 3);
const WARMUP = 20;

// ---- one gRPC client (grpc-js + proto-loader from our proto/) for both servers ----

const require = createRequire(import.meta.url);
const definition = protoLoader.loadSync("lf/a2a/v1/a2a.proto", {
  includeDirs: [path.resolve("proto"), path.dirname(require.resolve("google-proto-files/package.json"))],
  enums: String,
  oneofs: true,
});
interface GrpcA2AClient extends grpc.Client {
  SendMessage(req: object, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, v?: object) => void): void;
  SendStreamingMessage(req: object, md: grpc.Metadata): grpc.ClientReadableStream<object>;
}
// grpc-js builds clients at run time from the loaded definition.
const GrpcClient = (
  grpc.loadPackageDefinition(definition) as unknown as {
    lf: {
      a2a: { v1: { A2AService: new (target: string, creds: grpc.ChannelCredentials) => GrpcA2AClient } };
    };
  }
).lf.a2a.v1.A2AService;

function grpcMetadata(): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set("a2a-version", "1.0");
  return md;
}

function userMessage(text: string): { message: object } {
  return { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }] } };
}

interface Driver {
  unary(): Promise<void>;
  /** Resolves with the number of events received. */
  stream(): Promise<number>;
  close(): void;
}

function grpcDriver(target: string): Driver {
  const client = new GrpcClient(target, grpc.credentials.createInsecure());
  return {
    unary: () =>
      new Promise((resolve, reject) =>
        client.SendMessage(userMessage("hello"), grpcMetadata(), (error) =>
          error ? reject(error) : resolve(),
        ),
      ),
    stream: () =>
      new Promise((resolve, reject) => {
        let events = 0;
        const call = client.SendStreamingMessage(userMessage(`chunks ${CHUNKS}`), grpcMetadata());
        call.on("data", () => (events += 1));
        call.on("error", reject);
        call.on("end", () => resolve(events));
      }),
    close: () => client.close(),
  };
}

function jsonRpcDriver(url: string): Driver {
  let id = 0;
  const post = (method: string, text: string, accept: string) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept, "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params: userMessage(text) }),
    });
  return {
    async unary() {
      const reply = (await (await post("SendMessage", "hello", "application/json")).json()) as {
        error?: unknown;
      };
      if (reply.error) throw new Error(JSON.stringify(reply.error));
    },
    async stream() {
      const response = await post("SendStreamingMessage", `chunks ${CHUNKS}`, "text/event-stream");
      const text = await response.text();
      return text.split("\n\n").filter((frame) => frame.startsWith("data: ")).length;
    },
    close: () => undefined,
  };
}

/** Runs `total` jobs with `concurrency` workers; returns jobs (or units) per second. */
async function rate(
  total: number,
  job: () => Promise<number>,
): Promise<{ perSecond: number; units: number }> {
  let next = 0;
  let units = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) {
        next += 1;
        // Await first: `units += await job()` would read `units` before the await and lose updates.
        const done = await job();
        units += done;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { perSecond: units / seconds, units };
}

interface Figures {
  rps: number;
  eps: number;
}

async function warmUp(driver: Driver): Promise<void> {
  for (let i = 0; i < WARMUP; i += 1) await driver.unary();
  await driver.stream();
}

async function measure(driver: Driver): Promise<Figures> {
  const unary = await rate(REQUESTS, async () => {
    await driver.unary();
    return 1;
  });
  const stream = await rate(STREAMS, () => driver.stream());
  if (stream.units !== STREAMS * (CHUNKS + 5)) throw new Error(`unexpected event count ${stream.units}`);
  return { rps: unary.perSecond, eps: stream.perSecond };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function startSdkGrpcServer(): Promise<{ target: string; close(): Promise<void> }> {
  const server = new grpc.Server();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  const target = `127.0.0.1:${port}`;
  const card = AgentCard.fromJSON({
    name: "trivial",
    description: "Trivial agent for the gRPC benchmark",
    version: "1.0.0",
    supportedInterfaces: [{ url: target, protocolBinding: "GRPC", protocolVersion: "1.0" }],
    capabilities: { streaming: true },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "echo", name: "Echo", description: "Echoes", tags: ["echo"] }],
  });
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    new TrivialSdkExecutor(),
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    { keepBusAliveStates: [] },
  );
  server.addService(
    SdkA2AService,
    grpcService({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
  );
  return {
    target,
    close: () => new Promise((resolve) => server.tryShutdown(() => resolve())),
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "iac-grpc-bench-"));
  const settings = resolveSettings({ port: 0, "persistence-dir": path.join(dir, "persist") }, {}, {});
  const ours = await startA2aServer(settings, {
    runtime: new TrivialRuntime(),
    logger: createLogger({ silent: true }),
    cwd: dir,
    env: {},
  });
  const sdk = await startSdkGrpcServer();
  const drivers = {
    grpc: grpcDriver(ours.grpcTarget),
    jsonRpc: jsonRpcDriver(ours.url),
    sdkGrpc: grpcDriver(sdk.target),
  };
  try {
    console.log(
      `node ${process.version}, ${os.cpus().length} CPUs; ${REQUESTS} unary requests, ${STREAMS} streams of ` +
        `${CHUNKS} chunks, concurrency ${CONCURRENCY}; loopback\n`,
    );
    const targets = [
      { name: "iac-code gRPC (one port)", driver: drivers.grpc, runs: [] as Figures[] },
      { name: "iac-code JSON-RPC (one port)", driver: drivers.jsonRpc, runs: [] as Figures[] },
      { name: "@a2a-js/sdk gRPC server", driver: drivers.sdkGrpc, runs: [] as Figures[] },
    ];
    for (const target of targets) await warmUp(target.driver);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const target of targets) target.runs.push(await measure(target.driver));
    }
    const [grpcOurs, rpcOurs, grpcSdk] = targets.map((target) => {
      const figures = {
        rps: median(target.runs.map((r) => r.rps)),
        eps: median(target.runs.map((r) => r.eps)),
      };
      console.log(
        `${target.name.padEnd(28)} unary ${figures.rps.toFixed(0).padStart(6)} req/s   ` +
          `streaming ${figures.eps.toFixed(0).padStart(6)} events/s   (median of ${ROUNDS}; unary runs ` +
          `${target.runs.map((r) => r.rps.toFixed(0)).join("/")})`,
      );
      return figures;
    });
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
    console.log("\nratios (above 1 = iac-code gRPC faster)");
    console.log(
      `  iac-code gRPC / iac-code JSON-RPC, same server:  unary ${ratio(grpcOurs.rps, rpcOurs.rps)}   ` +
        `streaming ${ratio(grpcOurs.eps, rpcOurs.eps)}`,
    );
    console.log(
      `  iac-code gRPC / @a2a-js/sdk gRPC server:         unary ${ratio(grpcOurs.rps, grpcSdk.rps)}   ` +
        `streaming ${ratio(grpcOurs.eps, grpcSdk.eps)}`,
    );
  } finally {
    for (const driver of Object.values(drivers)) driver.close();
    await sdk.close();
    await ours.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
