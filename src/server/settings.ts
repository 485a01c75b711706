// The settings of a server command, declared once: each entry gives the flag,
// the config-file key and the environment variable of one setting, its kind
// and its help text. From the table come the commander options, the merge of
// the three sources (command line beats file beats environment), the error
// that names the source of a bad value, and the README rows (a test checks
// them). The config file itself is validated by its JSON Schema, which also
// checks the merged values, so ranges and enums live in one place.
// This module stays light (commander only): the commands import it to build
// their options, and `iac-code --help` must not load the validators
// (settings-merge.ts does the merging and loading).
import { Option, type Command } from "commander";
import type { ValidateFunction } from "ajv";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export type SettingKind = "string" | "integer" | "number" | "boolean" | "list";

export interface Setting {
  /** Config-file key; also the flag (`--<key>`) unless `flag` says otherwise. */
  key: string;
  kind: SettingKind;
  /** The `--help` text (the README table repeats it word for word). */
  help: string;
  /** Flag name when it differs from the key (a repeatable flag in the singular). */
  flag?: string;
  /** One-letter flag. */
  short?: string;
  /** Placeholder of the flag's value in the help (`--port <port>`); default `value`. */
  arg?: string;
  /** Environment variable when it is not `<prefix><KEY>` (names the seeds fix). */
  env?: string;
  /** The runtime reads the environment variable itself (same precedence: after the file). */
  envReadByRuntime?: boolean;
  /** A list's separator in the environment (and in each flag value): `,` or `;` (default) or the OS path separator. */
  separator?: "comma" | "path";
  /** No config-file key (`--config` itself). */
  noFileKey?: boolean;
  /** Allowed values of a string (checked on the command line and in the environment too). */
  choices?: readonly string[];
  /** Turns a command-line or environment value into the file's form; throws a ConfigError saying why not. */
  parse?: (value: unknown) => unknown;
  /** Commands that take it, when not all of the table's. */
  commands?: readonly string[];
  /** Older documented spellings that keep working, hidden from the help. */
  aliases?: { flags?: string[]; env?: string[]; keys?: string[] };
}

export interface SettingsTable {
  /** Prefix of the derived environment variable names. */
  envPrefix: string;
  settings: readonly Setting[];
}

/** A config file's schema: its validator and its file (read for the allowed values of an enum). */
export interface ConfigContract {
  validate: ValidateFunction;
  file: string;
}

/** Values from the command line, by config key. */
export type CliValues = Record<string, string | string[] | boolean | undefined>;

export const flagOf = (setting: Setting): string => setting.flag ?? setting.key;

export function envOf(table: SettingsTable, setting: Setting): string {
  return setting.env ?? `${table.envPrefix}${setting.key.toUpperCase().replace(/-/g, "_")}`;
}

/** The settings `command` takes. */
export function settingsOf(table: SettingsTable, command: string): Setting[] {
  return table.settings.filter((s) => !s.commands || s.commands.includes(command));
}

const camel = (flag: string): string => flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function option(flags: string, help: string, kind: SettingKind, hidden = false): Option {
  const opt = new Option(flags, help);
  if (kind === "list") opt.argParser(collect);
  if (hidden) opt.hideHelp();
  return opt;
}

/** Registers the options of `command` from the table (aliases and `--no-<flag>` hidden). */
export function addSettingOptions(cmd: Command, table: SettingsTable, command: string): Command {
  for (const setting of settingsOf(table, command)) {
    const names = [flagOf(setting), ...(setting.aliases?.flags ?? [])];
    names.forEach((name, i) => {
      const long = setting.kind === "boolean" ? `--${name}` : `--${name} <${setting.arg ?? "value"}>`;
      const flags = i === 0 && setting.short ? `-${setting.short}, ${long}` : long;
      cmd.addOption(option(flags, setting.help, setting.kind, i > 0));
      if (setting.kind === "boolean") cmd.addOption(option(`--no-${name}`, `not ${name}`, "boolean", true));
    });
  }
  return cmd;
}

/** Commander's parsed options, by config key. */
export function cliValues(table: SettingsTable, options: object): CliValues {
  const given = options as Record<string, string | string[] | boolean | undefined>;
  const out: CliValues = {};
  for (const setting of table.settings) {
    for (const name of [flagOf(setting), ...(setting.aliases?.flags ?? [])]) {
      const value = given[camel(name)];
      if (value !== undefined) {
        out[setting.key] = value;
        break;
      }
    }
  }
  return out;
}
