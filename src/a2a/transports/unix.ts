// The unix transport: JSON-RPC lines (lines.ts) on each connection to
// `socket-path`. The socket file is created with `socket-mode` (default 0600:
// only the server's user may connect; the umask is narrowed while it is bound,
// so it is never reachable wider in between) and removed at shutdown. A stale
// socket left by a dead server is replaced; a live one is not taken over.
import { chmodSync, existsSync, lstatSync, unlinkSync } from "node:fs";
import net, { type Socket } from "node:net";
import path from "node:path";
import type { Logger } from "pino";
import type { JsonRpcCore } from "../bindings/jsonrpc-core.js";
import { serveLines, type LineChannel } from "./lines.js";
import type { RunningTransport } from "./transport.js";

export class UnixSocketError extends Error {
  override readonly name = "UnixSocketError";
}

/** Whether a server answers on the socket (a live server's socket must not be unlinked). */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
}

async function prepare(socketPath: string): Promise<void> {
  const parent = path.dirname(socketPath);
  if (!existsSync(parent)) throw new UnixSocketError(`Unix socket parent does not exist: ${parent}`);
  let stat;
  try {
    stat = lstatSync(socketPath);
  } catch {
    return;
  }
  if (!stat.isSocket()) throw new UnixSocketError(`Path exists and is not a Unix socket: ${socketPath}`);
  if (await answers(socketPath))
    throw new UnixSocketError(`Unix socket ${socketPath} is in use by another server.`);
  unlinkSync(socketPath);
}

/** Binds with the umask narrowed to the requested mode (the bind itself is synchronous). */
function listen(server: net.Server, socketPath: string, mode: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    const previous = process.umask(0o777 & ~mode);
    try {
      server.listen(socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    } finally {
      process.umask(previous);
    }
  });
}

export async function startUnixTransport(options: {
  core: JsonRpcCore;
  logger: Logger;
  socketPath: string;
  socketMode: number;
}): Promise<RunningTransport> {
  const socketPath = path.resolve(options.socketPath);
  await prepare(socketPath);
  const connections = new Map<Socket, LineChannel>();
  const server = net.createServer((socket) => {
    socket.on("error", (error) => options.logger.debug({ err: error }, "unix socket connection failed"));
    const channel = serveLines(socket, socket, { ...options, binding: "unix" });
    connections.set(socket, channel);
    // The client half-closed: answer what it sent, then close our side.
    void channel.finished.then(() => socket.end());
    socket.once("close", () => connections.delete(socket));
  });
  await listen(server, socketPath, options.socketMode);
  // The umask can only narrow; chmod gives exactly the bits asked for (0660 for a group, say).
  chmodSync(socketPath, options.socketMode);
  const url = `unix://${socketPath}`;
  return {
    interfaces: [{ url, protocolBinding: "unix" }],
    url,
    tls: false,
    async close(graceMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...connections.values()].map((channel) => channel.requests.drain(graceMs)));
      for (const socket of connections.keys()) socket.destroy();
      await closed;
      // server.close() unlinks the socket; a file someone put back in its place is theirs.
      if (existsSync(socketPath) && lstatSync(socketPath).isSocket()) unlinkSync(socketPath);
    },
  };
}
