// The README's settings tables, from the commands' options and the settings
// tables: `npx tsx scripts/settings-tables.ts` prints them in Markdown (paste
// them into the README's "Settings" section and run prettier);
// test/server/settings-table.test.ts checks the README against them.
import { pathToFileURL } from "node:url";
import type { Command, Option } from "commander";
import { AGUI_SETTINGS } from "../src/agui/settings.js";
import { buildProgram } from "../src/cli/program.js";
import { A2A_SETTINGS } from "../src/a2a/config/settings-table.js";
import { envOf, flagOf, settingsOf, type SettingsTable } from "../src/server/settings.js";

export const TABLE_HEADER = ["flag", "config key", "environment", "what"];

/** The rows of one README table: the command's visible options in --help order. */
function rows(commands: Command[], table: SettingsTable): string[][] {
  const first = commands[0];
  return first.options
    .filter((option: Option) => !option.hidden)
    .map((option: Option) => {
      const setting = table.settings.find((s) => `--${flagOf(s)}` === option.long);
      if (!setting) throw new Error(`--${option.long} of ${first.name()} is not in its settings table`);
      const only = commands.filter((cmd) => settingsOf(table, cmd.name()).includes(setting));
      const what =
        only.length < commands.length
          ? `${option.description} (${only.map((c) => `\`${c.name()}\``).join(", ")} only)`
          : option.description;
      return [
        `\`${option.flags}\``,
        setting.noFileKey ? "" : `\`${setting.key}\``,
        `\`${envOf(table, setting)}\``,
        what,
      ];
    });
}

/** The tables by heading: `a2a`, and `agui` / `serve` together (they share their settings). */
export function settingsTables(): Record<string, string[][]> {
  const program = buildProgram();
  const command = (name: string) => program.commands.find((c) => c.name() === name)!;
  return {
    "iac-code a2a": rows([command("a2a")], A2A_SETTINGS),
    "iac-code agui / serve": rows([command("agui"), command("serve")], AGUI_SETTINGS),
  };
}

function markdown(table: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(TABLE_HEADER), line(TABLE_HEADER.map(() => "---")), ...table.map(line)].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const [heading, table] of Object.entries(settingsTables())) {
    process.stdout.write(`### \`${heading}\`\n\n${markdown(table)}\n\n`);
  }
}
