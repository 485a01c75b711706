// `iac-code a2a`: the options of the A2A 1.0 server command. The server itself
// (src/cli/a2a-run.ts) is loaded only when the command runs.
import type { Command } from "commander";
import type { TimeoutFlags } from "../server/timeouts.js";
import { withTimeoutOptions } from "./timeout-options.js";

export interface A2aCliOptions extends TimeoutFlags {
  config?: string;
  host?: string;
  port?: string;
  transport?: string;
  thinkingExposure?: string[];
  debug?: boolean;
  logToStdout?: boolean;
  syncEveryCommit?: boolean;
  store?: string;
  redisUrl?: string;
  contextLeaseSeconds?: string;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function registerA2aCommand(program: Command): void {
  withTimeoutOptions(program.command("a2a"))
    .description("Run the A2A 1.0 server (JSON-RPC over HTTP with SSE)")
    .option("--config <path>", "YAML (or JSON) config file (a2a-server.yml; keys with - or _)")
    .option("--host <host>", "address to bind (default 127.0.0.1)")
    .option("--port <port>", "port to bind (default 41242; 0 picks a free port)")
    .option(
      "--transport <name>",
      "http (default: JSON-RPC, HTTP+JSON and gRPC on one port) or grpc (the gRPC binding only)",
    )
    .option(
      "--thinking-exposure <type>",
      "tool-trace or raw-thinking (repeatable; default tool-trace)",
      collect,
    )
    .option("--sync-every-commit", "fsync every state commit: task state also survives a power loss")
    .option(
      "--store <kind>",
      "sqlite (default: one server per persistence-dir) or redis (replicas share redis-url)",
    )
    .option("--redis-url <url>", "redis:// or rediss:// URL of the shared store (store redis)")
    .option(
      "--context-lease-seconds <n>",
      "store redis: a stopped replica's contexts are taken over after this long (default 15)",
    )
    .option("-d, --debug", "debug logging")
    .option("--log-to-stdout", "write logs to stdout instead of stderr")
    .option("--no-log-to-stdout", "write logs to stderr (default)")
    .action(async (options: A2aCliOptions) => {
      // Loaded on use: `iac-code --help` and `contract` never load the server.
      const { runA2aCli } = await import("./a2a-run.js");
      await runA2aCli(options);
    });
}
