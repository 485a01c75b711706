// The other replicas, over Redis: context leases (stores/redis-leases.ts),
// each running turn's events on a per-task stream that other replicas follow,
// and commands (cancel, input answers) sent to the replica that runs a turn,
// over pub/sub with a reply.
//
// Streams: P ev2:<task>, an entry per batch of events: {b: protobuf
// RelayedEvents (proto/iac_code/a2a/state/v1)} and, on the last one, {end: 1}; trimmed to about EVENT_STREAM_MAX entries and expiring an hour
// after the last write. (P ev:<task> held an entry per event: a follower of
// that format never reads an ev2 stream, rather than misreading it.)
// Channels: P cmd:<replica> (commands to it), P reply:<replica>.
import { randomUUID } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { pb } from "../../contract/index.js";
import { encodeBinary } from "../../contract/fast-binary.js";
import { RelayedEventsSchema } from "../../../generated/proto/iac_code/a2a/state/v1/relayed_events_pb.js";
import type { Cluster, LeaseResult, ReplicaCommand } from "../core/cluster.js";
import { A2AError } from "../core/errors.js";
import type { ParsedAnswer } from "../core/input-answer.js";
import type { RedisLeases } from "../stores/redis-leases.js";
import { A2A_PREFIX } from "../stores/redis-state.js";
import type { StateStore } from "../stores/state.js";
import type { A2aErrorName } from "../../contract/index.js";

const EVENT_STREAM_MAX = 1000;
const EVENT_STREAM_TTL_MS = 3_600_000;
/** One event as a batch of one (RelayedEvents): batches concatenated are one batch of their events. */
function relayed(event: pb.StreamResponse): Buffer {
  return encodeBinary(RelayedEventsSchema, {
    $typeName: "iac_code.a2a.state.v1.RelayedEvents",
    events: [event],
  });
}

/** How long a relayed event may wait for others to leave with it, and how many may wait. */
const RELAY_BATCH_MS = 20;
const RELAY_BATCH_MAX = 256;
/** How long a follower blocks on the stream before it checks the turn still has a replica. */
const FOLLOW_BLOCK_MS = 1000;
/** A cancel waits for the turn to unwind (up to 30 s on the owner); an answer is taken at once. */
const FORWARD_TIMEOUT_MS = { cancel: 40_000, answer: 15_000 };

const eventsKey = (taskId: string): string => `${A2A_PREFIX}ev2:${taskId}`;
const commandChannel = (replica: string): string => `${A2A_PREFIX}cmd:${replica}`;
const replyChannel = (replica: string): string => `${A2A_PREFIX}reply:${replica}`;

interface WireCommand {
  id: string;
  from: string;
  type: ReplicaCommand["type"];
  taskId: string;
  answer?: ParsedAnswer;
  /** base64 protobuf pb.Message (already without secrets: admission stripped them). */
  message?: string;
}

interface WireReply {
  id: string;
  error?: { name: A2aErrorName; message: string; metadata: Record<string, string> };
}

export interface RedisClusterOptions {
  redis: Redis;
  /** A second connection for pub/sub (a subscribed connection can do nothing else). */
  subscriber: Redis;
  leases: RedisLeases;
  state: StateStore;
  logger: Logger;
}

export class RedisCluster implements Cluster {
  private readonly redis: Redis;
  private readonly leases: RedisLeases;
  private readonly pending = new Map<string, { resolve: () => void; reject: (error: unknown) => void }>();
  private handler?: (command: ReplicaCommand) => Promise<void>;
  private readonly followers = new Set<Redis>();
  private readonly ready: Promise<unknown>;

