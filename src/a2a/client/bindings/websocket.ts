// ws:// and wss://: JSON-RPC over one WebSocket (`iac-code a2a --transport
// websocket`, route ws-path). The auth headers go with the upgrade; each server
// frame is {id, payload, final}, calls matched by id.
import type { JsonObject } from "@bufbuild/protobuf";
import type { IncomingMessage } from "node:http";
import WebSocket from "ws";
import { TransportError } from "./binding.js";
import { readReplyMessage } from "../../transports/frames.js";
import { FramedChannel } from "./framed-channel.js";
import { httpError } from "./http.js";

export class WebSocketChannel extends FramedChannel {
  private socket: WebSocket | undefined;

  constructor(
    url: string,
    private readonly headers: Record<string, string>,
  ) {
    super(url);
  }

  protected connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url, { headers: this.headers });
      // A refused upgrade (401, 404) is reported with the HTTP answer, not as the socket error that follows.
      let refused = false;
      const fail = (error: Error): void => {
        reject(error);
        this.lost(error);
      };
      socket.once("open", () => {
        this.socket = socket;
        resolve();
      });
      socket.once("unexpected-response", (_req, res: IncomingMessage) => {
        refused = true;
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        res.once("end", () => {
          fail(httpError(res.statusCode ?? 0, text));
          socket.terminate();
        });
      });
      socket.on("error", (error: NodeJS.ErrnoException) => {
        if (!refused) fail(new TransportError(`Cannot reach ${this.url}: ${error.code ?? error.message}`));
      });
      socket.on("message", (data: Buffer) => {
        let frame: unknown;
        try {
          frame = JSON.parse(data.toString("utf8")) as unknown;
        } catch {
          return;
        }
        const reply = readReplyMessage(frame);
        if (reply) this.deliver(reply.key, reply.payload, reply.final);
      });
      socket.once("close", () => this.lost(new TransportError(`${this.url} closed the connection.`)));
    });
  }

  protected transmit(_key: string, body: JsonObject): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket?.send(JSON.stringify(body), (error) =>
        error ? reject(new TransportError(`Cannot send to ${this.url}: ${error.message}`)) : resolve(),
      );
    });
  }

  close(): Promise<void> {
    this.socket?.close(1000);
    return Promise.resolve();
  }
}
