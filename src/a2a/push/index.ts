// Push notifications of one server: the keyring, the callback policy, the
// configs the A2A methods manage, and the delivery side: the worker on the
// local queue (the state database's outbox), or, with redis-streams, a relay
// from the outbox to the stream and the worker on the stream.
import type { Logger } from "pino";
import type { PushSettings } from "../config/push-settings.js";
import type { StateStore } from "../stores/state.js";
import { PushConfigs } from "./configs.js";
import { Keyring } from "./keyring.js";
import { DELIVERY_TIMEOUT_MS } from "./retry.js";
import type { PushRelay } from "./redis-queue.js";
import { PrivateHostAllowlist, systemResolver, type Resolver } from "./url-policy.js";
import { localQueue, PushWorker, type PushQueue } from "./worker.js";

export interface PushOptions {
  settings: PushSettings;
  state: StateStore;
  persistenceDir: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** The DNS seam (default: the system resolver). */
  resolve?: Resolver;
  /** Safe mode: each payload is projected when it is sent. */
  projectPayload?: (payload: string) => string;
}

export interface Push {
  configs: PushConfigs;
  /** Starts delivering (after start-up recovery has staged its events). */
  start(): void;
  /** Stops after the deliveries in flight and closes the queue. */
  stop(): Promise<void>;
}

export async function openPush(options: PushOptions): Promise<Push> {
  const { settings, state, logger } = options;
  const keyring = Keyring.load(options.persistenceDir, options.env);
  const allow = new PrivateHostAllowlist(settings.allowPrivateHosts);
  let queue: PushQueue;
  let relay: PushRelay | undefined;
  if (settings.queue === "redis-streams") {
    if (!keyring.environmentManaged)
      logger.warn(
        "push-queue redis-streams with a keyring of this server only: other servers of the group cannot open its jobs (set IAC_CODE_A2A_PUSH_KEYRING on every server)",
      );
    // Loaded here: ioredis only for a server whose push queue is in Redis.
    const { defaultConsumerName, PushRelay, RedisPushQueue } = await import("./redis-queue.js");
    const redis = await RedisPushQueue.open(
      {
        redisUrl: settings.redisUrl!,
        stream: settings.stream,
        retryKey: settings.retryKey,
        deadStream: settings.deadStream,
        consumerGroup: settings.consumerGroup,
        consumerName: settings.consumerName ?? defaultConsumerName(),
        leaseTimeoutMs: settings.leaseTimeoutMs,
      },
      logger,
    );
    relay = new PushRelay(state.pushJobs, redis, logger, settings.leaseTimeoutMs);
    queue = redis;
  } else {
    queue = localQueue(state.pushJobs, settings.leaseTimeoutMs);
  }
  const worker = new PushWorker({
    queue,
    logger,
    delivery: {
      keyring,
      allow,
      resolve: options.resolve ?? systemResolver,
      timeoutMs: DELIVERY_TIMEOUT_MS,
      ...(options.projectPayload ? { projectPayload: options.projectPayload } : {}),
    },
  });
  return {
    configs: new PushConfigs(state.pushConfigs, keyring, allow),
    start() {
      relay?.start();
      worker.start();
    },
    async stop() {
      await relay?.stop();
      await worker.stop();
    },
  };
}
