// `iac-code agui`: the options of the AG-UI adapter command (shared with
// `serve`). The adapter itself (src/cli/agui-run.ts) is loaded only when a
// command runs.
import type { Command } from "commander";
import type { AguiCliOptions } from "../agui/config.js";
import { withTimeoutOptions } from "./timeout-options.js";

export function withAguiOptions(cmd: Command): Command {
  return withTimeoutOptions(cmd)
    .option("--config <path>", "YAML config file (agui-server.yml)")
    .option("--host <host>", "address to bind (env IAC_CODE_AGUI_HOST; default 127.0.0.1)")
    .option("--port <port>", "port to bind (env IAC_CODE_AGUI_PORT; default 8000)")
    .option("--state-dir <dir>", "thread state root (env IAC_CODE_AGUI_STATE_DIR; default <config-dir>/agui)")
    .option(
      "--thread-store <kind>",
      "file (default) or redis: replicas share thread state (env IAC_CODE_AGUI_THREAD_STORE)",
    )
    .option("--redis-url <url>", "Redis for --thread-store redis (env IAC_CODE_AGUI_REDIS_URL)")
    .option("--idle-shutdown <seconds>", "stop after this many idle seconds (0 disables)")
    .option(
      "--interrupt-ttl <seconds>",
      "seconds an interrupt stays answerable (env IAC_CODE_AGUI_INTERRUPT_TTL; default 540)",
    )
    .option("-d, --debug", "debug logging")
    .option("--log-stdout", "mirror logs to stdout");
}

export function registerAguiCommand(program: Command): void {
  withAguiOptions(
    program
      .command("agui")
      .description("Run the AG-UI adapter (HTTP + SSE) backed by a local iac-code A2A server")
      .option(
        "--a2a-url <url>",
        "loopback A2A server to use (env IAC_CODE_AGUI_A2A_URL); default: start one",
      ),
  ).action(async (options: AguiCliOptions) => {
    // Loaded on use: `iac-code --help` and `contract` never load the adapter.
    const { parseSettingsOrExit, runAdapter } = await import("./agui-run.js");
    await runAdapter(parseSettingsOrExit(options));
  });
}
