// Merging the command line, the config file and the environment by the
// settings table (src/server/settings.ts), and loading a config file with
// errors that say where.
import { readFileSync } from "node:fs";
import path from "node:path";
import { LineCounter, parseDocument, isMap, isScalar, isSeq, type Node } from "yaml";
import { violations, type ContractViolation } from "../contract/index.js";
import { PACKAGE_ROOT } from "../package-root.js";
import { closest } from "./suggest.js";
import {
  ConfigError,
  envOf,
  flagOf,
  type CliValues,
  type ConfigContract,
  type Setting,
  type SettingsTable,
} from "./settings.js";

export { ConfigError };

/** A value in an error message: strings quoted as given. */
const shown = (value: unknown): string =>
  typeof value === "string"
    ? `'${value}'`
    : Array.isArray(value)
      ? value.map(shown).join(" ")
      : JSON.stringify(value);

function splitList(values: string[], separator: Setting["separator"]): string[] {
  const sep = separator === "path" ? path.delimiter : /[,;]/;
  return values
    .flatMap((v) => v.split(sep))
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

/** A command-line or environment string as the kind's value; `source` names it in the error. */
function convert(setting: Setting, raw: string | string[] | boolean, source: string): unknown {
  const bad = (expected: string) => new ConfigError(`Invalid ${source} ${shown(raw)}: expected ${expected}.`);
  if (setting.kind === "list") return splitList(Array.isArray(raw) ? raw : [String(raw)], setting.separator);
  if (typeof raw === "boolean") return raw;
  const text = Array.isArray(raw) ? (raw.at(-1) ?? "") : raw.trim();
  switch (setting.kind) {
    case "integer":
      if (!/^[+-]?\d+$/.test(text)) throw bad("an integer");
      return Number(text);
    case "number":
      if (text === "" || !Number.isFinite(Number(text))) throw bad("a number");
      return Number(text);
    case "boolean": {
      const lowered = text.toLowerCase();
      if (["1", "true", "yes", "on"].includes(lowered)) return true;
      if (["0", "false", "no", "off"].includes(lowered)) return false;
      throw bad("true or false");
    }
    default:
      if (setting.choices && !setting.choices.includes(text))
        throw bad(`one of ${setting.choices.join(", ")}`);
      return text;
  }
}

/** convert(), then the setting's own parse with the source named in its error. */
function fromString(setting: Setting, raw: string | string[] | boolean, source: string): unknown {
  const value = convert(setting, raw, source);
  if (!setting.parse) return value;
  try {
    return setting.parse(value);
  } catch (error) {
    throw new ConfigError(`Invalid ${source} ${shown(raw)}: ${(error as Error).message}`);
  }
}

export interface SettingSources {
  cli?: CliValues;
  /** The loaded config file (keys normalised) and its path. */
  file?: object;
  fileName?: string;
  env?: NodeJS.ProcessEnv;
  /** The config file's schema, which also checks the merged values. */
  contract: ConfigContract;
}

/**
 * Merges the three sources of every setting (command line > file >
 * environment; an empty environment variable counts as unset) over the file's
 * other keys, then checks the result against the schema. A bad value is
 * reported with where it came from: `--port`, `IAC_CODE_AGUI_PORT` or the key in the file.
 */
export function mergeSettings(table: SettingsTable, sources: SettingSources): Record<string, unknown> {
  const file = (sources.file ?? {}) as Record<string, unknown>;
  const env = sources.env ?? process.env;
  const merged: Record<string, unknown> = { ...file };
  const origin: Record<string, string> = {};
  for (const setting of table.settings) {
    if (setting.noFileKey) continue;
    const cli = sources.cli?.[setting.key];
    const fileKey = [setting.key, ...(setting.aliases?.keys ?? [])].find((k) => file[k] !== undefined);
    for (const alias of setting.aliases?.keys ?? []) delete merged[alias];
    if (cli !== undefined) {
      merged[setting.key] = fromString(setting, cli, `--${flagOf(setting)}`);
      origin[setting.key] = `--${flagOf(setting)}`;
    } else if (fileKey !== undefined) {
      merged[setting.key] = file[fileKey];
      origin[setting.key] = `${fileKey} in ${sources.fileName ?? "the config file"}`;
    } else if (!setting.envReadByRuntime) {
      const name = [envOf(table, setting), ...(setting.aliases?.env ?? [])].find((n) => env[n]?.trim());
      if (name === undefined) continue;
      merged[setting.key] = fromString(setting, env[name]!, name);
      origin[setting.key] = name;
    }
  }
  if (!sources.contract.validate(merged)) {
    const details = violations(sources.contract.validate).map((e) => {
      const key = e.path.split("/")[1] ?? "";
      const where = origin[key];
      const why = reason(e, sources.contract);
      return where ? `Invalid ${where} ${shown(merged[key])}: ${why}` : `${e.path} ${why}`;
    });
    throw new ConfigError(details.join("; "));
  }
  return merged;
}

/** The violation's message; an enum's adds the allowed values (read from the schema file, on error only). */
function reason(violation: ContractViolation, contract: ConfigContract): string {
  if (violation.keyword !== "enum") return violation.message;
  const node = schemaAt(contract, violation.path.split("/").slice(1));
  return node?.enum ? `must be one of ${node.enum.join(", ")}` : violation.message;
}

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  items?: SchemaNode;
  enum?: unknown[];
  $ref?: string;
  $defs?: Record<string, SchemaNode>;
}

