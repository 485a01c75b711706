// The stdio transport: JSON-RPC lines on stdin and stdout (lines.ts), for a
// parent process that embeds the server. stdout carries frames only: from the
// start, anything else written to process.stdout (a stray console.log) goes to
// stderr. The end of stdin means the parent is done: once the requests read
// are answered, `inputEnded` resolves and the server stops.
import type { Logger } from "pino";
import type { JsonRpcCore } from "../bindings/jsonrpc-core.js";
import { serveLines, type LineSink } from "./lines.js";
import type { RunningTransport } from "./transport.js";

/** Sends process.stdout's writes to stderr; returns a sink writing to the real stdout. */
function takeStdout(): LineSink {
  const stdout = process.stdout;
  const frames = stdout.write.bind(stdout);
  // The only way to keep library output off the frame channel is to reroute the stream's writes.
  stdout.write = process.stderr.write.bind(process.stderr);
  return {
    write: (line) => frames(line),
    once: (event, listener) => stdout.once(event, listener),
  };
}

export function startStdioTransport(options: { core: JsonRpcCore; logger: Logger }): RunningTransport {
  const sink = takeStdout();
  const channel = serveLines(process.stdin, sink, { ...options, binding: "stdio" });
  return {
    interfaces: [{ url: "stdio://iac-code", protocolBinding: "stdio" }],
    url: "stdio://iac-code",
    tls: false,
    inputEnded: channel.finished,
    async close(graceMs) {
      process.stdin.pause();
      await channel.requests.drain(graceMs);
    },
  };
}
