// Where each value comes from: the command line when given, else the --config
// file, else (auth only) the IACCODE_A2A_* environment, else the default.
// Numbers from the command line are checked here; the file was checked by its
// schema.
import path from "node:path";
import type { A2AClientConfig } from "../../contract/index.js";
import type { CardVerificationOptions } from "../../a2a/signing/index.js";
import { DEFAULT_API_KEY_HEADER, type AuthSettings } from "../../a2a/client/auth.js";
import { parseBindingName, type BindingName } from "../../a2a/client/bindings/binding.js";
import { ClientError, UsageError } from "../../a2a/client/errors.js";
import type { OutputFormat } from "./output.js";

export type ConfigKey = keyof A2AClientConfig;

/** Auth settings read from the environment when neither the flag nor the file sets them. */
const ENV_KEYS: Partial<Record<ConfigKey, string>> = {
  token: "IACCODE_A2A_HTTP_TOKEN",
  basic_username: "IACCODE_A2A_BASIC_USERNAME",
  basic_password: "IACCODE_A2A_BASIC_PASSWORD",
  api_key: "IACCODE_A2A_API_KEY",
  api_key_header: "IACCODE_A2A_API_KEY_HEADER",
};

const optionName = (key: ConfigKey): string => `--${key.replace(/_/g, "-")}`;
const camel = (key: ConfigKey): string => key.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

export const DEFAULT_TIMEOUT_SECONDS = 30;

export class Settings {
  constructor(
    /** Commander's parsed options (camelCase); undefined when not given. */
    private readonly cli: Record<string, unknown>,
    private readonly file: A2AClientConfig,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  private raw(key: ConfigKey): unknown {
    const fromCli = this.cli[camel(key)];
    if (fromCli !== undefined) return fromCli;
    if (this.file[key] !== undefined) return this.file[key];
    const envName = ENV_KEYS[key];
    return envName && this.env[envName] ? this.env[envName] : undefined;
  }

  string(key: ConfigKey): string | undefined {
    const value = this.raw(key);
    return typeof value === "string" && value !== "" ? value : undefined;
  }

  required(key: ConfigKey): string {
    const value = this.string(key);
    if (value === undefined) throw missingValue(key, optionName(key));
    return value;
  }

  flag(key: ConfigKey): boolean | undefined {
    const value = this.raw(key);
    return typeof value === "boolean" ? value : undefined;
  }

  /** An integer (or any number with `fraction`) no smaller than `min`. */
  number(key: ConfigKey, min: number, fraction = false): number | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    const text = typeof value === "number" ? String(value) : typeof value === "string" ? value.trim() : "";
    const number = Number(text);
    if (text === "" || !Number.isFinite(number) || (!fraction && !Number.isInteger(number)) || number < min) {
      const kind = fraction ? "a number" : "an integer";
      throw new UsageError(`${optionName(key)} must be ${kind} of at least ${min} (got '${text}').`);
    }
    return number;
  }

  timeoutMs(): number {
    return Math.round((this.number("timeout", 0, true) ?? DEFAULT_TIMEOUT_SECONDS) * 1000);
  }

  binding(): BindingName | undefined {
    const value = this.string("binding");
    return value === undefined ? undefined : parseBindingName(value);
  }

  output(allowed: OutputFormat[]): OutputFormat {
    const value = this.string("output") ?? allowed[0];
    if (!allowed.includes(value as OutputFormat))
      throw new UsageError(`--output must be ${allowed.join(" or ")}.`);
    return value as OutputFormat;
  }

  auth(): AuthSettings {
    return {
      token: this.string("token"),
      basicUsername: this.string("basic_username"),
      basicPassword: this.string("basic_password"),
      apiKey: this.string("api_key"),
      apiKeyHeader: this.string("api_key_header") ?? DEFAULT_API_KEY_HEADER,
    };
  }

  /** The secrets this run was given, which it never prints (servers may echo them). */
  secrets(): string[] {
    const keys: ConfigKey[] = [
      "token",
      "basic_password",
      "api_key",
      "iac_code_api_key",
      "verify_card_secret",
    ];
    return keys.map((key) => this.string(key)).filter((value): value is string => value !== undefined);
  }

  verification(cwd: string): CardVerificationOptions {
    const file = this.string("verify_card_jwks_file");
    return {
      requireSignature: this.flag("require_card_signature"),
      secret: this.string("verify_card_secret"),
      jwksUrl: this.string("verify_card_jwks_url"),
      jwksFile: file === undefined ? undefined : path.resolve(cwd, file),
    };
  }
}

/** `<name> is required. Provide <--option> or <name> in --config.` (the reference's wording). */
export function missingValue(name: string, option: string, extra = ""): ClientError {
  return new ClientError(`${name} is required. Provide ${option} or ${name} in --config${extra}.`);
}
