// The four timeout flags both server commands take (names, help and defaults
// from src/server/timeouts.ts).
import type { Command } from "commander";
import { TIMEOUT_SETTINGS } from "../server/timeouts.js";

export function withTimeoutOptions(cmd: Command): Command {
  for (const setting of TIMEOUT_SETTINGS) cmd.option(`--${setting.key} <n>`, setting.help);
  return cmd;
}
