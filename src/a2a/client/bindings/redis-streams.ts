// redis://host:port/db?request-stream=…&response-stream=…&reply-stream=…
// (rediss:// for TLS; user and password in the URL for Redis ACLs): each
// request is an XADD to the request stream with a fresh correlation_id, the
// reply stream and the JSON-RPC payload (`iac-code a2a --transport
// redis-streams`). One reader follows the reply stream from where it stood
// before the first request, hands entries to their calls by correlation_id
// and deletes the ones it took.
import { randomUUID } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import { Redis } from "ioredis";
import { TransportError } from "./binding.js";
import { readRedisReply, redisFields, redisRequestFields } from "../../transports/frames.js";
import { FramedChannel } from "./framed-channel.js";

const PARAMS = ["request-stream", "response-stream", "reply-stream"] as const;
const BLOCK_MS = 1000;

/** The URL without credentials and stream parameters (for messages). */
function displayUrl(url: URL): string {
  const shown = new URL(url.toString());
  shown.username = "";
  shown.password = "";
  for (const name of PARAMS) shown.searchParams.delete(name);
  return shown.toString();
}

type Entry = [id: string, fields: string[]];

export class RedisStreamsChannel extends FramedChannel {
  private readonly redisUrl: string;
  private readonly requestStream: string;
  private readonly replyStream: string;
  private writer: Redis | undefined;
  private reader: Redis | undefined;
  private closing = false;
  private reading: Promise<void> | undefined;

  constructor(url: string) {
    const parsed = new URL(url);
    super(displayUrl(parsed));
    const param = (name: (typeof PARAMS)[number]) => parsed.searchParams.get(name) || undefined;
    this.requestStream = param("request-stream") ?? "iac-code:a2a:requests";
    this.replyStream = param("reply-stream") ?? param("response-stream") ?? "iac-code:a2a:responses";
    for (const name of PARAMS) parsed.searchParams.delete(name);
    this.redisUrl = parsed.toString();
  }

  protected override keyOf(): string {
    return randomUUID();
  }

  private async open(name: string): Promise<Redis> {
    const redis = new Redis(this.redisUrl, {
      lazyConnect: true,
      connectionName: name,
      maxRetriesPerRequest: 1,
    });
    redis.on("error", () => undefined);
    try {
      await redis.connect();
      return redis;
    } catch (error) {
      redis.disconnect();
      throw new TransportError(`Cannot reach ${this.url}: ${(error as Error).message}`);
    }
  }

  protected async connect(): Promise<void> {
    this.writer = await this.open("iac-code-a2a-client");
    this.reader = await this.open("iac-code-a2a-client-reader");
    // Replies come after this point: read from the stream's last entry on.
    const last = (await this.writer.xrevrange(this.replyStream, "+", "-", "COUNT", 1)) as Entry[];
    this.reading = this.follow(this.reader, last[0]?.[0] ?? "0-0");
  }

  private async follow(reader: Redis, from: string): Promise<void> {
    let lastId = from;
    while (!this.closing) {
      let result: Array<[string, Entry[]]> | null;
      try {
        result = await reader.xread("COUNT", 100, "BLOCK", BLOCK_MS, "STREAMS", this.replyStream, lastId);
      } catch (error) {
        if (!this.closing) this.lost(new TransportError(`Lost ${this.url}: ${(error as Error).message}`));
        return;
      }
      const taken: string[] = [];
      for (const [, entries] of result ?? []) {
        for (const [id, raw] of entries) {
          lastId = id;
          const reply = readRedisReply(redisFields(raw));
          if (reply && this.expects(reply.key)) {
            taken.push(id);
            this.deliver(reply.key, reply.payload, reply.final);
          }
        }
      }
      if (taken.length) await this.writer?.xdel(this.replyStream, ...taken).catch(() => undefined);
    }
  }

  protected async transmit(key: string, body: JsonObject): Promise<void> {
    try {
      await this.writer!.xadd(
        this.requestStream,
        "*",
        ...redisRequestFields(key, this.replyStream, JSON.stringify(body)),
      );
    } catch (error) {
      throw new TransportError(`Cannot send to ${this.url}: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.reader?.disconnect();
    await this.reading;
    await this.writer?.quit().catch(() => undefined);
  }
}
