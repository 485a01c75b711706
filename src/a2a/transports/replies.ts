// What every custom transport does with one frame it received: parse it (UTF-8,
// JSON size/depth limits), let the JSON-RPC core answer it, and turn the
// outcome into replies, each marked final when it closes its request. The
// transports differ only in how they frame a reply and which caller they vouch for.
import { setMaxListeners } from "node:events";
import type { pb } from "../../contract/index.js";
import { CONNECTION_CLOSED, type CallBinding } from "../core/request/call-context.js";
import {
  unreadableBody,
  type DispatchOptions,
  type JsonRpcCaller,
  type JsonRpcCore,
} from "../bindings/jsonrpc-core.js";
import { parseJsonText, type JsonBody } from "../../server/json-body.js";
import { endOfStream, type Reply } from "./frames.js";

/** Largest frame a transport accepts (the HTTP binding's body limit). */
export { MAX_BODY_BYTES as MAX_FRAME_BYTES } from "../bindings/jsonrpc.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

function parseFrame(frame: string | Uint8Array): JsonBody {
  if (typeof frame === "string") return parseJsonText(frame);
  try {
    return parseJsonText(utf8.decode(frame));
  } catch {
    return { ok: false, failure: "not-utf8", message: "The frame is not valid UTF-8" };
  }
}

/**
 * The caller of a transport without headers: A2A 1.0 implied, no extensions
 * named; `binding` is the transport's name (the metrics label).
 */
export function transportCaller(
  binding: Exclude<CallBinding, "jsonrpc" | "rest" | "grpc">,
  who: { owner: string; authenticated: boolean },
  signal: AbortSignal,
  headers: { extensions?: string[]; acceptLanguage?: string } = {},
): JsonRpcCaller {
  return {
    owner: who.owner,
    authenticated: who.authenticated,
    requestedExtensions: headers.extensions ?? [],
    acceptLanguage: headers.acceptLanguage,
    signal,
    binding,
    version: "1.0",
  };
}

/**
 * The replies to one frame: one for a unary call or an early error; events then
 * an end marker for a stream; none for a notification.
 */
export async function* replies(
  core: JsonRpcCore,
  frame: string | Uint8Array,
  caller: JsonRpcCaller,
  options?: DispatchOptions,
): AsyncGenerator<Reply> {
  const read = parseFrame(frame);
  if (!read.ok || read.value === undefined) {
    yield { id: null, payload: unreadableBody(read), final: true, streaming: false };
    return;
  }
  const outcome = await core.dispatch(read.value, caller, options);
  if (outcome.kind === "none") return; // a notification: no reply
  if (outcome.kind === "response") {
    yield { id: outcome.id, payload: outcome.body, final: true, streaming: outcome.streaming };
    return;
  }
  const { id, rest } = outcome;
  let finished = false;
  try {
    yield { id, payload: outcome.encode(outcome.first), final: false, streaming: true };
    for (;;) {
      if (caller.signal.aborted) return;
      let step: IteratorResult<pb.StreamResponse>;
      try {
        step = await rest.next();
      } catch (error) {
        finished = true;
        yield { id, payload: outcome.encodeError(error), final: true, streaming: true };
        return;
      }
      if (step.done) break;
      yield { id, payload: outcome.encode(step.value), final: false, streaming: true };
    }
    finished = true;
    yield { id, payload: endOfStream(id), final: true, streaming: true };
  } finally {
    // The connection went away or the transport stopped reading: end the subscription.
    if (!finished) await rest.return?.();
  }
}

/**
 * The requests a connection (or a Redis consumer) has in flight, and the
 * signal that stops their streams when it closes.
 */
export class InFlight {
  private readonly running = new Set<Promise<unknown>>();
  private readonly controller = new AbortController();

  constructor() {
    // Every request in flight on the connection listens on this one signal: no fixed bound applies.
    setMaxListeners(0, this.controller.signal);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get size(): number {
    return this.running.size;
  }

  track(work: Promise<unknown>): void {
    const settled = work.catch(() => undefined);
    this.running.add(settled);
    void settled.then(() => this.running.delete(settled));
  }

  /** Resolves when one of the requests in flight ends (at once when none is). */
  async oneSettled(): Promise<void> {
    if (this.running.size > 0) await Promise.race(this.running);
  }

  /** Resolves once nothing is in flight. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /** Stops the streams (running turns go on) and waits for the requests to unwind. */
  abort(): Promise<void> {
    this.controller.abort(CONNECTION_CLOSED);
    return this.idle();
  }

  /** Waits up to `graceMs` for the requests to end by themselves, then aborts them. */
  async drain(graceMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([this.idle(), late]);
    clearTimeout(timer);
    await this.abort();
  }
}
