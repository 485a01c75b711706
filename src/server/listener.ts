// An HTTP listener that can really close: server.close() waits for keep-alive
// sockets, so every socket is tracked and destroyed on close.
import http from "node:http";
import type net from "node:net";

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
): Promise<Listener> {
  const server = http.createServer(handler);
  // Long SSE streams must not be cut by the default request timeout.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
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
