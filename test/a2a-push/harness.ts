// What the push tests share: an A2A server with push on (a FakeRuntime, its
// logs captured), a message sent with push configs for its task, the local
// dead letters, and the secrets whose absence from disk and logs is checked.
import { expect } from "chai";
import path from "node:path";
import { Writable } from "node:stream";
import { startA2aServer, type RunningA2aServer } from "../../src/a2a/server.js";
import type { Resolver } from "../../src/a2a/push/url-policy.js";
import type { PushJob } from "../../src/a2a/stores/state.js";
import { resolveSettings } from "../../src/a2a/config/server-settings.js";
import { createLogger } from "../../src/server/logger.js";
import { FakeRuntime } from "../a2a/fixtures/fake-runtime.js";
import { cleanup, makeTempDir, openStream, rpc, userMessage } from "../a2a/helpers.js";

export const TOKEN = "notify-tok-6c1f2a";
export const BEARER_CRED = "cb-cred-9d3e7b";
export const BASIC_CRED = "alice:pw-4b8a0c";

export interface PushHarness {
  server: RunningA2aServer;
  url: string;
  dir: string;
  logs: () => string;
  close(): Promise<void>;
}

export async function startPushServer(
  options: { file?: Record<string, unknown>; resolver?: Resolver; env?: NodeJS.ProcessEnv } = {},
): Promise<PushHarness> {
  const dir = makeTempDir("iac-push-");
  let logs = "";
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs += chunk.toString();
      done();
    },
  });
  const settings = resolveSettings(
    {
      port: 0,
      "persistence-dir": path.join(dir, "persist"),
      "push-notifications": true,
      "push-allow-private-hosts": ["127.0.0.1"],
      ...options.file,
    },
    {},
    options.env ?? {},
  );
  const server = await startA2aServer(settings, {
    runtime: new FakeRuntime(path.join(dir, "sessions")),
    logger: createLogger({ destination: sink, debug: true }),
    cwd: dir,
    env: options.env ?? {},
    pushResolver: options.resolver,
  }).catch((error: unknown) => {
    cleanup(dir);
    throw error;
  });
  return {
    server,
    url: server.url,
    dir,
    logs: () => logs,
    async close() {
      await server.close();
      cleanup(dir);
    },
  };
}

/** Sends a message whose task gets `hooks` as push configs (the first inline, the others created after its first event). */
export async function sendWithHooks(
  h: PushHarness,
  text: string,
  hooks: Array<Record<string, unknown>>,
): Promise<{ taskId: string }> {
  const stream = await openStream(h.url, "SendStreamingMessage", {
    message: userMessage(text),
    configuration: { taskPushNotificationConfig: hooks[0] },
  });
  const first = (await stream.next()) as { result: { task: { id: string } } };
  const taskId = first.result.task.id;
  for (const hook of hooks.slice(1)) {
    const reply = await rpc(h.url, "CreateTaskPushNotificationConfig", { taskId, ...hook });
    expect(reply.body.error, JSON.stringify(reply.body.error)).to.equal(undefined);
  }
  // The turn goes on without a reader: the receiver is the one that follows it.
  stream.stop();
  return { taskId };
}

export async function deadLetters(h: PushHarness, count: number): Promise<PushJob[]> {
  for (let i = 0; i < 200; i += 1) {
    const dead = await h.server.state.pushJobs.deadLetters();
    if (dead.length >= count) return dead;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`expected ${count} dead letters`);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
