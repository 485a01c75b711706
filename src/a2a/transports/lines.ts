// Newline-delimited JSON-RPC over a byte stream (stdio, one unix socket
// connection): one compact JSON object per line each way. A unary call gets
// one response line; a stream gets its event lines, then
// {"jsonrpc":"2.0","id":…,"final":true} (an error that ends a stream carries
// "final":true itself). Requests are answered concurrently and matched by id.
import type { Readable } from "node:stream";
import type { Logger } from "pino";
import type { JsonRpcCore } from "../bindings/jsonrpc-core.js";
import { A2AError } from "../core/request/errors.js";
import { errorBody } from "../bindings/jsonrpc-core.js";
import { replyLine } from "./frames.js";
import { InFlight, MAX_FRAME_BYTES, replies, transportCaller } from "./replies.js";

/** Where response lines go: a socket, or stdout's own write (stdio). */
export interface LineSink {
  write(line: string): boolean;
  once(event: "drain" | "close", listener: () => void): unknown;
}

export interface LineChannel {
  readonly requests: InFlight;
  /** Resolves when the input has ended and every request read from it is answered. */
  readonly finished: Promise<void>;
}

const NEWLINE = 0x0a;

export function serveLines(
  input: Readable,
  output: LineSink,
  options: { core: JsonRpcCore; logger: Logger; binding: "stdio" | "unix" },
): LineChannel {
  const requests = new InFlight();
  const caller = transportCaller(options.binding, { owner: "", authenticated: false }, requests.signal);
  let open = true;
  output.once("close", () => {
    open = false;
    void requests.abort();
  });
  const send = async (line: string): Promise<void> => {
    if (open && !output.write(line)) {
      await new Promise<void>((resolve) => {
        output.once("drain", resolve);
        output.once("close", resolve);
      });
    }
  };
  const answer = async (frame: Buffer): Promise<void> => {
    for await (const reply of replies(options.core, frame, caller)) {
      if (!open) break;
      await send(replyLine(reply));
    }
  };

  let pending: Buffer[] = [];
  let pendingBytes = 0;
  /** A line over the limit: answered once, then skipped up to its newline. */
  let skipping = false;
  const tooLarge = (): void =>
    void send(
      `${errorBody(null, new A2AError("InvalidRequestError", `Payload larger than ${MAX_FRAME_BYTES} bytes`))}\n`,
    );
  const take = (line: Buffer): void => {
    if (line.length > MAX_FRAME_BYTES) return tooLarge();
    const text = line.at(-1) === 0x0d ? line.subarray(0, -1) : line;
    if (text.toString("latin1").trim() === "") return;
    requests.track(answer(text));
  };
  input.on("data", (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      if (!skipping)
        take(
          pending.length ? Buffer.concat([...pending, chunk.subarray(start, nl)]) : chunk.subarray(start, nl),
        );
      pending = [];
      pendingBytes = 0;
      skipping = false;
      start = nl + 1;
    }
    if (start < chunk.length && !skipping) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
      if (pendingBytes > MAX_FRAME_BYTES) {
        skipping = true;
        pending = [];
        pendingBytes = 0;
        tooLarge();
      }
    }
  });
  const finished = new Promise<void>((resolve) => {
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      // A last line without its newline is still a request.
      if (pending.length && !skipping) take(Buffer.concat(pending));
      pending = [];
      void requests.idle().then(resolve);
    };
    input.once("end", end);
    input.once("close", end);
  });
  input.on("error", (error) => options.logger.debug({ err: error }, "JSON-RPC line input failed"));
  return { requests, finished };
}
