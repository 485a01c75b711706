// An HTTP listener with the shared timeouts that can really close:
// server.close() waits for keep-alive sockets, so every socket is tracked and
// destroyed on close.
import http from "node:http";
import type net from "node:net";
import { applyHttp1Timeouts, checkingIntervalMs, DEFAULT_TIMEOUTS, type ServerTimeouts } from "./timeouts.js";

export interface Listener {
  server: http.Server;
  /** Bound address (port resolved when 0 was asked). */
  host: string;
  port: number;
  close(): Promise<void>;
}

export async function listenHttp(
  handler: http.RequestListener,
  host: string,
  port: number,
  timeouts: ServerTimeouts = DEFAULT_TIMEOUTS,
): Promise<Listener> {
  const server = http.createServer({ connectionsCheckingInterval: checkingIntervalMs(timeouts) }, handler);
  applyHttp1Timeouts(server, timeouts);
  const sockets = new Set<net.Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as net.AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    server,
    host,
    port: address.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
