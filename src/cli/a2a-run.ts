// Running `iac-code a2a`: the A2A 1.0 server (JSON-RPC over HTTP with SSE). Options on
// the command line beat the --config file, which beats IACCODE_A2A_* and the
// defaults. SIGINT/SIGTERM (or, for a managed child, its parent's exit) stop it
// gracefully: no new connections, running turns cancelled, stores flushed;
// within the shutdown timeout, else it exits anyway after flushing the stores.
import { openRedisBackend } from "../a2a/replicas/redis-backend.js";
import { startA2aServer, type RunningA2aServer } from "../a2a/server.js";
import { createAgentRuntime } from "../runtime/index.js";
import {
  ConfigError,
  loadConfigFile,
  resolveSettings,
  type A2aServerSettings,
  type CliOverrides,
} from "../server/config.js";
import { createLogger, guardStdio } from "../server/logger.js";
import { handleStopSignals } from "../server/shutdown.js";
import { timeoutFlagValues } from "../server/timeouts.js";
import type { A2aCliOptions } from "./a2a-command.js";

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
    timeouts: timeoutFlagValues(options),
    syncEveryCommit: options.syncEveryCommit,
    store: options.store,
    redisUrl: options.redisUrl,
    contextLeaseSeconds: options.contextLeaseSeconds,
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
  guardStdio();
  const logger = createLogger({ debug: settings.debug, logToStdout: settings.logToStdout });
  // store: redis: the runtime's sessions are shared too, fenced by the same context leases.
  const redis =
    settings.store === "redis"
      ? await openRedisBackend(settings.redisUrl ?? "", settings.contextLeaseMs, logger)
      : undefined;
  const runtime = await createAgentRuntime({
    provider: settings.provider,
    model: settings.model,
    baseUrl: settings.baseUrl,
    scriptFile: settings.script,
    mode: settings.mode,
    pipelineName: settings.pipelineName,
    autoApprovePermissions: settings.autoApprovePermissions,
    logger,
    ...(redis ? { sessions: redis.sessions } : {}),
  });
  const server = await startA2aServer(settings, { runtime, logger, redis });
  const info = runtime.info();
  const bindings = server.restUrl
    ? `JSON-RPC ${server.url}, HTTP+JSON ${server.restUrl}, gRPC ${server.grpcTarget}`
    : `gRPC ${server.grpcTarget}`;
  process.stderr.write(
    `iac-code A2A server listening on ${server.url} (${bindings}; model ${info.provider}/${info.model}${info.demo ? ", demo" : ""})\n`,
  );
  if (info.hint) process.stderr.write(`${info.hint}\n`);
  handleStopSignals({
    logger,
    graceful: () => server.close().then(() => runtime.close()),
    keep: () => server.flushStores(),
    timeoutMs: settings.timeouts.shutdownMs,
    watchParent: true,
  });
  return server;
}

/** The `iac-code a2a` action: settings, then the server; a clear message and exit 1 on failure. */
export async function runA2aCli(options: A2aCliOptions): Promise<void> {
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
}
