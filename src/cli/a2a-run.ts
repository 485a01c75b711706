// Running `iac-code a2a`: the A2A 1.0 server (JSON-RPC, HTTP+JSON and gRPC).
// Options on the command line beat the --config file, which beats the
// environment and the defaults. SIGINT/SIGTERM (or, for a managed child, its parent's exit) stop it
// gracefully: no new connections, running turns cancelled, stores flushed;
// within the shutdown timeout, else it exits anyway after flushing the stores.
import { openRedisStore, openStateStore, startA2aServer, type RunningA2aServer } from "../a2a/server.js";
import { stopTracing } from "../server/tracing/index.js";
import type { StateStore } from "../a2a/stores/state.js";
import { createAgentRuntime } from "../runtime/index.js";
import type { AgentRuntime } from "../runtime/seam.js";
import { A2A_SETTINGS } from "../a2a/config/settings-table.js";
import {
  ConfigError,
  loadConfigFile,
  resolveSettings,
  type A2aServerSettings,
} from "../a2a/config/server-settings.js";
import { exposureWarning, isLoopbackHost } from "../server/exposure.js";
import { createLogger, guardStdio } from "../server/logger.js";
import { unknownEnvWarnings } from "./env-check.js";
import { EXIT_USAGE } from "./exit-codes.js";
import { handleStopSignals } from "../server/shutdown.js";
import { cliValues } from "../server/settings.js";

/** The settings of a command line: its values, the --config file (or IACCODE_A2A_CONFIG), the environment. */
export function settingsFromCli(options: object, env: NodeJS.ProcessEnv = process.env): A2aServerSettings {
  const cli = cliValues(A2A_SETTINGS, options);
  const configFile = (cli.config as string | undefined) ?? (env.IACCODE_A2A_CONFIG || undefined);
  const file = configFile ? loadConfigFile(configFile) : {};
  return resolveSettings(file, cli, env);
}

export async function runA2aServer(settings: A2aServerSettings): Promise<RunningA2aServer> {
  guardStdio();
  const logger = createLogger({
    debug: settings.debug,
    logToStdout: settings.logToStdout,
    format: settings.logFormat,
  });
  // A managed child's environment is its adapter's, which has warned already.
  if (process.env.IAC_CODE_MANAGED_A2A !== "1")
    for (const w of unknownEnvWarnings(process.env)) logger.warn(w);
  // The runtime writes its sessions and pipelines through the server's state store: one
  // database (or one Redis, shared by the replicas and fenced by the same context leases),
  // one commit with the task state.
  const redis = settings.store === "redis" ? await openRedisStore(settings, logger) : undefined;
  let state: StateStore;
  try {
    state = await openStateStore(settings, redis, logger);
  } catch (error) {
    await redis?.close();
    throw error;
  }
  const closeState = async () => {
    await state.close();
    await redis?.close();
  };
  let runtime: AgentRuntime;
  try {
    runtime = await createAgentRuntime({
      provider: settings.provider,
      model: settings.model,
      baseUrl: settings.baseUrl,
      scriptFile: settings.script,
      mcpConfig: settings.mcpConfig,
      mode: settings.mode,
      pipelineName: settings.pipelineName,
      autoApprovePermissions: settings.autoApprovePermissions,
      safeMode: settings.safeMode,
      logger,
      store: state.runtime,
    });
  } catch (error) {
    await closeState();
    throw error;
  }
  let server: RunningA2aServer;
  try {
    server = await startA2aServer(settings, { runtime, logger, processMetrics: true, redis, state });
  } catch (error) {
    await runtime.close();
    await closeState();
    throw error;
  }
  const info = runtime.info();
  const bindings = server.restUrl
    ? `JSON-RPC ${server.url}, HTTP+JSON ${server.restUrl}, gRPC ${server.grpcTarget}`
    : settings.transport === "grpc"
      ? `gRPC ${server.grpcTarget}`
      : `JSON-RPC over ${settings.transport}`;
  const authenticated = Boolean(
    settings.token || settings.apiKey || (settings.basicUsername && settings.basicPassword) || settings.jwt,
  );
  const exposed = [settings.host, settings.grpcHost ?? settings.host].find((h) => !isLoopbackHost(h));
  const warning = exposureWarning(
    exposed ?? settings.host,
    authenticated,
    "--token (IACCODE_A2A_HTTP_TOKEN), --api-key, Basic auth or --auth-jwks-url",
  );
  if (warning) logger.warn(warning);
  const stop = handleStopSignals({
    logger,
    // The runtime's sessions commit into the state store: it closes after them.
    graceful: () =>
      server
        .close()
        .then(() => runtime.close())
        .then(closeState)
        // The spans of the shutdown itself (the last commits) go out too.
        .then(stopTracing),
    keep: () => server.flushStores(),
    timeoutMs: settings.timeouts.shutdownMs,
    watchParent: true,
  });
  // The banner comes once the stop signals are handled: whoever reads it may send SIGTERM at once.
  // One banner, on stdout (stderr carries only log lines), but on stderr with stdio (stdout carries
  // the frames); a managed child leaves it to its adapter.
  if (process.env.IAC_CODE_MANAGED_A2A !== "1") {
    const banner = settings.transport === "stdio" ? process.stderr : process.stdout;
    banner.write(
      `iac-code A2A server listening on ${server.url} (${bindings}; model ${info.provider}/${info.model}${info.demo ? ", demo" : ""})\n`,
    );
    if (info.hint) banner.write(`${info.hint}\n`);
  }
  // stdio: the parent closed our stdin and has its answers.
  void server.inputEnded?.then(() => stop("stdin closed"));
  return server;
}

/** The `iac-code a2a` action: settings (exit 2 when one is bad), then the server (exit 1 when it cannot start). */
export async function runA2aCli(options: object): Promise<void> {
  let settings: A2aServerSettings;
  try {
    settings = settingsFromCli(options);
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(EXIT_USAGE);
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
