// unix://<path>: JSON-RPC lines over one connection to the server's socket
// (`iac-code a2a --transport unix`), calls matched by id.
import type { JsonObject } from "@bufbuild/protobuf";
import net from "node:net";
import { TransportError } from "./binding.js";
import { readReplyLine } from "../../transports/frames.js";
import { FramedChannel, jsonLines } from "./framed-channel.js";

export class UnixChannel extends FramedChannel {
  private socket: net.Socket | undefined;
  private readonly path: string;

  constructor(url: string) {
    super(url);
    this.path = decodeURIComponent(url.replace(/^unix:(\/\/)?/i, ""));
    if (this.path === "")
      throw new TransportError(`${url} names no socket file: use unix:///path/to/socket.`);
  }

  protected connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(this.path);
      socket.once("connect", () => {
        this.socket = socket;
        resolve();
      });
      socket.once("error", (error: NodeJS.ErrnoException) => {
        const failure = new TransportError(`Cannot reach ${this.url}: ${error.code ?? error.message}`);
        reject(failure);
        this.lost(failure);
      });
      socket.on(
        "data",
        jsonLines((value) => {
          const frame = readReplyLine(value);
          if (frame) this.deliver(frame.key, frame.payload, frame.final);
        }),
      );
      socket.once("close", () => this.lost(new TransportError(`${this.url} closed the connection.`)));
    });
  }

  protected transmit(_key: string, body: JsonObject): Promise<void> {
    this.socket?.write(`${JSON.stringify(body)}\n`);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.socket?.destroy();
    return Promise.resolve();
  }
}
