// The redis-streams transport: requests are entries of `request-stream` with
// the fields correlation_id, reply_stream and payload (a JSON-RPC request),
// read through the consumer group `consumer-group` (created from 0-0 with
// MKSTREAM), so several servers in one group answer each request once. Each
// reply is an entry of reply_stream (else `response-stream`) with
// correlation_id, payload and final ("true"/"false"); the request is acked
// after its last reply. Access control is Redis's own: the URL's ACL user and
// password, rediss:// for TLS. At shutdown the consumer leaves the group.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import type { JsonRpcCore } from "../bindings/jsonrpc-core.js";
import { redisFields, redisReplyFields } from "./frames.js";
import { InFlight, replies, transportCaller } from "./replies.js";
import type { RunningTransport } from "./transport.js";
import { redisUrlForDisplay } from "../../server/redis.js";

export interface RedisStreamsOptions {
  core: JsonRpcCore;
  logger: Logger;
  redisUrl: string;
  requestStream: string;
  responseStream: string;
  consumerGroup: string;
}

/** Requests one consumer works on at once (a long turn does not hold up the next request). */
export const MAX_IN_FLIGHT = 16;
/**
 * How long one XREADGROUP waits for new requests before the loop checks again;
 * also the longest a stop waits for the last read (cutting it could leave an
 * entry delivered to this consumer but never seen).
 */
const BLOCK_MS = 500;
/** Pause after a failed read (Redis restarting, failing over). */
const RETRY_MS = 500;

export class RedisTransportError extends Error {
  override readonly name = "RedisTransportError";
}

type Entry = [id: string, fields: string[]];

async function connect(url: string, name: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, connectionName: name, maxRetriesPerRequest: null });
  // ioredis retries after start-up; the read loop logs what reaches it. The
  // last error says why a first connection failed (WRONGPASS, ECONNREFUSED).
  let last: Error | undefined;
  redis.on("error", (error: Error) => (last = error));
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    throw new RedisTransportError(
      `Cannot connect to Redis at ${redisUrlForDisplay(url)}: ${(last ?? (error as Error)).message}`,
    );
  }
  return redis;
}

export async function startRedisStreamsTransport(options: RedisStreamsOptions): Promise<RunningTransport> {
  const { logger, requestStream, consumerGroup } = options;
  const consumer = `consumer-${randomBytes(6).toString("hex")}`;
  const writer = await connect(options.redisUrl, `iac-code-a2a-${consumer}`);
  let reader: Redis;
  try {
    reader = await connect(options.redisUrl, `iac-code-a2a-${consumer}-reader`);
  } catch (error) {
    writer.disconnect();
    throw error;
  }
  const createGroup = async (): Promise<void> => {
    try {
      await writer.xgroup("CREATE", requestStream, consumerGroup, "0-0", "MKSTREAM");
    } catch (error) {
      if (!String((error as Error).message).startsWith("BUSYGROUP")) throw error;
    }
  };
  try {
    await createGroup();
    // Joined from the start (not only at its first read), so the group shows every server.
    await writer.xgroup("CREATECONSUMER", requestStream, consumerGroup, consumer);
  } catch (error) {
    reader.disconnect();
    writer.disconnect();
    throw new RedisTransportError(`Cannot create the consumer group: ${(error as Error).message}`);
  }

  const requests = new InFlight();
  const caller = transportCaller("redis-streams", { owner: "", authenticated: false }, requests.signal);
  const answer = async ([entryId, raw]: Entry): Promise<void> => {
    const fields = redisFields(raw);
    const correlationId = fields.correlation_id;
    try {
      if (!correlationId) {
        logger.warn({ entryId, stream: requestStream }, "Redis request without correlation_id: skipped");
        return;
      }
      const replyStream = fields.reply_stream || options.responseStream;
      for await (const reply of replies(options.core, fields.payload ?? "", caller)) {
        await writer.xadd(replyStream, "*", ...redisReplyFields(correlationId, reply));
      }
    } catch (error) {
      logger.warn({ err: error, entryId }, "Redis request could not be answered");
    } finally {
      await writer.xack(requestStream, consumerGroup, entryId).catch((error: unknown) => {
        logger.warn({ err: error, entryId }, "Redis request could not be acknowledged");
      });
    }
  };

  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      if (requests.size >= MAX_IN_FLIGHT) {
        await requests.oneSettled();
        continue;
      }
      let result: Array<[string, Entry[]]> | null;
      try {
        result = (await reader.xreadgroup(
          "GROUP",
          consumerGroup,
          consumer,
          "COUNT",
          MAX_IN_FLIGHT - requests.size,
          "BLOCK",
          BLOCK_MS,
          "STREAMS",
          requestStream,
          ">",
        )) as Array<[string, Entry[]]> | null;
      } catch (error) {
        if (stopping) break;
        const message = String((error as Error).message);
        logger.warn({ err: error }, "Redis request read failed");
        // The stream or group was deleted under us: make them again.
        if (message.startsWith("NOGROUP")) await createGroup().catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        continue;
      }
      for (const [, entries] of result ?? []) for (const entry of entries) requests.track(answer(entry));
    }
  })();

  const url = `redis-streams://${redisUrlForDisplay(options.redisUrl)}/${requestStream}/${options.responseStream}/${consumerGroup}`;
  logger.info({ consumer, consumerGroup, requestStream }, "Redis Streams consumer joined");
  return {
    interfaces: [{ url, protocolBinding: "redis-streams" }],
    url,
    tls: options.redisUrl.startsWith("rediss:"),
    async close(graceMs) {
      stopping = true;
      await loop;
      reader.disconnect();
      await requests.drain(graceMs);
      // Every entry it read is acked by now: leaving drops no pending request.
      await writer.xgroup("DELCONSUMER", requestStream, consumerGroup, consumer).catch((error: unknown) => {
        logger.warn({ err: error }, "Redis consumer could not leave its group");
      });
      await writer.quit().catch(() => writer.disconnect());
      logger.info({ consumer, consumerGroup }, "Redis Streams consumer left");
    },
  };
}
