// `iac-code a2a`: the A2A 1.0 server (JSON-RPC over HTTP with SSE). Options on
// the command line beat the --config file, which beats IACCODE_A2A_* and the
// defaults. SIGINT/SIGTERM stop it gracefully: no new connections, running
// turns cancelled, stores flushed.
import type { Command } from "commander";
import { startA2aServer, type RunningA2aServer } from "../a2a/server.js";
import { createAgentRuntime } from "../runtime/index.js";
import {
  ConfigError,
  loadConfigFile,
  resolveSettings,
  type A2aServerSettings,
  type CliOverrides,
} from "../server/config.js";
import { createLogger } from "../server/logger.js";

interface A2aCliOptions {
  config?: string;
  host?: string;
  port?: string;
  transport?: string;
  thinkingExposure?: string[];
  debug?: boolean;
  logToStdout?: boolean;
}

export function settingsFromCli(
  options: A2aCliOptions,
  env: NodeJS.ProcessEnv = process.env,
): A2aServerSettings {
  const file = options.config ? loadConfigFile(options.config) : {};
  const cli: CliOverrides = {
    host: options.host,
    transport: options.transport,
    thinkingExposure: options.thinkingExposure,
    debug: options.debug,
    logToStdout: options.logToStdout,
  };
  if (options.port !== undefined) {
    const port = Number(options.port);
    if (!/^\d+$/.test(options.port) || port > 65535) {
      throw new ConfigError(`Invalid --port '${options.port}': expected an integer from 0 to 65535.`);
    }
    cli.port = port;
  }
  return resolveSettings(file, cli, env);
}

export async function runA2aServer(settings: A2aServerSettings): Promise<RunningA2aServer> {
  const logger = createLogger({ debug: settings.debug, logToStdout: settings.logToStdout });
  const runtime = await createAgentRuntime({
    provider: settings.provider,
    model: settings.model,
    baseUrl: settings.baseUrl,
    scriptFile: settings.script,
    mode: settings.mode,
    pipelineName: settings.pipelineName,
    autoApprovePermissions: settings.autoApprovePermissions,
    logger,
  });
  const server = await startA2aServer(settings, { runtime, logger });
  const info = runtime.info();
  const bindings = server.restUrl
    ? `JSON-RPC ${server.url}, HTTP+JSON ${server.restUrl}, gRPC ${server.grpcTarget}`
    : `gRPC ${server.grpcTarget}`;
  process.stderr.write(
    `iac-code A2A server listening on ${server.url} (${bindings}; model ${info.provider}/${info.model}${info.demo ? ", demo" : ""})\n`,
  );
  if (info.hint) process.stderr.write(`${info.hint}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    void server
      .close()
      .then(() => runtime.close())
      .then(
        () => {
          logger.flush();
          process.exit(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, "shutdown failed");
          logger.flush();
          process.exit(1);
        },
      );
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
  return server;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function registerA2aCommand(program: Command): void {
  program
    .command("a2a")
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
    .option("-d, --debug", "debug logging")
    .option("--log-to-stdout", "write logs to stdout instead of stderr")
    .option("--no-log-to-stdout", "write logs to stderr (default)")
    .action(async (options: A2aCliOptions) => {
      let settings: A2aServerSettings;
      try {
        settings = settingsFromCli(options);
      } catch (error) {
        process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
        process.exit(1);
      }
      try {
        await runA2aServer(settings);
      } catch (error) {
        const message =
          error instanceof ConfigError
            ? error.message
            : (error as NodeJS.ErrnoException).code === "EADDRINUSE"
              ? `Port ${settings.port} on ${settings.host} is already in use.`
              : `Cannot start the A2A server: ${(error as Error).message}`;
        process.stderr.write(`${message}\n`);
        process.exit(1);
      }
    });
}
