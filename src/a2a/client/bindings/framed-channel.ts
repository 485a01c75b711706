// JSON-RPC over a connection that carries frames of many calls at once (unix
// socket, stdio pipe, WebSocket, Redis reply stream): each frame names the
// call it belongs to (the request id, or Redis's correlation_id) and whether it
// is the call's last. A unary call takes the first frame of its key; a stream
// takes frames until a final one (or an error).
import { StringDecoder } from "node:string_decoder";
import type { JsonObject } from "@bufbuild/protobuf";
import { IdleDeadline, timeoutError, TransportError, type CallOptions } from "./binding.js";
import { isObject } from "./http.js";
import type { JsonRpcChannel } from "./jsonrpc.js";
import { isEndOfStream, type IncomingFrame } from "../../transports/frames.js";

type Frame = Omit<IncomingFrame, "key">;

/** The frames of one call as they arrive. */
class Call {
  private readonly frames: Frame[] = [];
  private failure: Error | undefined;
  private wake: (() => void) | undefined;

  push(frame: Frame): void {
    this.frames.push(frame);
    this.wake?.();
  }

  fail(error: Error): void {
    this.failure ??= error;
    this.wake?.();
  }

  async next(signal: AbortSignal): Promise<Frame> {
    for (;;) {
      const frame = this.frames.shift();
      if (frame) return frame;
      if (this.failure) throw this.failure;
      if (signal.aborted) throw signal.reason;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        signal.addEventListener("abort", this.wake, { once: true });
      });
      signal.removeEventListener("abort", this.wake!);
      this.wake = undefined;
    }
  }
}

/**
 * A JsonRpcChannel over a framed connection. Subclasses open the connection
 * (`connect`, once, on first use), send a request (`transmit`) and hand every
 * frame they read to `deliver`; `lost` fails the calls in flight.
 */
export abstract class FramedChannel implements JsonRpcChannel {
  private readonly calls = new Map<string, Call>();
  private connecting: Promise<void> | undefined;
  private broken: Error | undefined;

  constructor(readonly url: string) {}

  /** Opens the connection; throws a TransportError when it cannot. */
  protected abstract connect(): Promise<void>;
  /** Sends one request; `key` is what its frames will be delivered under. */
  protected abstract transmit(key: string, body: JsonObject): Promise<void>;
  abstract close(): Promise<void>;

  protected deliver(key: string, payload: unknown, final: boolean): void {
    this.calls.get(key)?.push({ payload, final });
  }

  /** Whether a call in flight waits for frames under `key`. */
  protected expects(key: string): boolean {
    return this.calls.has(key);
  }

  /** The connection is gone: every call in flight, and any later one, fails with `error`. */
  protected lost(error: Error): void {
    this.broken ??= error;
    for (const call of this.calls.values()) call.fail(error);
  }

  /** The key a request's frames come back under (the JSON-RPC id by default). */
  protected keyOf(body: JsonObject): string {
    // JsonRpcBinding sends a UUID string id.
    return body.id as string;
  }

  async request(body: JsonObject, options: CallOptions): Promise<unknown> {
    for await (const frame of this.exchange(body, options)) return frame.payload;
    throw new TransportError(`${this.url} closed the call without a reply.`);
  }

  async *stream(body: JsonObject, options: CallOptions): AsyncGenerator<unknown> {
    for await (const frame of this.exchange(body, options)) {
      if (frame.final && isEndOfStream(frame.payload)) return;
      yield frame.payload;
      if (frame.final || (isObject(frame.payload) && "error" in frame.payload)) return;
    }
  }

  private async *exchange(body: JsonObject, options: CallOptions): AsyncGenerator<Frame> {
    const key = this.keyOf(body);
    const call = new Call();
    this.calls.set(key, call);
    const deadline = new IdleDeadline(options.timeoutMs, options.signal);
    try {
      if (this.broken) throw this.broken;
      this.connecting ??= this.connect();
      await this.connecting;
      await this.transmit(key, body);
      for (;;) {
        let frame: Frame;
        try {
          frame = await call.next(deadline.signal);
        } catch (error) {
          if (deadline.timedOut) throw timeoutError(this.url, options.timeoutMs);
          throw error;
        }
        deadline.touch();
        yield frame;
        if (frame.final) return;
      }
    } finally {
      deadline.clear();
      this.calls.delete(key);
    }
  }
}

/** Splits a byte stream into lines and parses each as JSON (unix socket, stdio). */
export function jsonLines(onLine: (value: unknown) => void): (chunk: Buffer) => void {
  const decoder = new StringDecoder("utf8");
  let pending = "";
  return (chunk) => {
    pending += decoder.write(chunk);
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line === "") continue;
      try {
        onLine(JSON.parse(line) as unknown);
      } catch {
        // Not JSON: nothing to match it with.
      }
    }
  };
}