/**
 * The schema of the value at `segments` (read from the schema file, on error
 * only), following local `$ref`s and maps' `additionalProperties`; undefined
 * when the schema file cannot be read or the path leaves it.
 */
function schemaAt(contract: ConfigContract, segments: string[]): SchemaNode | undefined {
  let root: SchemaNode;
  try {
    root = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, contract.file), "utf8")) as SchemaNode;
  } catch {
    // Without the schema file the plain message still says what is wrong.
    return undefined;
  }
  const resolve = (node: SchemaNode | undefined) =>
    node?.$ref?.startsWith("#/$defs/") ? root.$defs?.[node.$ref.slice("#/$defs/".length)] : node;
  let node = resolve(root);
  for (const segment of segments) {
    const extra = typeof node?.additionalProperties === "object" ? node.additionalProperties : undefined;
    node = resolve(/^\d+$/.test(segment) ? node?.items : (node?.properties?.[segment] ?? extra));
    if (!node) return undefined;
  }
  return node;
}

/** For an unknown key: the known key it is probably a typo of, as a hint. */
function suggestion(contract: ConfigContract, violation: ContractViolation, key: string): string {
  const parent = violation.path.split("/").slice(1, -1);
  const known = Object.keys(schemaAt(contract, parent)?.properties ?? {});
  const near = closest(key, known);
  return near ? ` (did you mean ${near}?)` : "";
}

function normaliseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normaliseKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        k.replace(/_/g, "-"),
        normaliseKeys(v),
      ]),
    );
  }
  return value;
}

/**
 * The YAML node at a JSON Pointer of the normalised data (keys compared with
 * `_` as `-`): the key itself for an unknown key, else the value; the deepest
 * node found when the path goes on past the document.
 */
function nodeAt(root: Node | null, violation: ContractViolation): Node | null {
  const segments = violation.path
    .split("/")
    .slice(1)
    .filter((s) => s !== "");
  let node = root;
  for (const [i, segment] of segments.entries()) {
    if (isMap(node)) {
      const pair = node.items.find(
        (p) => String((p.key as { value?: unknown } | null)?.value).replace(/_/g, "-") === segment,
      );
      if (!pair) return node;
      const last = i === segments.length - 1;
      if (last && violation.keyword === "additionalProperties") return pair.key as Node;
      node = (pair.value as Node | null) ?? (pair.key as Node);
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)] as Node | undefined;
      if (!item) return node;
      node = item;
    } else {
      return node;
    }
  }
  return node;
}

/**
 * Reads a YAML (or JSON) config file, rewrites `_` to `-` in its keys and
 * validates it. Every failure names the file, and for bad YAML or a value the
 * schema refuses, the line and column: `a2a-server.yml:3:7: port must be <= 65535`.
 */
export function loadConfigFile(
  file: string,
  contract: ConfigContract,
  options: { keys?: "all" | "top" } = {},
): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(
      `Cannot read config file ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const at = (offset: number | undefined): string => {
    if (offset === undefined) return file;
    const pos = lines.linePos(offset);
    return `${file}:${pos.line}:${pos.col}`;
  };
  const syntax = doc.errors[0];
  if (syntax) {
    throw new ConfigError(`${at(syntax.pos[0])}: not valid YAML: ${syntax.message.split("\n")[0]}`);
  }
  let data = doc.toJS() as unknown;
  if (data === null || data === undefined) data = {};
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new ConfigError(`${file}: a config file must contain a mapping of keys to values.`);
  }
  // "top": below the first level, keys are names (providers, models), kept as written.
  const normalised = (
    options.keys === "top"
      ? Object.fromEntries(Object.entries(data as object).map(([k, v]) => [k.replace(/_/g, "-"), v]))
      : normaliseKeys(data)
  ) as Record<string, unknown>;
  if (!contract.validate(normalised)) {
    const details = violations(contract.validate).map((e) => {
      const node = nodeAt(doc.contents, e);
      const name = e.path === "/" ? "" : e.path.slice(1).replace(/\//g, ".");
      // An unknown key as the file spells it, with the known key it is probably a typo of.
      const key = isScalar(node) ? String(node.value) : name;
      const why =
        e.keyword === "additionalProperties"
          ? `unknown key ${key}${suggestion(contract, e, key)}`
          : `${name} ${reason(e, contract)}`;
      return `${at(node?.range?.[0])}: ${why.trim()}`;
    });
    throw new ConfigError(details.join("\n"));
  }
  return normalised;
}
