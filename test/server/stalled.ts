// Raw-socket clients that misbehave on purpose: a request whose headers or
// body never finish, and a keep-alive connection left idle after one request.
// Each reports what the server sent and when it closed the connection.
import net from "node:net";
import tls from "node:tls";

function connect(port: number, useTls: boolean): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = useTls
      ? tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: false, ALPNProtocols: ["http/1.1"] })
      : net.connect(port, "127.0.0.1");
    socket.once(useTls ? "secureConnect" : "connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

export interface StalledResult {
  /** What the server wrote before closing. */
  reply: string;
  closedAfterMs: number;
}

/** Sends half a request (headers cut, or headers and 1 of 100 body bytes) and waits for the server to give up. */
export async function stalledRequest(
  port: number,
  options: { tls?: boolean; stallIn: "headers" | "body"; path?: string; giveUpMs?: number },
): Promise<StalledResult> {
  const socket = await connect(port, options.tls ?? false);
  const start = Date.now();
  let reply = "";
  socket.on("data", (chunk: Buffer) => (reply += chunk.toString("latin1")));
  socket.on("error", () => undefined);
  const path = options.path ?? "/";
  socket.write(
    options.stallIn === "headers"
      ? `POST ${path} HTTP/1.1\r\nHost: x\r\n`
      : `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept a stalled request open for ${options.giveUpMs ?? 10_000} ms`));
    }, options.giveUpMs ?? 10_000);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve({ reply, closedAfterMs: Date.now() - start });
    });
  });
}

/** One GET on a keep-alive connection, then silence: how long until the server closes it. */
export async function idleKeepAlive(
  port: number,
  path: string,
  options: { tls?: boolean; giveUpMs?: number } = {},
): Promise<{ firstReply: string; closedAfterIdleMs: number }> {
  const socket = await connect(port, options.tls ?? false);
  let reply = "";
  let answeredAt = 0;
  socket.on("error", () => undefined);
  socket.on("data", (chunk: Buffer) => {
    reply += chunk.toString("latin1");
    if (!answeredAt && reply.includes("\r\n\r\n")) answeredAt = Date.now();
  });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("the server kept an idle keep-alive connection open"));
    }, options.giveUpMs ?? 10_000);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve({ firstReply: reply, closedAfterIdleMs: answeredAt ? Date.now() - answeredAt : -1 });
    });
  });
}
