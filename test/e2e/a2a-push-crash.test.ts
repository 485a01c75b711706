/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read free-form A2A JSON replies through `any` (AnyJson) */
// `iac-code a2a` (from the sources) with push notifications, killed with
// SIGKILL while a delivery is in flight: with the local queue the restarted
// server delivers the job again (same event id); with Redis Streams a second
// server of the consumer group takes it over once the lease is over. The
// server's logs never show the token or the credential.
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { rpc, userMessage, type AnyJson } from "../a2a/helpers.js";
import { startPushReceiver, type PushReceiver } from "../fixtures/push-receiver.js";
import { startRedis, type TestRedis } from "../fixtures/redis-server.js";
import { cleanEnv, removeDir, SCRIPTS, startSourceCli, tempDir, type CliChild } from "./helpers.js";

const TOKEN = "crash-notify-7f41c9";
const CREDENTIAL = "crash-cred-2be8d0";

interface Setup {
  dir: string;
  env: NodeJS.ProcessEnv;
  config(name: string, extra: string[]): string;
}

function setup(): Setup {
  const dir = tempDir("iac-push-crash-");
  mkdirSync(path.join(dir, "workspace"), { recursive: true });
  const keyring = JSON.stringify({
    activeKeyId: "k",
    keys: [{ id: "k", key: randomBytes(32).toString("base64") }],
  });
  const env = cleanEnv(dir, {
    IAC_CODE_CONFIG_DIR: path.join(dir, "config"),
    IAC_CODE_A2A_PUSH_KEYRING: keyring,
  });
  return {
    dir,
    env,
    config(name, extra) {
      const file = path.join(dir, `${name}.yml`);
      writeFileSync(
        file,
        [
          "port: 0",
          `persistence-dir: ${JSON.stringify(path.join(dir, `persist-${name}`))}`,
          `allowed-cwds: [${JSON.stringify(dir)}]`,
          `script: ${JSON.stringify(path.join(SCRIPTS, "e2e-crash.yaml"))}`,
          "provider: scripted",
          "push-notifications: true",
          "push-allow-private-hosts: [127.0.0.1]",
          ...extra,
          "",
        ].join("\n"),
      );
      return file;
    },
  };
}

/** Sends a message whose task pushes to the receiver; returns the task id. */
async function sendWithHook(server: CliChild, receiver: PushReceiver, dir: string): Promise<string> {
  const reply = await rpc(server.url, "SendMessage", {
    message: userMessage("hello", { metadata: { iac_code: { cwd: path.join(dir, "workspace") } } }),
    configuration: {
      taskPushNotificationConfig: {
        url: receiver.url,
        token: TOKEN,
        authentication: { scheme: "bearer", credentials: CREDENTIAL },
      },
    },
  });
  expect(reply.body.error, JSON.stringify(reply.body.error)).to.equal(undefined);
  return (reply.body.result as AnyJson).task.id as string;
}

describe("e2e: kill -9 of `iac-code a2a` during a push delivery", function () {
  this.timeout(120_000);
  let s: Setup;
  let receiver: PushReceiver;
  const servers: CliChild[] = [];
  let redis: TestRedis | undefined;

  beforeEach(async () => {
    s = setup();
    receiver = await startPushReceiver();
    // The first delivery never gets an answer: the server is killed while it waits.
    receiver.reply = (_r, n) => (n === 0 ? "hang" : 200);
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop("SIGKILL")));
    await receiver.close();
    await redis?.close();
    redis = undefined;
    removeDir(s.dir);
  });

  it("local queue: the restarted server delivers the job again, with the same event id", async () => {
    const config = s.config("local", []);
    const first = await startSourceCli(["a2a", "--config", config], s.env);
    servers.push(first);
    const taskId = await sendWithHook(first, receiver, s.dir);
    const [inFlight] = await receiver.waitFor((r) => r.length === 1);
    await first.stop("SIGKILL");
    const logs = first.stderr();

    const second = await startSourceCli(["a2a", "--config", config], s.env);
    servers.push(second);
    const received = await receiver.waitFor((r) => r.some((e, i) => i > 0 && e.eventId === inFlight.eventId));
    const again = received.slice(1).find((e) => e.eventId === inFlight.eventId)!;
    expect(again.body).to.deep.equal(inFlight.body);
    expect(again.headers.authorization).to.equal(`Bearer ${CREDENTIAL}`);
    expect((inFlight.body.task as AnyJson).id).to.equal(taskId);
    // The rest of the turn's updates follow; the end of the turn is there.
    await receiver.waitFor((r) => r.some((e) => e.state === "TASK_STATE_INPUT_REQUIRED"));
    for (const text of [logs, second.stderr()]) {
      expect(text).to.not.include(TOKEN);
      expect(text).to.not.include(CREDENTIAL);
    }
  });

  it("redis-streams: a second server of the group takes the job over once the lease is over", async () => {
    redis = await startRedis();
    const shared = [
      "push-queue: redis-streams",
      `push-redis-url: ${redis.url}`,
      "push-lease-timeout-ms: 2000",
    ];
    const one = await startSourceCli(
      ["a2a", "--config", s.config("one", [...shared, "push-consumer-name: one"])],
      s.env,
    );
    servers.push(one);
    await sendWithHook(one, receiver, s.dir);
    const [inFlight] = await receiver.waitFor((r) => r.length === 1);
    await one.stop("SIGKILL");

    const two = await startSourceCli(
      ["a2a", "--config", s.config("two", [...shared, "push-consumer-name: two"])],
      s.env,
    );
    servers.push(two);
    const received = await receiver.waitFor((r) => r.some((e, i) => i > 0 && e.eventId === inFlight.eventId));
    const again = received.slice(1).find((e) => e.eventId === inFlight.eventId)!;
    // Not before the lease of the dead consumer ran out: the lease began at the claim, a little
    // before the receiver saw the first delivery, so the gap is the lease less that latency.
    expect(again.at - inFlight.at).to.be.at.least(1500);
    expect(again.body).to.deep.equal(inFlight.body);
    expect(again.headers["x-a2a-notification-token"]).to.equal(TOKEN);
  });
});
