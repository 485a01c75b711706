// `iac-code serve` (npm start): the AG-UI adapter plus a managed A2A server,
// with no configuration needed (the runtime then runs its demo script).
import type { Command } from "commander";
import { AGUI_SETTINGS } from "../agui/settings.js";
import { addSettingOptions } from "../server/settings.js";

export function registerServeCommand(program: Command): void {
  addSettingOptions(
    program
      .command("serve")
      .description(
        "Run the AG-UI adapter (POST /, SSE, the cancel extension, /health) and the A2A server it manages (the default `npm start`)",
      ),
    AGUI_SETTINGS,
    "serve",
  ).action(async (options: object) => {
    const { parseSettingsOrExit, runAdapter } = await import("./agui-run.js");
    await runAdapter(parseSettingsOrExit(options, "serve"));
  });
}
