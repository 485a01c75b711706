// The other replicas, over Redis: context leases (stores/redis-leases.ts),
// the events of a running turn on a per-task stream for the replicas that
// follow it, and commands (cancel, input answers, follow) sent to the replica
// that runs a turn, over pub/sub with a reply. A turn's events are written to
// its stream only once another replica asked to follow the task (most turns
// have no follower: encoding and writing their events would be wasted); its
// end is always written.
//
// Streams: P ev2:<task>, an entry per batch of events: {b: protobuf
// RelayedEvents (proto/iac_code/a2a/state/v1)} and, on the last one, {end: 1},
// written by the state store's commits after the writes the events report
// (redis-state.ts: trimming, expiry, batching). (P ev:<task> held an entry
// per event: a follower of that format never reads an ev2 stream, rather than
// misreading it.)
// Channels: P cmd:<replica> (commands to it), P reply:<replica>.
import { randomUUID } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { pb } from "../../contract/index.js";
import { encodeBinary } from "../../contract/fast-binary.js";
import { RelayedEventsSchema } from "../../../generated/proto/iac_code/a2a/state/v1/relayed_events_pb.js";
import type { Cluster, LeaseResult, ReplicaCommand } from "../core/turn/cluster.js";
import { A2AError } from "../core/request/errors.js";
import type { ParsedAnswer } from "../core/incoming-message/input-answer.js";
import type { RedisLeases } from "../stores/redis-leases.js";
import { A2A_PREFIX } from "../stores/redis-state.js";
import type { RedisStateStore } from "../stores/redis-state.js";
import type { A2aErrorName } from "../../contract/index.js";

/** One event as a batch of one (RelayedEvents): batches concatenated are one batch of their events. */
function relayed(event: pb.StreamResponse): Buffer {
  return encodeBinary(RelayedEventsSchema, {
    $typeName: "iac_code.a2a.state.v1.RelayedEvents",
    events: [event],
  });
}

const NO_EVENTS = Buffer.alloc(0);
/** How long a follower blocks on the stream before it checks the turn still has a replica. */
const FOLLOW_BLOCK_MS = 1000;
/** A cancel waits for the turn to unwind (up to 30 s on the owner); an answer or a follow is taken at once. */
const FORWARD_TIMEOUT_MS = { cancel: 40_000, answer: 15_000, follow: 15_000 };
/** A follow asked for a task with no turn running yet stays asked for this long (an answer starts one soon). */
const FOLLOW_WAIT_MS = 60_000;

const eventsKey = (taskId: string): string => `${A2A_PREFIX}ev2:${taskId}`;
const commandChannel = (replica: string): string => `${A2A_PREFIX}cmd:${replica}`;
const replyChannel = (replica: string): string => `${A2A_PREFIX}reply:${replica}`;

/** What one replica asks of another: the core's commands, and "relay this task's events". */
type WireType = ReplicaCommand["type"] | "follow";

interface WireCommand {
  id: string;
  from: string;
  type: WireType;
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
  state: RedisStateStore;
  logger: Logger;
}

export class RedisCluster implements Cluster {
  private readonly redis: Redis;
  private readonly leases: RedisLeases;
  private readonly pending = new Map<string, { resolve: () => void; reject: (error: unknown) => void }>();
  private handler?: (command: ReplicaCommand) => Promise<void>;
  private readonly followers = new Set<Redis>();
  /** Tasks another replica follows, with when it asked; their turns' events are relayed. */
  private readonly followed = new Map<string, number>();
  /** Tasks whose turn runs here (relay() is reading its events). */
  private readonly relaying = new Set<string>();
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
    // A lease on its way back (its release waits for the next commit) is kept instead.
    const value = this.options.state.keepLease(contextId);
    if (value === undefined) return this.leases.acquire(contextId);
    this.leases.keep(contextId, value);
    return Promise.resolve("held");
  }

  /** The lease goes back in the commit of the context's last staged writes (one call, not two). */
  async release(contextId: string): Promise<void> {
    const value = this.leases.handOver(contextId);
    if (value !== undefined) await this.options.state.releaseLease(contextId, value);
  }

  async takeOver(contextId: string): Promise<boolean> {
    const holder = await this.leases.holder(contextId);
    if (holder === undefined || holder === this.leases.replicaId) return false;
    // Every replica listens on its command channel while it runs: none listening, it is gone.
    const [, listeners] = (await this.redis.pubsub("NUMSUB", commandChannel(holder))) as [string, number];
    if (Number(listeners) > 0) return false;
    const taken = await this.leases.takeOver(contextId, holder);
    if (taken)
      this.options.logger.warn(
        { contextId, replica: holder },
        "context taken over from a replica that is gone",
      );
    return taken;
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
    this.relaying.add(taskId);
    // Each event rides on the commit of the writes staged before it (followers never see a
    // state a crash could still lose), in that commit's stream entry for the task.
    void (async () => {
      try {
        for await (const event of events)
          if (this.followed.has(taskId)) this.options.state.appendEvents(key, relayed(event), false);
      } finally {
        this.relaying.delete(taskId);
        this.followed.delete(taskId);
        this.options.state.appendEvents(key, NO_EVENTS, true);
        await this.options.state.commit();
      }
    })().catch((error: unknown) =>
      this.options.logger.warn({ err: error, taskId }, "turn events not published to the other replicas yet"),
    );
  }

  async publishEnd(taskId: string, events: pb.StreamResponse[]): Promise<void> {
    const key = eventsKey(taskId);
    for (const event of events) this.options.state.appendEvents(key, relayed(event), false);
    this.options.state.appendEvents(key, NO_EVENTS, true);
    await this.options.state.commit();
  }

  async follow(
    taskId: string,
    contextId: string,
    signal: AbortSignal,
  ): Promise<AsyncIterableIterator<pb.StreamResponse>> {
    const key = eventsKey(taskId);
    const last = await this.redis.xrevrange(key, "+", "-", "COUNT", 1);
    // After taking the cursor: the events relayed from the holder's answer on come after it.
    await this.send(contextId, { type: "follow", taskId }).catch((error: unknown) => {
      // The holder is gone or changed: its turn's end (written by it or by the sweep) still comes.
      this.options.logger.debug({ err: error, taskId }, "follow not acknowledged by the turn's replica");
    });
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

  forward(contextId: string, command: ReplicaCommand): Promise<void> {
    return this.send(contextId, command);
  }

  private async send(
    contextId: string,
    command: ReplicaCommand | { type: "follow"; taskId: string },
  ): Promise<void> {
    const holder = await this.leases.holder(contextId);
    const unavailable = () =>
      new A2AError(
        "InternalError",
        "The replica running this task is not reachable; retry in a few seconds: a replica that stopped is " +
          "taken over at the latest when its context lease runs out (context-lease-seconds, 15 by default).",
      );
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
      if (wire.type === "follow") this.follows(wire.taskId);
      else if (!this.handler) throw new A2AError("InternalError", "This replica takes no commands yet.");
      else if (wire.type === "cancel") await this.handler({ type: "cancel", taskId: wire.taskId });
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

  /** Another replica follows a task: its turn's events are relayed from now until the turn's end. */
  private follows(taskId: string): void {
    const now = Date.now();
    for (const [id, since] of this.followed)
      if (now - since > FOLLOW_WAIT_MS && !this.relaying.has(id)) this.followed.delete(id);
    this.followed.set(taskId, now);
  }

  private settle(reply: WireReply): void {
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    if (reply.error) waiter.reject(new A2AError(reply.error.name, reply.error.message, reply.error.metadata));
    else waiter.resolve();
  }
}
