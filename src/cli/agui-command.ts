// `iac-code agui`: the options of the AG-UI adapter command, from the settings
// table (src/agui/settings.ts, shared with `serve`). The adapter itself
// (src/cli/agui-run.ts) is loaded only when a command runs.
import type { Command } from "commander";
import { AGUI_SETTINGS } from "../agui/settings.js";
import { addSettingOptions } from "../server/settings.js";

export function registerAguiCommand(program: Command): void {
  addSettingOptions(
    program
      .command("agui")
      .description(
        "Run the AG-UI adapter: POST / (RunAgentInput, AG-UI events over SSE), the cancel extension and /health, backed by an A2A server (a managed one unless --a2a-url)",
      ),
    AGUI_SETTINGS,
    "agui",
  ).action(async (options: object) => {
    // Loaded on use: `iac-code --help` and `contract` never load the adapter.
    const { parseSettingsOrExit, runAdapter } = await import("./agui-run.js");
    await runAdapter(parseSettingsOrExit(options, "agui"));
  });
}
