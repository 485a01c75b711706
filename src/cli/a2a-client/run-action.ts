// Running one subcommand of `iac-code a2a-client`: its --config file, the
// settings, the output with the run's secrets masked, and any error turned into
// an exit code (printed as JSON once the action knows it prints JSON). Loaded
// with the subcommand, not with the command tree (program.ts).
import type { Command } from "commander";
import { loadClientConfig } from "./config-file.js";
import { A2aCallError, ClientError, EXIT, type ExitCode } from "../../a2a/client/errors.js";
import { redacting, sortedJson } from "./output.js";
import type { ClientIo, LoadAction } from "./action.js";
import { Settings } from "./settings.js";

/** Folds the hidden alias options into their main names. */
function withAliases(opts: Record<string, unknown>): Record<string, unknown> {
  return {
    ...opts,
    verifyCardSecret: opts.verifyCardSecret ?? opts.signingSecret,
    requireCardSignature: opts.requireCardSignature ?? opts.requireSignature,
    routeStateDir: opts.routeStateDir ?? opts.persistenceDir,
  };
}

function reportError(io: ClientIo, error: unknown, json: boolean): ExitCode {
  if (!(error instanceof ClientError)) {
    io.stderr.write(
      `Unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return EXIT.error;
  }
  if (json) {
    const detail =
      error instanceof A2aCallError ? { ...error.detail, serverMessage: error.serverMessage } : {};
    io.stderr.write(
      `${sortedJson({ error: { message: error.message, exitCode: error.exitCode, ...detail } })}\n`,
    );
  } else {
    io.stderr.write(`${error.message}\n`);
  }
  return error.exitCode;
}

/** Runs the action of `command` (loaded by `load`) and resolves with its exit code. */
export async function runAction(io: ClientIo, command: Command, load: LoadAction): Promise<ExitCode> {
  let json = false;
  let out = io;
  try {
    const configPath = command.optsWithGlobals<{ config?: string }>().config;
    const config =
      configPath && command.name() !== "route-preview" ? loadClientConfig(configPath) : undefined;
    const opts = withAliases(command.opts());
    const settings = new Settings(opts, config?.values ?? {}, io.env);
    const secrets = settings.secrets();
    out = { ...io, stdout: redacting(io.stdout, secrets), stderr: redacting(io.stderr, secrets) };
    const action = await load();
    return await action({
      io: out,
      settings,
      configRoutes: config?.routes ?? [],
      opts,
      jsonErrors: (on) => (json = on),
    });
  } catch (error) {
    return reportError(out, error, json);
  }
}
