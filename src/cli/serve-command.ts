// `iac-code serve` (npm start): the AG-UI adapter plus a managed A2A server,
// with no configuration needed (the runtime then runs its demo script).
import type { Command } from "commander";
import { withAguiOptions } from "./agui-command.js";
import type { AguiCliOptions } from "../agui/config.js";

export function registerServeCommand(program: Command): void {
  withAguiOptions(
    program
      .command("serve")
      .description("Run the AG-UI adapter and a managed A2A server (the default `npm start`)")
      .option("--a2a-config <path>", "YAML config file for the managed A2A server (a2a-server.yml)"),
  ).action(async (options: AguiCliOptions & { a2aConfig?: string }) => {
    const { parseSettingsOrExit, runAdapter } = await import("./agui-run.js");
    const settings = parseSettingsOrExit({ ...options, a2aUrl: undefined });
    // serve always manages its own A2A server.
    settings.a2aUrl = "";
    await runAdapter(settings, options.a2aConfig ? ["--config", options.a2aConfig] : []);
  });
}
