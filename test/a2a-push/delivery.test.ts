/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// Push delivery end to end in one process: the real A2A server (push on, the
// local queue) and a receiver on 127.0.0.1 admitted by push-allow-private-hosts.
// What is delivered (state changes and artifact updates, not text chunks),
// with which headers; retries (503 then 200, a receiver that times out), dead
// letters (400, a host that resolves to a private address: the resolver seam);
// and no token or credential in the database files or the logs.
import { expect } from "chai";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Resolver } from "../../src/a2a/push/url-policy.js";
import { rpc, userMessage, type AnyJson } from "../a2a/helpers.js";
import { startPushReceiver, type PushReceiver, type Received } from "../fixtures/push-receiver.js";
import {
  BASIC_CRED,
  BEARER_CRED,
  deadLetters,
  sendWithHooks,
  sleep,
  startPushServer,
  TOKEN,
  type PushHarness,
} from "./harness.js";

const states = (received: Received[]) => received.map((r) => `${r.kind}:${r.state ?? ""}`);

describe("a2a-push: delivery to a loopback receiver (local queue)", function () {
  this.timeout(60_000);
  let h: PushHarness;
  let receiver: PushReceiver;

  beforeEach(async () => {
    receiver = await startPushReceiver();
  });
  afterEach(async () => {
    await h?.close();
    await receiver.close();
  });

  it("delivers every state change and artifact update (no text chunks) with the token, Authorization and a stable event id", async () => {
    h = await startPushServer();
    const { taskId } = await sendWithHooks(h, "[[tool]] [[permission]] build a VPC", [
      { url: receiver.url, token: TOKEN, authentication: { scheme: "Bearer", credentials: BEARER_CRED } },
    ]);
    // The turn waits for the permission: SUBMITTED, WORKING, the artifact, INPUT_REQUIRED with the request.
    await receiver.waitFor((r) => r.some((e) => e.state === "TASK_STATE_INPUT_REQUIRED"));
    await rpc(h.url, "CreateTaskPushNotificationConfig", {
      taskId,
      id: "basic-hook",
      url: `${receiver.url}?via=basic`,
      authentication: { scheme: "basic", credentials: BASIC_CRED },
    });
    const canceled = await rpc(h.url, "CancelTask", { id: taskId });
    expect(canceled.body.error).to.equal(undefined);
    const received = await receiver.waitFor(
      (r) => r.filter((e) => e.state === "TASK_STATE_CANCELED").length === 2,
    );

    const first = received.filter((r) => !r.path.includes("via=basic"));
    expect(states(first)).to.deep.equal([
      "task:TASK_STATE_SUBMITTED",
      "statusUpdate:TASK_STATE_WORKING",
      "artifactUpdate:",
      "statusUpdate:TASK_STATE_INPUT_REQUIRED",
      "statusUpdate:TASK_STATE_CANCELED",
    ]);
    const input = first[3].body.statusUpdate as AnyJson;
    expect(input.metadata.iac_code.input.kind).to.equal("permission");
    expect((first[2].body.artifactUpdate as AnyJson).artifact.name).to.equal("vpc.yaml");
    for (const r of first) {
      expect(r.headers["content-type"]).to.equal("application/a2a+json");
      expect(r.headers["x-a2a-notification-token"]).to.equal(TOKEN);
      expect(r.headers.authorization).to.equal(`Bearer ${BEARER_CRED}`);
      expect(r.headers.host).to.equal(`127.0.0.1:${receiver.port}`);
      expect(r.path).to.equal("/hook");
    }
    expect(new Set(first.map((r) => r.eventId)).size).to.equal(first.length);
    // The CANCELED event went to both configs, with one event id; Basic from user:pass; no token there.
    const basic = received.find((r) => r.path === "/hook?via=basic")!;
    expect(basic.headers.authorization).to.equal(`Basic ${Buffer.from(BASIC_CRED).toString("base64")}`);
    expect(basic.headers["x-a2a-notification-token"]).to.equal(undefined);
    expect(basic.eventId).to.equal(first[4].eventId);

    // Neither the database files nor the logs hold a token or a credential in clear.
    await h.server.flushStores();
    const basicHeader = Buffer.from(BASIC_CRED).toString("base64");
    for (const name of ["state.db", "state.db-wal", "push_keys.json"]) {
      const file = path.join(h.dir, "persist", name);
      if (!existsSync(file)) continue;
      const bytes = readFileSync(file).toString("latin1");
      for (const secret of [TOKEN, BEARER_CRED, BASIC_CRED, basicHeader])
        expect(bytes, name).to.not.include(secret);
    }
    expect(h.logs()).to.include("push delivered");
    for (const secret of [TOKEN, BEARER_CRED, BASIC_CRED, basicHeader])
      expect(h.logs()).to.not.include(secret);
  });

  it("a 503 is retried (the same event id) until a 200; a 400 goes to the dead letters, never retried", async () => {
    h = await startPushServer();
    receiver.reply = (r) =>
      r.state === "TASK_STATE_SUBMITTED" &&
      receiver.received.filter((e) => e.eventId === r.eventId).length === 1
        ? 503
        : r.state === "TASK_STATE_WORKING"
          ? 400
          : 200;
    const { taskId } = await sendWithHooks(h, "hello", [{ url: receiver.url }]);
    const received = await receiver.waitFor(
      (r) => r.filter((e) => e.state === "TASK_STATE_SUBMITTED").length === 2,
    );
    const submitted = received.filter((e) => e.state === "TASK_STATE_SUBMITTED");
    expect(submitted[0].eventId).to.equal(submitted[1].eventId);
    const [dead] = await deadLetters(h, 1);
    expect(dead).to.deep.include({ taskId, attempt: 1, lastError: "HTTPError: HTTP 400" });
    expect(JSON.parse(dead.payload)).to.have.nested.property(
      "statusUpdate.status.state",
      "TASK_STATE_WORKING",
    );
    await receiver.waitFor((r) => r.some((e) => e.state === "TASK_STATE_INPUT_REQUIRED"));
    await sleep(1500);
    expect(receiver.received.filter((e) => e.state === "TASK_STATE_WORKING")).to.have.length(1);
    expect(h.logs()).to.include("push delivery failed; will retry");
    expect(h.logs()).to.include("push delivery failed; dead letter");
  });

  it("safe mode: a payload is sent with the server's paths projected; the stored job keeps them", async () => {
    h = await startPushServer({ file: { "safe-mode": true } });
    receiver.reply = (r) => (r.kind === "task" ? 400 : 200);
    const file = path.join(h.dir, "templates", "vpc.yaml");
    await sendWithHooks(h, `look at ${file}`, [{ url: receiver.url }]);
    const [sent] = await receiver.waitFor((r) => r.some((e) => e.kind === "task"));
    expect(JSON.stringify(sent.body)).to.include("look at [PATH]").and.not.include(h.dir);
    const [dead] = await deadLetters(h, 1);
    expect(dead.payload).to.include(`look at ${file}`);
  });

  it("a receiver that does not answer within 5 s is tried again", async () => {
    h = await startPushServer();
    receiver.reply = (_r, n) => (n === 0 ? "hang" : 200);
    const started = Date.now();
    await sendWithHooks(h, "hello", [{ url: receiver.url }]);
    const received = await receiver.waitFor(
      (r) => r.filter((e) => e.state === "TASK_STATE_SUBMITTED").length === 2,
    );
    expect(Date.now() - started).to.be.greaterThan(5000);
    expect(received[0].eventId).to.equal(
      received.filter((e) => e.state === "TASK_STATE_SUBMITTED")[1].eventId,
    );
    expect(h.logs()).to.include("TimeoutError: no answer within 5000 ms");
  });

  it("resolves the host at delivery: a name that resolves to a private address is refused; an allowlisted one is pinned with its Host", async () => {
    const resolver: Resolver = (host) =>
      Promise.resolve(
        ["rebind.test", "pinned.test"].includes(host) ? [{ address: "127.0.0.1", family: 4 }] : [],
      );
    h = await startPushServer({ file: { "push-allow-private-hosts": ["pinned.test"] }, resolver });
    const { taskId } = await sendWithHooks(h, "hello", [{ url: `http://rebind.test:${receiver.port}/hook` }]);
    await rpc(h.url, "CreateTaskPushNotificationConfig", {
      taskId,
      id: "pinned",
      url: `http://pinned.test:${receiver.port}/pinned`,
    });
    // The next turn of the task (once the first one is over) goes to both configs.
    for (let i = 0; i < 100; i += 1) {
      const task = (await rpc(h.url, "GetTask", { id: taskId })).body.result as AnyJson;
      if (task.status.state === "TASK_STATE_INPUT_REQUIRED") break;
      await sleep(20);
    }
    const again = await rpc(h.url, "SendMessage", { message: userMessage("again", { taskId }) });
    expect(again.body.error, JSON.stringify(again.body.error)).to.equal(undefined);
    const received = await receiver.waitFor((r) => r.some((e) => e.state === "TASK_STATE_INPUT_REQUIRED"));
    expect(received.every((r) => r.path === "/pinned")).to.equal(true);
    expect(received[0].headers.host).to.equal(`pinned.test:${receiver.port}`);
    const dead = await deadLetters(h, 1);
    expect(dead[0]).to.deep.include({
      taskId,
      configId: taskId,
      lastError: "CallbackUrlError: A2A push callback URL must not resolve to private or local hosts",
    });
  });
});
