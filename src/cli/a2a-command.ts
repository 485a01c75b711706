// `iac-code a2a`: the options of the A2A 1.0 server command, from the settings
// table (src/a2a/config/settings-table.ts). The server itself (src/cli/a2a-run.ts)
// is loaded only when the command runs.
import type { Command } from "commander";
import { A2A_SETTINGS } from "../a2a/config/settings-table.js";
import { addSettingOptions } from "../server/settings.js";

export function registerA2aCommand(program: Command): void {
  addSettingOptions(
    program
      .command("a2a")
      .description(
        "Run the A2A 1.0 server: JSON-RPC 2.0 (with SSE), HTTP+JSON (REST) and gRPC on one port, with the agent card, or JSON-RPC over a custom transport (stdio, unix, websocket, grpc-jsonrpc, redis-streams)",
      ),
    A2A_SETTINGS,
    "a2a",
  ).action(async (options: object) => {
    // Loaded on use: `iac-code --help` and `contract` never load the server.
    const { runA2aCli } = await import("./a2a-run.js");
    await runA2aCli(options);
  });
}