  constructor(private readonly options: RedisClusterOptions) {
    this.redis = options.redis;
    this.leases = options.leases;
    const me = this.leases.replicaId;
    options.subscriber.on("messageBuffer", (channel: Buffer, data: Buffer) => {
      const name = channel.toString("utf8");
      if (name === commandChannel(me)) void this.serve(JSON.parse(data.toString("utf8")) as WireCommand);
      else if (name === replyChannel(me)) this.settle(JSON.parse(data.toString("utf8")) as WireReply);
    });
    this.ready = options.subscriber.subscribe(commandChannel(me), replyChannel(me));
  }

  /** Resolves once this replica listens for commands. */
  whenReady(): Promise<unknown> {
    return this.ready;
  }

  acquire(contextId: string): Promise<LeaseResult> {
    return this.leases.acquire(contextId);
  }

  release(contextId: string): Promise<void> {
    return this.leases.release(contextId);
  }

  async heldElsewhere(contextId: string): Promise<boolean> {
    const holder = await this.leases.holder(contextId);
    return holder !== undefined && holder !== this.leases.replicaId;
  }

  onLost(listener: (contextId: string) => void): void {
    this.leases.onLost(listener);
  }

  onCommand(handler: (command: ReplicaCommand) => Promise<void>): void {
    this.handler = handler;
  }

  relay(taskId: string, events: AsyncIterable<pb.StreamResponse>): void {
    const key = eventsKey(taskId);
    const failed = (error: unknown) =>
      this.options.logger.warn({ err: error, taskId }, "turn event not published to the other replicas");
    // Events leave in batches, one stream entry each (an entry per event cost Redis and this
    // process more than the event's own encoding): what a turn commits within RELAY_BATCH_MS of
    // its first unsent event, so a short turn is one entry with its end. Batches go one after the
    // other.
    const batch: Buffer[] = [];
    let sending: Promise<void> = Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const send = (end: boolean): Promise<void> => {
      clearTimeout(timer);
      timer = undefined;
      return (sending = sending
        .then(async () => {
          if (batch.length > 0 || end) await this.publish(key, batch.splice(0), end);
        })
        .catch(failed));
    };
    void (async () => {
      try {
        for await (const event of events) {
          // Followers never see a state a crash could still lose.
          await this.options.state.commit();
          batch.push(relayed(event));
          if (batch.length >= RELAY_BATCH_MAX) void send(false);
          else timer ??= setTimeout(() => void send(false), RELAY_BATCH_MS);
        }
      } finally {
        await this.options.state.commit().catch(() => undefined);
        await send(true);
      }
    })().catch(failed);
  }

  async publishEnd(taskId: string, events: pb.StreamResponse[]): Promise<void> {
    await this.publish(eventsKey(taskId), events.map(relayed), true);
  }

  /** Appends a batch of events (each relayed()) and the end to a task's stream, which expires an hour after its last write. */
  private async publish(key: string, events: Buffer[], end: boolean): Promise<void> {
    const fields: Array<string | Buffer> = ["b", Buffer.concat(events)];
    if (end) fields.push("end", "1");
    await Promise.all([
      this.redis.xadd(key, "MAXLEN", "~", EVENT_STREAM_MAX, "*", ...fields),
      this.redis.pexpire(key, EVENT_STREAM_TTL_MS),
    ]);
  }

