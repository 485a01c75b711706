// Environment variables with our prefixes that nothing in iac-code reads: a
// start-up warning names each one and, when it is close to one we read, that
// one (IAC_CODE_A2A_PORT: did you mean IACCODE_A2A_PORT?), instead of a
// setting silently ignored.
import { A2A_SETTINGS } from "../a2a/config/settings-table.js";
import { AGUI_SETTINGS } from "../agui/settings.js";
import { envOf } from "../server/settings.js";
import { closest } from "../server/suggest.js";

const PREFIXES = /^(IAC_CODE_|IACCODE_)/;

/** The variables read outside the two settings tables (runtime, A2A client, launcher). */
export const OTHER_ENV_NAMES: readonly string[] = [
  "IAC_CODE_CONFIG_DIR",
  "IAC_CODE_PROVIDER",
  "IAC_CODE_MODEL",
  "IAC_CODE_BASE_URL",
  "IAC_CODE_API_KEY",
  "IAC_CODE_SCRIPT",
  "IAC_CODE_SCRIPT_FILE",
  "IAC_CODE_MODE",
  "IAC_CODE_PIPELINE_NAME",
  "IAC_CODE_MCP_CONFIG",
  "IAC_CODE_ROS_ENDPOINT",
  "IAC_CODE_LOG_LEVEL",
  "IAC_CODE_A2A_SAFE_MODE",
  "IAC_CODE_A2A_TRUST_REQUEST_CWD",
  "IAC_CODE_A2A_PUSH_KEYRING",
  "IAC_CODE_MANAGED_A2A",
  "IAC_CODE_FROM_SOURCE",
  "IACCODE_A2A_CONFIG",
  "IACCODE_A2A_HTTP_TOKEN",
  "IACCODE_A2A_BASIC_USERNAME",
  "IACCODE_A2A_BASIC_PASSWORD",
  "IACCODE_A2A_API_KEY",
  "IACCODE_A2A_API_KEY_HEADER",
  "IAC_CODE_AGUI_CONFIG",
  "IAC_CODE_CHANNEL",
  "IAC_CODE_CONFIG_BACKUP_DIR",
  "IAC_CODE_CONFIG_BACKUP_TMP_DIR",
];

/** Every variable with our prefixes that iac-code reads. */
export function knownEnvNames(): Set<string> {
  const names = new Set(OTHER_ENV_NAMES);
  for (const table of [A2A_SETTINGS, AGUI_SETTINGS]) {
    for (const setting of table.settings) {
      names.add(envOf(table, setting));
      for (const alias of setting.aliases?.env ?? []) names.add(alias);
    }
  }
  return names;
}

/** One warning per set variable with our prefixes that nothing reads. */
export function unknownEnvWarnings(env: NodeJS.ProcessEnv): string[] {
  const known = knownEnvNames();
  return Object.keys(env)
    .filter((name) => PREFIXES.test(name) && !known.has(name) && env[name] !== undefined)
    .sort()
    .map((name) => {
      // The reach is that of the part after the prefix: IAC_CODE_FOO is no typo of IAC_CODE_MODE.
      const near = closest(name, known, name.replace(PREFIXES, "").length);
      return `${name} is set but iac-code reads no such variable${near ? `; did you mean ${near}?` : ""}`;
    });
}
