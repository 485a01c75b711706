// The gRPC interface URL the card advertises is a gRPC target, host:port (the
// form A2A's proto names for gRPC, "hostname:port"): the URL dialed as-is by
// @a2a-js/sdk's gRPC transport (@grpc/grpc-js) and by Python's grpc
// (insecure_channel, what a2a-sdk's channel factory is given), and read by
// urllib.parse once it is written as an authority (urlsplit("//" + url)).
// An http:// or grpc:// URL would be read by urlparse but dialed by neither
// gRPC stack (both resolve "http" as a DNS name): DECISIONS.md.
import { execFile } from "node:child_process";
import net from "node:net";
import { promisify } from "node:util";
import { expect } from "chai";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { AgentCard, SendMessageRequest, type Task } from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import { pb } from "../../src/contract/index.js";
import { startBindingsServer, type BindingsServer } from "./fixtures/server.js";

const run = promisify(execFile);
const PYTHON = "/usr/bin/python3";
const DIAL = "test/a2a-bindings/fixtures/grpc_dial.py";

interface Dialed {
  urlparse: { hostname: string | null; port: number | null };
  urlsplit: { hostname: string | null; port: number | null };
  asIs: Array<{ ok?: string; error?: string; details?: string }>;
  fromUrllib: Array<{ ok?: string; error?: string; details?: string }>;
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** Python's grpc on the URL as-is and on urllib's host and port: a SendMessage, then a ListTasks of its context. */
async function dialFromPython(
  url: string,
  contextId: string,
): Promise<{ dialed: Dialed; tasks: string[][] }> {
  const send = create(pb.SendMessageRequestSchema, {
    message: {
      messageId: `py-${contextId}`,
      contextId,
      role: pb.Role.USER,
      parts: [{ content: { case: "text", value: "hello from python" } }],
    },
  });
  const list = create(pb.ListTasksRequestSchema, { contextId });
  const { stdout } = await run(PYTHON, [
    DIAL,
    url,
    "SendMessage",
    hex(toBinary(pb.SendMessageRequestSchema, send)),
    "ListTasks",
    hex(toBinary(pb.ListTasksRequestSchema, list)),
  ]);
  const dialed = JSON.parse(stdout) as Dialed;
  const tasks = [dialed.asIs, dialed.fromUrllib].map((calls) => {
    expect(
      calls.map((c) => c.error ?? "ok"),
      JSON.stringify(calls),
    ).to.deep.equal(["ok", "ok"]);
    const sent = fromBinary(pb.SendMessageResponseSchema, Buffer.from(calls[0].ok!, "hex"));
    expect(sent.payload.case).to.equal("task");
    const listed = fromBinary(pb.ListTasksResponseSchema, Buffer.from(calls[1].ok!, "hex"));
    return listed.tasks.map((task) => task.contextId);
  });
  return { dialed, tasks };
}

/** @a2a-js/sdk started from the card alone, speaking gRPC to the URL the card gives. */
async function dialFromSdk(card: unknown): Promise<Task> {
  const factory = new ClientFactory({
    transports: [new GrpcTransportFactory()],
    preferredTransports: ["GRPC"],
  });
  const client = await factory.createFromAgentCard(AgentCard.fromJSON(card));
  expect(client.transport.protocolName).to.equal("GRPC");
  return (await client.sendMessage(
    SendMessageRequest.fromJSON({
      message: { messageId: "sdk-1", role: "ROLE_USER", parts: [{ text: "hi" }] },
    }),
  )) as Task;
}

function grpcUrlOf(s: BindingsServer): string {
  const found = (
    s.server.cards.publicCard.json.supportedInterfaces as Array<{ url: string; protocolBinding: string }>
  )
    .filter((i) => i.protocolBinding === "GRPC")
    .map((i) => i.url);
  expect(found).to.have.length(1);
  return found[0];
}

async function checkEveryDialer(s: BindingsServer, host: string, port: number): Promise<void> {
  const url = grpcUrlOf(s);
  expect(url).to.equal(`${host.includes(":") ? `[${host}]` : host}:${port}`);
  const task = await dialFromSdk(s.server.cards.publicCard.json);
  expect(task.history?.length).to.be.greaterThan(0);
  const contextId = `py-${port}-${Date.now()}`;
  const { dialed, tasks } = await dialFromPython(url, contextId);
  // The URL as-is, then the host and port urllib read: one server, a second task in the context.
  expect(tasks).to.deep.equal([[contextId], [contextId, contextId]]);
  expect(dialed.urlsplit).to.deep.equal({ hostname: host, port });
  // What a client that urlparse()s the bare form gets instead (the reason for the "//").
  expect(dialed.urlparse.hostname).to.equal(null);
}

describe("a2a-bindings: the card's gRPC URL, dialed by the JS SDK, Python grpc and urllib.parse", function () {
  this.timeout(60_000);

  it("one port: host:port of the shared listener", async () => {
    const s = await startBindingsServer();
    try {
      await checkEveryDialer(s, "127.0.0.1", s.server.port);
    } finally {
      await s.close();
    }
  });

  it("grpc-port: host:port of the gRPC listener", async () => {
    const s = await startBindingsServer({ "grpc-port": 0 });
    try {
      const port = Number(/:(\d+)$/.exec(s.server.grpcTarget)![1]);
      expect(port).to.not.equal(s.server.port);
      await checkEveryDialer(s, "127.0.0.1", port);
    } finally {
      await s.close();
    }
  });

  it("an IPv6 host: [::1]:port", async function () {
    const probe = net.createServer();
    const bound = await new Promise<boolean>((resolve) => {
      probe.once("error", () => resolve(false));
      probe.listen(0, "::1", () => resolve(true));
    });
    probe.close();
    if (!bound) this.skip(); // no IPv6 loopback on this machine
    const s = await startBindingsServer({ host: "::1" });
    try {
      await checkEveryDialer(s, "::1", s.server.port);
    } finally {
      await s.close();
    }
  });
});