  async follow(
    taskId: string,
    contextId: string,
    signal: AbortSignal,
  ): Promise<AsyncIterableIterator<pb.StreamResponse>> {
    const key = eventsKey(taskId);
    const last = await this.redis.xrevrange(key, "+", "-", "COUNT", 1);
    // Blocking reads need a connection of their own; aborting closes it, which ends the read.
    const reader = this.redis.duplicate();
    this.followers.add(reader);
    const close = () => {
      this.followers.delete(reader);
      reader.disconnect();
    };
    signal.addEventListener("abort", close, { once: true });
    const quietLimit = Math.ceil(this.leases.leaseMs / FOLLOW_BLOCK_MS) + 2;
    const isHeldElsewhere = (id: string) => this.heldElsewhere(id);
    async function* read(): AsyncGenerator<pb.StreamResponse> {
      let cursor = last[0]?.[0] ?? "0-0";
      let quiet = 0;
      try {
        while (!signal.aborted) {
          let reply: Array<[Buffer, Array<[Buffer, Buffer[]]>]> | null;
          try {
            reply = await reader.xreadBuffer("BLOCK", FOLLOW_BLOCK_MS, "STREAMS", key, cursor);
          } catch (error) {
            if (signal.aborted) return;
            throw error;
          }
          if (!reply) {
            // Nothing for a while: the turn still runs if a replica holds its context;
            // a replica that died gets its tasks failed (and the stream ended) by a sweep.
            quiet = (await isHeldElsewhere(contextId)) ? 0 : quiet + 1;
            if (quiet >= quietLimit) return;
            continue;
          }
          for (const [id, fields] of reply[0][1]) {
            cursor = id.toString("utf8");
            for (let i = 0; i + 1 < fields.length; i += 2) {
              const name = fields[i].toString("utf8");
              if (name === "b") yield* fromBinary(RelayedEventsSchema, fields[i + 1]).events;
              else if (name === "end") return;
            }
          }
        }
      } finally {
        signal.removeEventListener("abort", close);
        close();
      }
    }
    return read();
  }

  async forward(contextId: string, command: ReplicaCommand): Promise<void> {
    const holder = await this.leases.holder(contextId);
    const unavailable = () =>
      new A2AError("InternalError", "The replica running this task is not reachable; try again shortly.");
    if (holder === undefined || holder === this.leases.replicaId) throw unavailable();
    const wire: WireCommand = {
      id: randomUUID(),
      from: this.leases.replicaId,
      type: command.type,
      taskId: command.taskId,
    };
    if (command.type === "answer") {
      wire.answer = command.answer;
      wire.message = encodeBinary(pb.MessageSchema, command.message).toString("base64");
    }
    let timer: NodeJS.Timeout | undefined;
    const replied = new Promise<void>((resolve, reject) => {
      this.pending.set(wire.id, { resolve, reject });
      timer = setTimeout(() => reject(unavailable()), FORWARD_TIMEOUT_MS[command.type]);
    });
    try {
      const receivers = await this.redis.publish(commandChannel(holder), JSON.stringify(wire));
      if (receivers === 0) throw unavailable();
      await replied;
    } finally {
      clearTimeout(timer);
      this.pending.delete(wire.id);
    }
  }

  /** Disconnects the followers' connections (their streams end). */
  close(): void {
    for (const reader of this.followers) reader.disconnect();
    this.followers.clear();
  }

  private async serve(wire: WireCommand): Promise<void> {
    const reply: WireReply = { id: wire.id };
    try {
      if (!this.handler) throw new A2AError("InternalError", "This replica takes no commands yet.");
      if (wire.type === "cancel") await this.handler({ type: "cancel", taskId: wire.taskId });
      else {
        const message = fromBinary(pb.MessageSchema, Buffer.from(wire.message ?? "", "base64"));
        await this.handler({ type: "answer", taskId: wire.taskId, answer: wire.answer!, message });
      }
    } catch (error) {
      if (error instanceof A2AError) {
        reply.error = { name: error.errorName, message: error.message, metadata: error.metadata };
      } else {
        const errorId = randomUUID();
        this.options.logger.error({ err: error, errorId, taskId: wire.taskId }, "replica command failed");
        reply.error = {
          name: "InternalError",
          message: `An unexpected error occurred (reference ${errorId}).`,
          metadata: {},
        };
      }
    }
    await this.redis.publish(replyChannel(wire.from), JSON.stringify(reply)).catch((error: unknown) => {
      this.options.logger.warn({ err: error }, "replica command reply not sent");
    });
  }

  private settle(reply: WireReply): void {
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    if (reply.error) waiter.reject(new A2AError(reply.error.name, reply.error.message, reply.error.metadata));
    else waiter.resolve();
  }
}
