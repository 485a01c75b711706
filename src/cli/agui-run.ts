// Running the AG-UI adapter (HTTP + SSE) in front of an A2A server, either a
// configured loopback URL or a managed child on a random port (`iac-code agui`
// and `iac-code serve`).
import { pino, type Logger } from "pino";
import { stopTracing } from "../server/tracing/index.js";
import { ConfigError, resolveSettings, type AguiSettings } from "../agui/config.js";
import { startAguiServer, type AguiServer } from "../agui/server.js";
import { t, parseAcceptLanguage, DEFAULT_LANGUAGE } from "../i18n/index.js";
import { exposureWarning } from "../server/exposure.js";
import { guardStdio, logDestination } from "../server/logger.js";
import { handleStopSignals } from "../server/shutdown.js";
import { DEFAULT_TIMEOUTS } from "../server/timeouts.js";
import { unknownEnvWarnings } from "./env-check.js";
import { EXIT_USAGE } from "./exit-codes.js";

const cliLanguage = () =>
  parseAcceptLanguage(
    (process.env.LC_ALL || process.env.LC_MESSAGES || process.env.LANG || "").split(".")[0],
  ) ?? DEFAULT_LANGUAGE;

export function aguiLogger(settings: Pick<AguiSettings, "debug" | "logStdout" | "logFormat">): Logger {
  return pino(
    {
      name: "iac-code-agui",
      level: settings.debug ? "debug" : "info",
      base: { session: "agui-adapter" },
      redact: {
        paths: [
          "*.llmApiKey",
          "*.llmHeaders",
          "*.llm_headers",
          "*.accessKeySecret",
          "*.securityToken",
          "*.token",
        ],
        censor: "[REDACTED]",
      },
    },
    logDestination({ fd: settings.logStdout ? 1 : 2, format: settings.logFormat }),
  );
}

/** Prints where the adapter listens and whether the demo script answers. */
export async function announce(server: AguiServer, logger: Logger): Promise<void> {
  const lang = cliLanguage();
  process.stdout.write(`${t(lang, "aguiAdapter.cliListening", { url: server.url })}\n`);
  if (server.consoleUrl)
    process.stdout.write(`${t(lang, "aguiAdapter.cliConsole", { url: server.consoleUrl })}\n`);
  // The managed A2A server answers only this adapter (its token): say so, once.
  if (server.managed)
    process.stdout.write(`${t(lang, "aguiAdapter.cliManagedA2a", { url: server.a2aUrl })}\n`);
  try {
    const res = await fetch(`${server.url}health`, { signal: AbortSignal.timeout(2000) });
    const body = (await res.json()) as { runtime?: { demo?: boolean; hint?: string } };
    if (body.runtime?.demo) {
      process.stdout.write(`${t(lang, "aguiAdapter.cliDemo", { hint: body.runtime.hint ?? "" }).trim()}\n`);
    }
  } catch (err) {
    logger.debug({ err: (err as Error).message }, "health probe failed");
  }
}

/** Runs the adapter until SIGINT/SIGTERM or idle shutdown; exit code 1 on a start failure. */
export async function runAdapter(settings: AguiSettings): Promise<void> {
  guardStdio();
  const logger = aguiLogger(settings);
  for (const warning of unknownEnvWarnings(process.env)) logger.warn(warning);
  let server: AguiServer;
  try {
    server = await startAguiServer(settings, {
      logger,
      managed: {
        // The managed server logs in the adapter's format (both write to the same stderr).
        extraArgs: [
          ...(settings.a2aConfig ? ["--config", settings.a2aConfig] : []),
          ...(settings.a2aModelArgs ?? []),
          ...(settings.syncEveryCommit ? ["--sync-every-commit"] : []),
          ...(settings.logFormat ? ["--log-format", settings.logFormat] : []),
        ],
      },
      processMetrics: true,
      onIdleShutdown: () => process.exit(0),
    });
  } catch (err) {
    const message =
      (err as NodeJS.ErrnoException).code === "EADDRINUSE"
        ? `Port ${settings.port} on ${settings.host} is already in use.`
        : (err as Error).message;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  }
  logger.info(
    { url: server.url, a2aUrl: server.a2aUrl, stateDir: settings.stateDir },
    "AG-UI adapter listening",
  );
  const warning = exposureWarning(
    settings.host,
    settings.authToken !== undefined || settings.jwt !== undefined,
    "--auth-token (IAC_CODE_AGUI_AUTH_TOKEN) or --auth-jwks-url",
  );
  if (warning) logger.warn(warning);
  // Before the announcement (it probes /health): a signal from then on stops gracefully.
  handleStopSignals({
    logger,
    graceful: () => server.close().then(stopTracing),
    timeoutMs: (settings.timeouts ?? DEFAULT_TIMEOUTS).shutdownMs,
  });
  await announce(server, logger);
}

export function parseSettingsOrExit(options: object, command: "agui" | "serve"): AguiSettings {
  try {
    return resolveSettings(options, process.env, command);
  } catch (err) {
    process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`);
    process.exit(EXIT_USAGE);
  }
}
